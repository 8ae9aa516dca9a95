// The `traffic:` keys, and their checks: alone (check_traffic_config) and against the device's
// endpoints and traffic classes (check_traffic_endpoints).
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "models/traffic/synthetic.h"
#include "models/traffic/traffic_source.h"

namespace fabricsim::traffic {

namespace {

constexpr double kMaxWeight = 1e12;

}  // namespace

void TrafficConfig::visit(config::Visitor& v) {
  v.choice("pattern", pattern, "uniform",
           {"uniform", "permutation", "hotspot", "incast", "all_to_all", "trace", "messages",
            "workload"},
           "Destination pattern, or a workload file: `trace` replays the packet trace trace.file "
           "(packet runs only: a packet trace cannot drive NICs; then only trace.file is used), "
           "`messages` posts the messages of messages.file (NIC runs only, nic.enabled), `workload` "
           "runs the ranks' collectives of the workload: section over the NICs. In NIC "
           "runs the synthetic patterns generate messages of message_size (arrivals: "
           "docs/trace-format.md) instead of packets. Default uniform.");
  v.param("load", load, 0.5, 0.0, 1.0, "",
          "Offered load of every sending endpoint as a fraction of its port's line rate, "
          "[0, 1], default 0.5; 0 = silent, 1 = back to back. Over a real link (link.model not "
          "ideal) it is a fraction of wire time, frame + preamble + gap, while offered_load "
          "counts frame bytes: 64 B frames at load 1 offer 64/84 = 0.76.");
  v.choice("arrival", arrival, "bernoulli", {"bernoulli", "onoff"},
           "Arrival process: bernoulli (geometric idle gaps in units of the packet's "
           "serialisation time, i.e. i.i.d. per slot for fixed sizes) or onoff (geometric "
           "bursts to one destination, geometric off periods). Default bernoulli.");
  v.applies_when("burst_packets", "{arrival}: onoff", [this] { return arrival == "onoff"; });
  v.param("burst_packets", burst_packets, 8.0, 1.0, 1e6, "packets",
          "onoff: mean packets per burst (geometric, >= 1), [1, 1e6], default 8.");
  v.param("size", size, Bytes(64), Bytes(1), Bytes(kMaxPacketBytes),
          "Fixed packet size (frame without preamble/IFG) when `sizes` is empty, "
          "[1B, 65535B], default 64B.");
  v.list("sizes", sizes, {}, 1, static_cast<double>(kMaxPacketBytes), "bytes",
         "Packet size distribution: plain numbers of bytes, e.g. [64, 1500, 9000] (integers in "
         "[1, 65535]); overrides `size` when non-empty; needs `size_weights`. Default empty.");
  v.list("size_weights", size_weights, {}, 0, kMaxWeight, "",
         "Relative weights of `sizes` (required with `sizes`, same length, each > 0). "
         "Default empty.");
  // A trace, a message file or a workload gives each packet's or message's class itself.
  v.applies_when(
      "tc_weights", "{pattern}: uniform, permutation, hotspot, incast or all_to_all",
      [this] { return pattern != "trace" && pattern != "messages" && pattern != "workload"; });
  v.list("tc_weights", tc_weights, {}, 0, kMaxWeight, "",
         "Relative share of each traffic class, index = tc (each >= 0, sum > 0, at most the "
         "device's class count). Default empty = all packets tc 0. The synthetic patterns only: a "
         "trace, a message file or a workload names each class itself.");
  v.param("ect", ect, false,
          "Packets are ECN-capable (ECT(0)), as RoCEv2 traffic under DCQCN is: switches may mark "
          "them CE instead of dropping or pausing (flow_control.ecn).");
  v.param("self", self, true, "uniform/hotspot: a source may send to its own port. Default true.");
  // A pattern's own section acts with that pattern only.
  for (const char* p : {"hotspot", "incast", "trace", "messages"})
    v.applies_when(p, "{pattern}: " + std::string(p), [this, p] { return pattern == p; });
  v.begin_section("hotspot", "pattern hotspot: one hot destination");
  v.param("port", hotspot_port, 0, 0, 65535, "",
          "The hot destination endpoint, [0, endpoints), default 0.");
  v.param("fraction", hotspot_fraction, 0.5, 0.0, 1.0, "",
          "Probability that a packet goes to the hot port, else uniform over all (so the hot "
          "port gets fraction + (1 - fraction) / N), [0, 1], default 0.5.");
  v.end_section();
  v.begin_section("incast", "pattern incast: many senders, one receiver");
  v.param("target", incast_target, 0, 0, 65535, "",
          "The receiving endpoint, [0, endpoints), default 0.");
  v.param("sources", incast_sources, 0, 0, 65535, "",
          "Number of senders: the lowest-numbered endpoints other than the target, "
          "[0, endpoints - 1], default 0 = all others.");
  v.end_section();
  v.begin_section("trace", "pattern trace: replay a packet trace (format: traces/README.md)");
  v.param("file", trace_file, "",
          "Trace path, relative to the config file's folder. Default empty; required for "
          "pattern trace.");
  v.end_section();
  v.param("message_size", message_size, Bytes(64 * 1024), Bytes(1), Bytes(kMaxMessageBytes),
          "NIC runs (nic.enabled): the size of each generated message (synthetic patterns), "
          "[1B, 2GiB], default 64KiB. Not used by pattern messages (each line has its own).");
  v.choice("message_verb", message_verb, "write", {"send", "write", "write_imm", "read"},
           "NIC runs (nic.enabled): the RDMA verb of each generated message (synthetic "
           "patterns): send, write, write_imm (write with immediate) or read. Default write.");
  v.begin_section("messages",
                  "pattern messages: a message workload for NIC runs (format: "
                  "docs/trace-format.md)");
  v.param("file", messages_file, "",
          "Message workload path, relative to the config file's folder; one message a line "
          "(start, source, destination, bytes, verb, optional qp and tc). Default empty; "
          "required for pattern messages, which only drives NICs (nic.enabled).");
  v.end_section();
}

void check_traffic_config(const TrafficConfig& c, const FailFn& fail) {
  static const char* const kPatterns[] = {"uniform",    "permutation", "hotspot", "incast",
                                          "all_to_all", "trace",       "messages",
                                          "workload"};
  bool known = false;
  for (const char* p : kPatterns) known = known || c.pattern == p;
  if (!known) fail("traffic.pattern", fmt::format("unknown pattern '{}'", c.pattern));
  if (c.arrival != "bernoulli" && c.arrival != "onoff")
    fail("traffic.arrival", fmt::format("unknown arrival process '{}'", c.arrival));
  if (!(c.load >= 0 && c.load <= 1))
    fail("traffic.load", fmt::format("{} is out of range [0, 1]", c.load));
  if (!(c.burst_packets >= 1 && c.burst_packets <= 1e6))
    fail("traffic.burst_packets", fmt::format("{} is out of range [1, 1e6]", c.burst_packets));
  if (c.size.count() < 1 || c.size.count() > static_cast<uint64_t>(kMaxPacketBytes))
    fail("traffic.size", fmt::format("{} is out of range [1B, 65535B]", c.size.count()));

  for (double s : c.sizes) {
    if (!(s >= 1 && s <= kMaxPacketBytes && s == std::floor(s)))
      fail("traffic.sizes", fmt::format("{} is not a whole number of bytes in [1, 65535]", s));
  }
  if (c.sizes.empty() && !c.size_weights.empty())
    fail("traffic.size_weights", "given without traffic.sizes");
  if (!c.sizes.empty() && c.size_weights.size() != c.sizes.size())
    fail("traffic.size_weights", fmt::format("has {} entries but traffic.sizes has {}",
                                             c.size_weights.size(), c.sizes.size()));
  for (double w : c.size_weights) {
    if (!(w > 0 && std::isfinite(w)))
      fail("traffic.size_weights", fmt::format("weight {} must be > 0", w));
  }

  double tc_sum = 0;
  for (double w : c.tc_weights) {
    if (!(w >= 0 && std::isfinite(w)))
      fail("traffic.tc_weights", fmt::format("weight {} must be >= 0", w));
    tc_sum += w;
  }
  if (!c.tc_weights.empty() && !(tc_sum > 0))
    fail("traffic.tc_weights", "all weights are 0 (leave the list empty for tc 0 only)");

  if (!(c.hotspot_fraction >= 0 && c.hotspot_fraction <= 1))
    fail("traffic.hotspot.fraction", fmt::format("{} is out of range [0, 1]", c.hotspot_fraction));
  if (c.hotspot_port < 0)
    fail("traffic.hotspot.port", fmt::format("{} must be >= 0", c.hotspot_port));
  if (c.incast_target < 0)
    fail("traffic.incast.target", fmt::format("{} must be >= 0", c.incast_target));
  if (c.incast_sources < 0)
    fail("traffic.incast.sources", fmt::format("{} must be >= 0", c.incast_sources));
  if (c.pattern == "trace" && c.trace_file.empty())
    fail("traffic.trace.file", "pattern trace needs a trace file");
  if (c.message_size.count() < 1 || c.message_size.count() > kMaxMessageBytes)
    fail("traffic.message_size",
         fmt::format("{} is out of range [1B, 2GiB]", c.message_size.str()));
  if (c.message_verb != "send" && c.message_verb != "write" && c.message_verb != "write_imm" &&
      c.message_verb != "read")
    fail(
        "traffic.message_verb",
        fmt::format("unknown verb '{}' (expected send, write, write_imm or read)", c.message_verb));
  if (c.pattern == "messages" && c.messages_file.empty())
    fail("traffic.messages.file", "pattern messages needs a message workload file");
}

void check_traffic_endpoints(const TrafficConfig& cfg, int64_t endpoints, int64_t tc_count,
                             const FailFn& fail) {
  if (endpoints < 1) fail("traffic", fmt::format("need at least 1 endpoint, got {}", endpoints));
  if (tc_count < 1) fail("traffic", fmt::format("need at least 1 traffic class, got {}", tc_count));
  // The file's lines are checked against both when read.
  if (cfg.pattern == "trace" || cfg.pattern == "messages" || cfg.pattern == "workload") return;
  if (cfg.tc_weights.size() > static_cast<size_t>(tc_count))
    fail("traffic.tc_weights",
         fmt::format("{} weights given but the device has {} traffic class(es) "
                     "(switch.traffic_classes)",
                     cfg.tc_weights.size(), tc_count));
  if (cfg.pattern == "hotspot" && cfg.hotspot_port >= endpoints)
    fail("traffic.hotspot.port", fmt::format("{} is out of range [0, {}) for {} endpoints",
                                             cfg.hotspot_port, endpoints, endpoints));
  // With one endpoint these would offer nothing: a run of zero packets that looks like success.
  if ((cfg.pattern == "incast" || cfg.pattern == "all_to_all") && endpoints < 2)
    fail("traffic.pattern",
         fmt::format("{} needs at least 2 endpoints (a source and another destination), the "
                     "topology has {}",
                     cfg.pattern, endpoints));
  if (cfg.pattern == "incast") {
    if (cfg.incast_target >= endpoints)
      fail("traffic.incast.target", fmt::format("{} is out of range [0, {}) for {} endpoints",
                                                cfg.incast_target, endpoints, endpoints));
    if (cfg.incast_sources > endpoints - 1)
      fail("traffic.incast.sources",
           fmt::format("{} exceeds the {} endpoints other than the target", cfg.incast_sources,
                       endpoints - 1));
  }
  if ((cfg.pattern == "uniform" || cfg.pattern == "hotspot") && !cfg.self && endpoints == 1)
    fail("traffic.self", "false leaves the only endpoint no destination");
}

void check_packet_limit(const TrafficConfig& cfg, const PacketLimit& limit, const FailFn& fail) {
  if (cfg.pattern == "trace") return;  // each line is checked when read
  // Messages are not packets (the NIC segments them); a packet run refuses the pattern.
  if (cfg.pattern == "messages" || cfg.pattern == "workload") return;
  const bool dist = !cfg.sizes.empty();
  double largest = static_cast<double>(cfg.size.count());
  if (dist) largest = *std::max_element(cfg.sizes.begin(), cfg.sizes.end());
  if (largest > static_cast<double>(limit.bytes))
    fail(dist ? "traffic.sizes" : "traffic.size",
         fmt::format("a {} B packet is larger than the {} B that {} can hold", largest, limit.bytes,
                     limit.key));
}

void TrafficConfig::validate(const config::Checker& c) const {
  check_traffic_config(
      *this, [&c](const std::string& key, const std::string& message) { c.fail(key, message); });
}

}  // namespace fabricsim::traffic
