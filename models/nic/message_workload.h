// The message workload of NIC runs: the RDMA messages (not packets) that applications post, as
// one pull stream in time order.
//
// Two kinds of source, both made by make_messages():
//   - a workload file (traffic.pattern messages, traffic.messages.file), one message per line:
//     `start src dst bytes verb [qp=N] [tc=N]`; the format is specified in docs/trace-format.md.
//     The file is checked whole on open (one streaming pass that also counts its messages for
//     total()), so a bad line fails the run before it starts with InputError "FILE:LINE:
//     problem"; it is then read a second time, lazily, line by line: memory does not grow with
//     the file's length.
//   - generators for today's synthetic patterns (uniform, permutation, hotspot, incast,
//     all_to_all), every message traffic.message_size bytes with verb traffic.message_verb. Each
//     host draws from its own stream Rng::derive(seed, "messages.src<e>").
//       * uniform, permutation, hotspot, incast: each sending host posts a Poisson stream, gaps
//         exponential with mean message_size * 8 / (load * line_rate), so its offered load is
//         `load` of line rate in message bytes. The first message is one such gap after time 0.
//         Destinations as the packet generators choose them (models/traffic/synthetic.h):
//         uniform over the hosts (over the others when traffic.self is false); permutation the
//         fixed derangement random_derangement(hosts, seed), the same pairs as a packet run of
//         that seed; hotspot the hot host with probability hotspot.fraction, else uniform;
//         incast only the incast.sources lowest hosts other than incast.target (0 = all
//         others), all to the target.
//       * all_to_all: rounds r = 0, 1, ... starting at round(r * P) fs, P = (hosts - 1) *
//         message_size * 8 / (load * line_rate) (so each host's offered load is `load` too). At
//         a round's start every host posts one message to every other host, in the order src,
//         then dst = src + 1, src + 2, ... (mod hosts): each host begins with a different
//         destination instead of all with host 0.
//     Per message: tc drawn from traffic.tc_weights as packets draw theirs (one class or none:
//     tc 0); qp round-robin over [0, qps_per_pair): a host's k-th message uses qp k mod
//     qps_per_pair, which for the one-destination patterns (permutation, incast) is
//     round-robin per pair; all_to_all uses qp r mod qps_per_pair in round r, which is too;
//     under uniform and hotspot a pair's messages spread over the QPs without strict rotation
//     (per-pair counters would cost hosts^2 memory).
//     Draws per message, from the sending host's stream: (Poisson patterns) gap, tc, then for
//     uniform/hotspot the destination; (all_to_all) tc.
// Only messages that start before `until` are returned (a file's later lines are still checked);
// with until = Time::max() the generators are endless and a file is returned whole. load 0:
// no messages at all.
//
// Order: non-decreasing start, ties to the lower src (generators; a file keeps its own order
// among equal starts); ids 0, 1, 2, ... in the order returned.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "models/common/units.h"
#include "models/traffic/traffic_source.h"

namespace fabricsim::nic {

enum class Verb : uint8_t { kSend, kWrite, kWriteImm, kRead };
const char* verb_name(Verb v);  // "send", "write", "write_imm", "read"
// The verb that verb_name() spells `s`; false if there is none.
bool parse_verb(const std::string& s, Verb& v);

struct Message {
  uint64_t id = 0;  // 0, 1, 2, ... in the order next() returns them
  Time start;       // when the application posts it
  int32_t src = 0, dst = 0;
  uint64_t bytes = 0;
  Verb verb = Verb::kWrite;
  int32_t qp = 0;  // which connection between src and dst (0 .. qps_per_pair-1)
  int32_t tc = 0;  // traffic class
};

class MessageSource {
 public:
  virtual ~MessageSource() = default;
  // The next message in non-decreasing start order; false when exhausted.
  virtual bool next(Message& m) = 0;
  // A finite workload (a file, or all_to_all's rounds when `until` is finite): its message
  // count, all of which next() returns; 0 when endless.
  virtual uint64_t total() const { return 0; }
};

struct MessageLimits {
  int hosts = 0;
  int qps_per_pair = 1;
  int traffic_classes = 1;
  uint64_t max_bytes = uint64_t{1} << 31;  // largest message (IBA's, 2^31 B: synthetic.h)
};

// `line_rate`: each host's link rate (the generators' load is a fraction of it); `seed`: the
// run seed; `base_dir`: the folder that a relative messages.file resolves against; `until`: no
// message starts at or after it. Throws InputError naming the file and line, or the key
// (traffic.*), for bad input; pattern trace (a packet trace) is refused.
std::unique_ptr<MessageSource> make_messages(const traffic::TrafficConfig& cfg,
                                             const MessageLimits& lim, BitRate line_rate,
                                             uint64_t seed, const std::string& base_dir,
                                             Time until);

}  // namespace fabricsim::nic
