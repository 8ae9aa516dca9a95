// Synthetic traffic generators (every pattern except `trace`).
//
// Timing (per endpoint e, with its own stream Rng::derive(seed, "traffic.src<e>")). ser(S) is
// port_rate.serialization(S); p = traffic.load.
//   - An endpoint never starts a packet before its previous one is fully serialised, so no endpoint
//     exceeds line rate.
//   - bernoulli: after a packet of size S ends, the endpoint idles k * ser(S), k ~ geometric(p)
//     (failures before the first success, k >= 0); the first packet starts at k0 * ser(S0). Each
//     packet of size S therefore occupies ser(S) / p of wire time on average, i.e. offered load is
//     exactly p. With a fixed size, starts fall on slot boundaries n * ser(S) from t = 0 and every
//     slot carries a packet independently with probability p (the Bernoulli i.i.d. arrivals of the
//     input-queued switch literature).
//   - onoff: alternating on and off periods. An on period is L = 1 + geometric(1 / B) packets
//     (mean B = traffic.burst_packets) sent back to back, all to one destination drawn at the start
//     of the burst (bursty traffic as in McKeown 1999). The off period after a burst whose last
//     packet has size S is k * ser(S), k ~ geometric(q) with
//         q = p / (p + B (1 - p)),   so E[k] = (1 - q) / q = B (1 - p) / p,
//     i.e. mean off time = mean on time * (1 - p) / p and the mean load is exactly p. The first
//     burst is preceded by such an off period. With B = 1 this is the bernoulli process. Fixed
//     sizes keep the slot alignment.
//   - load 0: the endpoint never sends; load 1: back to back. An endpoint stops sending when its
//     next packet would end beyond Time::max() (~9223 s) or its idle period's success probability
//     (p, or q) is below 1e-17 (mean idle time far beyond that horizon).
//
// Destinations:
//   uniform     uniform over all endpoints; over the others when traffic.self is false.
//   permutation a fixed derangement (no endpoint sends to itself when N > 1), drawn once, uniformly
//               among derangements, from Rng::derive(seed, "traffic.permutation").
//   hotspot     with probability hotspot.fraction the hot port, else uniform as above (Pfister and
//               Norton 1985), so the hot port receives fraction + (1 - fraction) / N of each
//               source's packets (/ (N - 1) when self is false). A source that is itself the hot
//               port with self false sends uniformly to the others.
//   incast      only the incast.sources lowest-numbered endpoints other than incast.target send
//               (0 = all others), all to the target.
//   all_to_all  each source sends one packet to every other endpoint in turn, starting at src + 1
//               (mod N); the cycle advances per packet, also within onoff bursts. N = 1: no
//               traffic.
// Sizes: traffic.size, or traffic.sizes drawn with traffic.size_weights. TC: drawn from
// traffic.tc_weights (index = tc), else 0.
//
// Merging: a StartCalendar holds each active endpoint's next packet keyed by (inject_time, src),
// so packets come out in non-decreasing time, ties to the lower src; ids are 0, 1, 2, ... in output
// order. No allocation after construction. next() returns false only if no endpoint sends at all.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/common/rng.h"
#include "models/traffic/start_calendar.h"
#include "models/traffic/traffic_source.h"

namespace fabricsim::traffic {

// Largest packet (traffic.size, traffic.sizes, trace lines): a 16-bit length, ample for jumbo
// frames.
constexpr int64_t kMaxPacketBytes = 65535;
// Largest message (traffic.message_size; NIC runs): 2 GiB, IBA's largest message [R] (and a
// READ's PSNs within half the 24-bit space at MTU 256). Posting costs the same at any size.
constexpr uint64_t kMaxMessageBytes = uint64_t{1} << 31;

// The checks of TrafficConfig that need no device parameters, shared by TrafficConfig::validate
// (reporting through a config::Checker) and make_traffic (configs built in code). `fail(key,
// message)` must throw; `key` is the dotted path, e.g. "traffic.size_weights".
using FailFn = std::function<void(const std::string& key, const std::string& message)>;
void check_traffic_config(const TrafficConfig& cfg, const FailFn& fail);
// The checks that need the device: `endpoints` hosts and `tc_count` traffic classes. Shared by
// RunConfig::validate (so that `fabricsim check` finds what `run` would) and make_traffic.
void check_traffic_endpoints(const TrafficConfig& cfg, int64_t endpoints, int64_t tc_count,
                             const FailFn& fail);
// Every packet size the generator can draw fits in `limit` (a larger one could never be stored
// or sent: every one dropped, or a credit deadlock).
void check_packet_limit(const TrafficConfig& cfg, const PacketLimit& limit, const FailFn& fail);

// Pattern permutation's destinations (index = source): a derangement (no endpoint sends to
// itself when endpoints > 1) drawn uniformly among derangements from
// Rng::derive(seed, "traffic.permutation"). The packet and the message generators share it, so
// a seed gives both the same pairs.
std::vector<int32_t> random_derangement(int endpoints, uint64_t seed);

// Draws index i with probability w[i] / sum(w) (w[i] >= 0, sum > 0) from one uniform().
class WeightedChoice {
 public:
  WeightedChoice() = default;
  explicit WeightedChoice(const std::vector<double>& weights);
  size_t size() const { return cumulative_.size(); }
  size_t draw(Rng& rng) const;

 private:
  std::vector<double> cumulative_;
  size_t last_positive_ = 0;
};

class SyntheticSource : public TrafficSource {
 public:
  // `cfg` must have passed check_traffic_config and check_traffic_endpoints.
  // Packets of one source start at least a wire time apart: the frame, padded to the minimum,
  // plus `overhead`'s preamble and gap at `port_rate` (traffic.load is a fraction of wire time).
  // `slowdown[e]` (breakout): endpoint e's link runs at port_rate / slowdown[e] (a whole
  // number), so its packets are that much further apart; empty = all at port_rate.
  SyntheticSource(const TrafficConfig& cfg, int endpoints, BitRate port_rate, uint64_t seed,
                  FrameOverhead overhead = {}, const std::vector<uint32_t>& slowdown = {});
  bool next(Packet& p) override;
  size_t next_batch(Packet* out, size_t max) override;

  // The destination of every source under `permutation` (index = src); empty for other patterns.
  const std::vector<int32_t>& permutation() const { return perm_; }

 private:
  enum class Pattern { kUniform, kPermutation, kHotspot, kIncast, kAllToAll };

  // One cache line per endpoint; whether it sends is the return value of first_packet/advance.
  struct alignas(64) Endpoint {
    Rng rng;
    Time start;               // pending packet: first bit on the wire
    uint32_t burst_left = 0;  // onoff: packets of the current burst not yet emitted, incl. pending
    uint32_t size_idx = 0;    // pending packet's size: size_bytes_[size_idx]
    int32_t dst = 0;          // pending (onoff: current burst's) destination
    int32_t tc = 0;           // pending packet's traffic class
    int32_t cursor = 0;       // all_to_all: the next destination
    int32_t skip = 0;         // uniform draws >= skip move up by one: src if !self, else N
    int64_t slowdown = 1;     // the link's rate is port_rate / slowdown (breakout)
  };

  int32_t draw_dst(Endpoint& ep, int32_t src, uint32_t spare);
  int32_t uniform_dst(Endpoint& ep, uint32_t spare);
  uint32_t burst_length(Rng& rng) const;
  void draw_attributes(Endpoint& ep, int32_t src, bool new_dst, uint32_t spare);
  bool first_packet(Endpoint& ep, int32_t src);
  bool advance(Endpoint& ep, int32_t src);  // the pending packet was emitted: schedule the next
  bool refill();
  template <bool kUniform>
  bool pop_simple(Packet*& out, uint64_t& id);
  bool schedule_after(Endpoint& ep, int64_t from_fs, uint64_t idle_units, int64_t unit_fs,
                      int64_t last_start_fs);

  int endpoints_;
  Pattern pattern_ = Pattern::kUniform;
  bool onoff_;
  bool simple_ = false;     // bernoulli, one size, tc 0, uniform or fixed destinations: pop_simple
  bool gap_never_ = false;  // idle-gap success probability below kMinGeometricP: nobody sends
  bool draw_tc_;            // more than one tc weight
  GeometricSampler gap_;    // idle gap in packet times, success probability load (onoff: q)
  GeometricSampler burst_;  // onoff: burst length - 1, success probability 1 / burst_packets
  // Destination draws: uniform over dst_range_ values, skipping src when !self_ (Endpoint::skip).
  bool self_;
  uint32_t dst_range_;
  // Lemire's rejection bound for uniform destinations from the gap draw's spare bits (2^11 when
  // they are not used).
  uint32_t spare_reject_ = 0;
  uint64_t hot_threshold_;  // Rng::bernoulli_threshold(hotspot.fraction)
  int32_t hot_port_;
  int32_t incast_target_;
  // Packet sizes (one entry for a fixed size) and their serialisation times.
  std::vector<uint64_t> size_bytes_;
  std::vector<int64_t> size_fs_;
  int64_t size0_fs_ = 0;             // size_fs_[0] (the only size for simple_)
  int64_t size0_last_start_fs_ = 0;  // the latest start of such a frame that ends by Time::max()
  WeightedChoice size_choice_;
  WeightedChoice tc_choice_;
  std::vector<int32_t> perm_;
  std::vector<Endpoint> eps_;
  StartCalendar calendar_;     // pending starts of the active endpoints, in (time, src) order
  std::vector<Packet> ready_;  // the packets of one calendar bucket, in output order
  const Packet* ready_pos_ = nullptr;  // next to return
  const Packet* ready_end_ = nullptr;
  uint64_t next_id_ = 0;  // of the next packet written to ready_
};

}  // namespace fabricsim::traffic
