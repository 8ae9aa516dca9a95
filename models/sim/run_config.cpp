#include "models/sim/run_config.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "models/link/credit_unit.h"
#include "models/topology/registry.h"
#include "models/topology/topology.h"
#include "models/topology/traffic_routes.h"
#include "models/traffic/synthetic.h"

namespace fabricsim::sim {

void SimConfig::visit(config::Visitor& v) {
  v.param("duration", duration, Time::us(20), Time::ns(1), Time::us(1000000000),
          "Simulated time, warm-up included; traffic keeps flowing while measured packets drain.");
  v.param("warmup", warmup, Time::us(2), Time(), Time::us(1000000000),
          "Initial period excluded from every statistic.");
  v.param("seed", seed, 1, 0, INT64_MAX, "",
          "Run seed; every block derives its own random stream from it and its name.");
  v.param("drain_limit", drain_limit, Time::us(100), Time(), Time::us(1000000000),
          "Longest extra time to wait, after duration, for packets injected in the measurement "
          "window to leave the switch; those still inside are reported as in flight.");
  v.param("traffic_thread", traffic_thread, true,
          "Generate the offered traffic ahead of the simulation, and record what the hosts "
          "receive, on helper threads (a speed setting: results are identical either way). "
          "Used only when the process may use two or more CPUs (its affinity mask, capped by a "
          "cgroup CPU quota); perf.json says whether it was. Runs that share the CPUs (a sweep "
          "with one job per CPU) are faster without it.");
  v.param("stall_limit", stall_limit, Time::us(20), Time(), Time::us(1000000000),
          "Liveness check: the run fails (exit 3) if a switch port with a frame to send sends "
          "nothing for longer than this while flow control lets it, or a frame stays on the "
          "wire longer than this plus ports x its wire time. Sampled every quarter of it; "
          "keep it above ports x the largest frame's wire time. 0 disables the check.");
  v.param("lookahead", lookahead, true,
          "Let each switch run a window of cycles at a time ahead of the others, as far as its "
          "links' lookahead allows (one link latency, less what frames already on a "
          "switch-to-switch wire need). A speed setting for fabrics: results are identical either "
          "way (docs/performance.md, 'Run-ahead').");
  v.param("host_windows", host_windows, true,
          "With run-ahead, let the hosts and their NICs run one host after another through a "
          "window of the links' lookahead, once the workload has posted all its messages (a "
          "host's state then stays in the CPU's caches across its events). A speed setting: "
          "results are identical either way (docs/architecture.md, 'Host windows').");
  v.param("threads", threads, 1, 1, kMaxThreads, "threads",
          "Threads that run the fabric, 1 to 64: with P > 1 the switches are split in P sides "
          "of consecutive switches by a rough cost, the main thread running the hosts and NICs "
          "and the first side, a worker thread each of the others, all at once in the "
          "switches' windows of run-ahead (a speed setting: results are identical for every "
          "P, docs/architecture.md 'Threads'). More than the switches + 1 run as that many (a "
          "warning). Worth it only with a CPU per thread. P > 1 needs run-ahead (sim.lookahead, "
          "links with latency: not link.model ideal) and every switch on one clock.");
  v.list("partition", partition, {}, 1, 1 << 20, "switches",
         "The split of sim.threads (or of MPI's ranks) by hand: how many consecutive switches "
         "each side runs, the main thread's (rank 0's) first; as many entries as sides, summing "
         "to the fabric's switches. Empty: split by a rough cost (docs/architecture.md "
         "'Threads'). Results are the same for every split.");
  v.choice("rebalance", rebalance, "auto", {"auto", "true", "false"},
           "With sim.threads > 1 (true), each window's switches go to whichever thread is "
           "free: the workers take them one by one as the window starts, and the main thread "
           "takes what is left once it has run the hosts, so that the threads' work evens out "
           "within every window whatever the split. false: each thread runs its own side's "
           "switches (sim.partition), which keeps a switch's state in one core's caches. auto: "
           "true for NIC hosts on packet-model switches (the hosts' work varies by window; "
           "measured on the 1,024-rank all-to-all), false otherwise (a cycle-model fat tree of "
           "generator hosts took 1.96x the CPU per hop of one thread taking switches, for no gain "
           "in wall time). Not under MPI. A speed setting: "
           "results are the same either way (docs/architecture.md 'Threads').");
}

void HostSection::visit(config::Visitor& v) {
  // 8192: the deepest transmit ring the Linux mlx5 driver of ConnectX NICs accepts per queue
  // (ethtool -G tx; 1024 by default), so a back-pressured host holds what a NIC can, and a
  // 63-to-1 incast under PFC stays within ~25 MB of queued packets however long it runs.
  v.param("queue_limit", queue_limit, 8192, 0, INT32_MAX, "packets",
          "Packets each of a host's per-class transmit queues holds, [0, 2^31-1], default 8192 "
          "(the deepest transmit ring of a ConnectX NIC's Linux driver, 1024 by default); 0 = "
          "unbounded (memory then grows with simulated time under back-pressure). A synthetic "
          "packet that finds its queue full is refused (offered, never injected: "
          "host_queues.refused_packets); a trace's packet waits in the trace file instead, read "
          "as the queue drains (nothing of a trace is lost).");
}

void StatsConfig::visit(config::Visitor& v) {
  v.param("occupancy_interval", occupancy_interval, Time::ns(100), Time(), Time::us(1000000),
          "Sampling interval of the buffer occupancy time series (occupancy.csv); 0 disables it.");
  v.param("flow_events", flow_events, 100000, 0, 100000000, "records",
          "Most records kept in flow_events.csv (XOFF-to-XON, paused and credit-stall spans, "
          "drops, for scripts/timeline.py): past it the first ones by start time are kept and "
          "the rest only counted (summary.json flow_events.not_recorded). 0 records none. 32 B "
          "each in memory (twice as many at most while the run goes).");
  v.param("histogram_bits", histogram_bits, 10, 4, 16, "bits",
          "Latency histogram resolution: percentiles are within 2^-bits relative error "
          "(the per-port ones in ports.csv keep at most 5 bits: 3.2%).");
  v.choice(
      "per_port_counters", per_port_counters, "auto", {"auto", "all", "none"},
      "Per-port statistics in summary.json's `counters` (each switch port's, each host's, each "
      "lossy link's; per-switch counters are always there): all, none, or auto = "
      "all when the fabric has at most " +
          std::to_string(kPerPortCountersAutoPorts) +
          " switch ports (switches x switch.ports), none beyond (ports.csv and links.csv "
          "still have every port). See docs/results.md.");
}

void SwitchKind::visit(config::Visitor& v) {
  v.param("name", name, "",
          "The kind's name (letters, digits, _ and -), what topology.kinds.<tier> names and "
          "summary.json's switches[].kind states; 'switch' is the switch: chip's.");
  sw.visit(v);
  config::visit_section(v, "box",
                        "A multi-chip box (box.leaves > 0): the topology places it like one "
                        "switch of box.front_ports ports, built of leaf and spine chips wired "
                        "as a 2-tier Clos inside (docs/boxes.md).",
                        box);
}

// What keys of one section need of another (a section's own conditions are in its visit()).
void RunConfig::declare_conditions(config::Visitor& v) {
  v.applies_when("nic", "{nic.enabled}: true", [this] { return nic.enabled; });
  v.applies_when("workload", "{traffic.pattern}: workload",
                 [this] { return traffic.pattern == "workload"; });
  for (const char* key : {"scale_up.gpus", "scale_up.bandwidth", "scale_up.latency"})
    v.applies_when(key, "{scale_up.preset} other than none, or {scale_up.gpus} > 0",
                   [this] { return scale_up.on(); });
  // Only ECN-capable packets are marked: a NIC's with a congestion control that reads ECN, or
  // traffic.ect.
  v.applies_when("flow_control.ecn",
                 "packets are ECN-capable ({traffic.ect}: true, or {nic.enabled}: true with "
                 "{nic.cc} dcqcn or timely)",
                 [this] { return nic.enabled ? nic.data_ect(traffic.ect) : traffic.ect; });
  // Only packets with an INT header are stamped: an HPCC NIC's.
  v.applies_when("switch.int_telemetry", "{nic.enabled}: true with {nic.cc}: hpcc",
                 [this] { return nic.enabled && nic.telemetry(); });
  v.applies_when("link.ib_fc_packet_bytes",
                 "{flow_control.mode}: credit with {flow_control.credit.protocol}: ib",
                 [this] { return flow_control.credit_mode() && !flow_control.credit.cbfc(); });
  // NICs carry messages (their size and verb); packet sources draw packet sizes and arrivals.
  for (const char* key : {"traffic.message_size", "traffic.message_verb"})
    v.applies_when(key, "{nic.enabled}: true", [this] { return nic.enabled; });
  for (const char* key :
       {"traffic.size", "traffic.sizes", "traffic.size_weights", "traffic.arrival"})
    v.applies_when(key, "{nic.enabled}: false", [this] { return !nic.enabled; });
  // A workload file, or the collective of the workload: section.
  v.applies_when("workload.file", "{workload.format}: text or chakra",
                 [this] { return workload.format != "collective"; });
  for (const char* key :
       {"workload.bytes", "workload.sweep_to", "workload.sweep_factor", "workload.group_size",
        "workload.group_stride", "workload.root", "workload.iterations", "workload.compute"})
    v.applies_when(key, "{workload.format}: collective",
                   [this] { return workload.format == "collective"; });
  v.applies_when("workload.sweep_factor", "{workload.sweep_to} > 0",
                 [this] { return workload.sweep_to.count() > 0; });
}

void RunConfig::visit(config::Visitor& v) {
  const auto section = [&v](const char* name, const char* doc, config::Configurable& part) {
    config::visit_section(v, name, doc, part);
  };
  declare_conditions(v);
  section("sim", "Run control.", sim);
  section("switch",
          "The switch chip (every switch of the topology is one of these, unless its tier is a "
          "switch kind: topology.kinds).",
          sw);
  // After `switch`: a kind starts from the switch: values just loaded.
  config::ListOf<SwitchKind> kinds(switch_kinds, [this] {
    SwitchKind k;
    k.sw = sw;
    return k;
  });
  v.section_list("switch_kinds", kinds,
                 "Other switch chips, by name (e.g. a spine of more ports than the leaves). An "
                 "element has a name and any switch: key; every key it leaves out takes the "
                 "switch: value of the run (the defaults listed here are switch:'s own), so a "
                 "kind states only what differs. topology.kinds assigns kinds "
                 "to the topology's tiers of switches. Every chip keeps switch.traffic_classes, "
                 "and linked ports must run at one port_speed.");
  section("topology", "The switches, where the hosts attach and the links between switches.",
          topology);
  section("link", "Every link (host-switch and switch-switch): PHY, framing, cable.", link);
  section("flow_control", "Link-level flow control on every link, and ECN marking.", flow_control);
  section("traffic", "Traffic offered by the hosts (numbered across the whole topology).", traffic);
  section("host", "The hosts' NICs (every host alike).", host);
  section("nic",
          "An RDMA NIC at every host (models/nic/nic.h): messages over reliable connections "
          "instead of open-loop packets.",
          nic);
  section("workload",
          "The ranks' collectives over the NICs (traffic.pattern workload; "
          "models/workload/): rank r on host r.",
          workload);
  section("scale_up",
          "Scale-up domains (NVLink/NVSwitch class; models/workload/scale_up.h): each server's "
          "(or rack's) GPUs on a non-blocking switch of their own, beside their NICs; a "
          "workload message between two GPUs of one domain takes it instead of the NICs. Off by "
          "default.",
          scale_up);
  section("stats", "Statistics collection.", stats);
}

size_t RunConfig::tiers() const {
  return topology.kind_info().tiers.size();
}

int RunConfig::tier_box_index(size_t tier) const {
  const std::string name = topology.tier_kind(tier);
  if (name.empty()) return -1;
  for (size_t i = 0; i < switch_kinds.size(); ++i)
    if (switch_kinds[i].name == name)
      return switch_kinds[i].box.is_box() ? static_cast<int>(i) : -1;
  return -1;
}

int RunConfig::box_chip_index(int kind_index) const {
  const std::string& chip = switch_kinds[static_cast<size_t>(kind_index)].box.chip;
  if (chip.empty()) return kind_index;
  if (chip == "switch") return -1;
  for (size_t i = 0; i < switch_kinds.size(); ++i)
    if (switch_kinds[i].name == chip && !switch_kinds[i].box.is_box()) return static_cast<int>(i);
  return -2;  // refused by validate()
}

int RunConfig::tier_kind_index(size_t tier) const {
  const std::string name = topology.tier_kind(tier);
  if (name.empty()) return -1;
  for (size_t i = 0; i < switch_kinds.size(); ++i)
    if (switch_kinds[i].name == name) {
      if (!switch_kinds[i].box.is_box()) return static_cast<int>(i);
      return std::max(-1, box_chip_index(static_cast<int>(i)));  // a box: its chip
    }
  return -1;  // unknown names are refused by validate()
}

std::vector<topo::BoxSpec> RunConfig::box_specs() const {
  std::vector<topo::BoxSpec> specs(tiers());
  bool any = false;
  for (size_t t = 0; t < tiers(); ++t) {
    const int b = tier_box_index(t);
    if (b < 0) continue;
    specs[t] = switch_kinds[static_cast<size_t>(b)].box.spec(tier_chip(t).ports);
    any = true;
  }
  return any ? specs : std::vector<topo::BoxSpec>{};
}

const sw::SwitchConfig& RunConfig::tier_chip(size_t tier) const {
  return chip(tier_kind_index(tier));
}

std::vector<int> RunConfig::used_chips() const {
  std::vector<int> used;
  for (size_t t = 0; t < tiers(); ++t) {
    const int k = tier_kind_index(t);
    if (std::find(used.begin(), used.end(), k) == used.end()) used.push_back(k);
  }
  return used;
}

std::string RunConfig::chip_key(int kind_index) {
  return kind_index < 0 ? "switch" : "switch_kinds[" + std::to_string(kind_index) + "]";
}

topo::TierPorts RunConfig::tier_ports() const {
  const std::vector<int> used = used_chips();
  if (used.size() == 1 && used[0] < 0 && box_specs().empty())
    return topo::TierPorts(sw.ports);  // no kinds: as before
  std::vector<int64_t> ports;
  std::vector<std::string> keys, kinds;
  for (size_t t = 0; t < tiers(); ++t) {
    const int k = tier_kind_index(t), b = tier_box_index(t);
    if (b >= 0) {  // a box: its front panel
      ports.push_back(switch_kinds[static_cast<size_t>(b)].box.front(chip(k).ports));
      keys.push_back(chip_key(b) + ".box.front_ports");
      kinds.push_back(switch_kinds[static_cast<size_t>(b)].name);
      continue;
    }
    ports.push_back(chip(k).ports);
    keys.push_back(chip_key(k) + ".ports");
    kinds.push_back(k < 0 ? "" : switch_kinds[static_cast<size_t>(k)].name);
  }
  return topo::TierPorts(std::move(ports), std::move(keys), std::move(kinds));
}

namespace {

// A kind's name appears in summary.json and in topology.kinds: a plain word.
bool plain_name(const std::string& n) {
  return !n.empty() && std::all_of(n.begin(), n.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-';
  });
}

// Scale-up domains: whole servers of the topology's hosts, carrying a workload's messages.
void validate_scale_up(const RunConfig& r, const config::Checker& c, const topo::TierPorts& ports) {
  const workload::ScaleUpConfig& u = r.scale_up;
  u.validate(c.under("scale_up"));
  if (!u.on()) return;
  c.require(r.traffic.pattern == "workload", "scale_up",
            "a scale-up domain carries a workload's messages: it needs traffic.pattern workload "
            "(pattern is " +
                r.traffic.pattern + ")");
  const int64_t g = u.domain_gpus(), hosts = r.topology.hosts(ports);
  c.require(hosts % g == 0, "scale_up.gpus",
            "domains of " + std::to_string(g) + " GPUs do not tile the topology's " +
                std::to_string(hosts) + " hosts");
  const bool rails = r.topology.kind == "rail_optimized" || r.topology.kind == "rail_only";
  c.require(!rails || g % r.topology.gpus_per_server == 0, "scale_up.gpus",
            "a domain holds whole servers: " + std::to_string(g) +
                " GPUs is not a multiple of topology.gpus_per_server (" +
                std::to_string(r.topology.gpus_per_server) + ")");
}

}  // namespace

void RunConfig::validate(const config::Checker& c) const {
  c.require(sim.warmup < sim.duration, "sim.warmup", "must be shorter than sim.duration");
  sw.validate_except_lanes(c);
  // The chip's lanes run the links' FEC (else per-port lanes, below).
  if (link.port_lanes.empty()) sw.validate_even_lanes(c, link.phy.fec_type());
  // Switch kinds: named, each a valid chip of its own, all carrying the hosts' classes.
  std::vector<std::string> names;
  for (size_t i = 0; i < switch_kinds.size(); ++i) {
    const SwitchKind& k = switch_kinds[i];
    const std::string key = chip_key(static_cast<int>(i));
    c.require(plain_name(k.name), key + ".name",
              k.name.empty() ? "every switch kind needs a name"
                             : "'" + k.name + "' is not a plain name (letters, digits, _ and -)");
    c.require(k.name != "switch", key + ".name",
              "'switch' names the switch: chip; give the kind another name");
    const auto same = std::find(names.begin(), names.end(), k.name);
    c.require(same == names.end(), key + ".name",
              "'" + k.name + "' is already the name of " +
                  chip_key(static_cast<int>(same - names.begin())));
    names.push_back(k.name);
    const config::Checker kc = c.renamed("switch", key);
    k.sw.validate_except_lanes(kc);
    k.sw.validate_even_lanes(kc, link.phy.fec_type());
    c.require(
        k.sw.traffic_classes == sw.traffic_classes, key + ".traffic_classes",
        "every chip carries the hosts' traffic classes: " + std::to_string(k.sw.traffic_classes) +
            " here but switch.traffic_classes is " + std::to_string(sw.traffic_classes));
  }
  topology.validate_tier_kinds(c, names);
  // Boxes: built from a chip that is not a box, which holds their netlist.
  for (size_t i = 0; i < switch_kinds.size(); ++i) {
    const BoxConfig& b = switch_kinds[i].box;
    if (!b.is_box()) continue;
    const std::string key = chip_key(static_cast<int>(i));
    const int ci = box_chip_index(static_cast<int>(i));
    std::string known = "switch";
    for (const auto& k : switch_kinds)
      if (!k.box.is_box()) known += ", " + k.name;
    c.require(ci >= -1, key + ".box.chip",
              "'" + b.chip + "' is no switch kind a box can be built from (chips: " + known + ")");
    b.check(c, key, chip(ci).ports);
  }
  const std::vector<int> used = used_chips();
  const bool kinds_used = used.size() > 1 || used[0] >= 0;
  c.require(!kinds_used || link.port_lanes.empty(), "link.port_lanes",
            "a breakout list is per port of the switch: chip; it cannot be combined with switch "
            "kinds in topology.kinds (every port of a kind runs at its port_speed)");
  // Links join ports of one speed: the tiers a link joins must run theirs at one port_speed.
  const topo::TopologyKind& tk = topology.kind_info();
  for (const auto& [a, b] : tk.tier_links) {
    const int ka = tier_kind_index(static_cast<size_t>(a));
    const int kb = tier_kind_index(static_cast<size_t>(b));
    const BitRate ra = chip(ka).port_speed, rb = chip(kb).port_speed;
    const auto tier = [&](int t, int k) {
      return std::string(tk.tiers[static_cast<size_t>(t)]) + " (" + chip_key(k) + ".port_speed " +
             chip(k).port_speed.str() + ")";
    };
    c.require(ra.as_bps() == rb.as_bps(), chip_key(kb >= 0 ? kb : ka) + ".port_speed",
              "links join tier " + tier(a, ka) + " and tier " + tier(b, kb) + " of topology.kind " +
                  tk.name + ", and a link joins ports of one speed: give both the same port_speed");
  }
  const topo::TierPorts ports = tier_ports();
  topology.validate_ports(c, ports);
  link.validate(c.under("link"));
  if (!link.port_lanes.empty()) {
    c.require(static_cast<int64_t>(link.port_lanes.size()) == sw.ports, "link.port_lanes",
              "needs one entry per switch port (" + std::to_string(sw.ports) + ")");
    double lanes = 0;
    for (double l : link.port_lanes) lanes += l;
    c.require(lanes <= static_cast<double>(sw.serdes_lanes), "link.port_lanes",
              "uses " + std::to_string(static_cast<int64_t>(lanes)) + " lanes but the chip has " +
                  std::to_string(sw.serdes_lanes) + " (switch.serdes.lanes)");
  }
  flow_control.validate(c.under("flow_control"));
  sw.routing.validate_fabric(c, topology.kind, flow_control.mode);  // valiant / ugal: dragonfly
  // The checks of what a chip must hold, for each chip the topology uses.
  for (const int k : used) {
    const sw::SwitchConfig& ch = chip(k);
    const std::string key = chip_key(k);
    c.require(!ch.trimming.enabled || flow_control.mode == "none", key + ".trimming.enabled",
              "trimming cuts packets the buffer would drop: it needs lossy ports "
              "(flow_control.mode none), got " +
                  flow_control.mode);
    if (flow_control.pfc_mode()) {
      c.require(ch.traffic_classes <= link::kPfcPriorities, "switch.traffic_classes",
                "PFC has 8 priorities and each traffic class is one: at most 8 classes with "
                "flow_control.mode: pfc");
      const Bytes shared = link::FlowControl::pfc_shared_pool(
          flow_control, ch.buffer_size, static_cast<int>(ch.ports), pfc_headroom(ch));
      c.require(shared.count() > 0, "flow_control.pfc.reserve_per_pg",
                "reserves (" + std::to_string(ch.ports) + " ports x 8 priorities) plus headroom (" +
                    pfc_headroom(ch).str() + " per lossless priority and port) leave no shared " +
                    "pool in " + key + ".buffer.size " + ch.buffer_size.str());
    }
    if (flow_control.credit_mode()) {
      // The implementation declared its VLs when it was registered (the RTL's: FABRICSIM_RTL_VLS).
      const link::CreditUnitRegistry& impls = link::CreditUnitRegistry::global();
      const link::CreditUnitImpl* impl = impls.find(flow_control.credit.impl);
      c.require(impl != nullptr, "flow_control.credit.impl",
                "no implementation '" + flow_control.credit.impl +
                    "' is registered in this program (valid: " + join_names(impls.names()) + ")");
      c.require(impl->max_vls == 0 || flow_control.credit.data_vls <= impl->max_vls,
                "flow_control.credit.data_vls",
                impl->title + " (flow_control.credit.impl: " + flow_control.credit.impl + ") has " +
                    std::to_string(impl->max_vls) + " VLs");
      // A packet of b bytes takes ceil(b / unit) credits and ceil(b / cell) cells: at most one
      // cell per credit when cells are at least a credit, ceil(unit / cell) otherwise; the receive
      // buffers of every port and VL must fit in the cells.
      const int64_t unit = static_cast<int64_t>(flow_control.credit.unit.count());
      const int64_t cell = static_cast<int64_t>(ch.cell_size.count());
      const int64_t cells_per_credit = (unit + cell - 1) / cell;
      const int64_t need = ch.ports * flow_control.credit.data_vls *
                           flow_control.credit.buffer_blocks() * cells_per_credit;
      c.require(need <= ch.buffer_cells(), "flow_control.credit.buffer_per_vl",
                std::to_string(ch.ports) + " ports x " +
                    std::to_string(flow_control.credit.data_vls) + " VLs x " +
                    flow_control.credit.buffer_per_vl.str() + " need up to " +
                    std::to_string(need) + " cells (" + std::to_string(cells_per_credit) + " per " +
                    flow_control.credit.unit.str() + " credit) but the buffer has " +
                    std::to_string(ch.buffer_cells()) + (k < 0 ? "" : " (" + key + ")"));
    }
    // UEC CBFC is an Ethernet link layer; IB framing carries IB's own FC packets.
    c.require(!flow_control.credit_mode() || !flow_control.credit.cbfc() || link.ideal() ||
                  link.phy.framing == "ethernet",
              "flow_control.credit.protocol",
              "uec_cbfc runs on Ethernet links, but link.phy.framing is " + link.phy.framing);
    if (!link.ideal()) {
      const BitRate mac = link.phy.wire_format().mac_rate();
      c.require(mac.as_bps() == ch.port_speed.as_bps(),
                k < 0 ? std::string("link.phy.lane_rate") : key + ".port_speed",
                "the link's lanes x lane rate x coding give a " + mac.str() + " MAC rate but " +
                    key + ".port_speed is " + ch.port_speed.str() +
                    " (set link.phy.lanes / lane_rate / breakout to match, or link.model: ideal)");
    }
  }
  traffic.validate(c);
  nic.validate(c.under("nic"));
  if (nic.enabled) {
    c.require(traffic.pattern != "trace", "traffic.pattern",
              "a packet trace cannot drive NICs (nic.enabled): give the messages (pattern "
              "messages and traffic.messages.file) or a synthetic pattern");
    c.require(traffic.message_verb != "read" || nic.transport != "rud" ||
                  traffic.pattern == "messages" || traffic.pattern == "workload",
              "traffic.message_verb",
              "read: nic.transport rud does not carry RDMA READ (go_back_n and selective_repeat "
              "do)");
    // The NIC's largest frame: an MTU of payload under the largest header stack (RETH and
    // ImmDt on a WRITE ONLY with immediate).
    const nic::Packetizer pz(nic.packet);
    const int64_t frame =
        static_cast<int64_t>(pz.mtu() + pz.header_bytes(nic::BthOpcode::kWriteOnlyImm));
    const traffic::PacketLimit lim = packet_limit();
    c.require(frame <= lim.bytes, "nic.packet.mtu",
              "frames of " + std::to_string(frame) + " B (an MTU of " + nic.packet.mtu.str() +
                  " with its headers) exceed the largest packet the network carries, " +
                  std::to_string(lim.bytes) + " B (" + lim.key + ")");
  } else {
    c.require(traffic.pattern != "messages" && traffic.pattern != "workload", "traffic.pattern",
              "pattern " + traffic.pattern + " drives RDMA NICs: set nic.enabled: true");
  }
  if (traffic.pattern == "workload") {
    const workload::WorkloadConfig& w = workload;
    const config::Checker wc = c.under("workload");
    w.validate(wc);
    const int64_t n = w.ranks ? w.ranks : topology.hosts(ports);
    c.require(w.ranks <= topology.hosts(ports), "workload.ranks",
              std::to_string(w.ranks) + " ranks on " + std::to_string(topology.hosts(ports)) +
                  " hosts (a rank per host)");
    c.require(w.channels <= nic.qps_per_pair, "workload.channels",
              std::to_string(w.channels) + " channels need as many QPs between two ranks: " +
                  "nic.qps_per_pair is " + std::to_string(nic.qps_per_pair));
    c.require(w.root < n, "workload.root", "not one of the job's " + std::to_string(n) + " ranks");
    c.require(w.straggler_rank < n, "workload.straggler_rank",
              "not one of the job's " + std::to_string(n) + " ranks");
    c.require(w.tc < sw.traffic_classes, "workload.tc",
              "class " + std::to_string(w.tc) + " of " + std::to_string(sw.traffic_classes) +
                  " (switch.traffic_classes)");
    c.require(
        w.placement != "rail" || topology.kind == "rail_optimized" || topology.kind == "rail_only",
        "workload.placement", "rail needs a rail_optimized or rail_only topology");
    c.require(w.placement != "rail" || w.ranks == 0 || w.ranks == topology.hosts(ports),
              "workload.placement", "rail places one rank on every host: leave workload.ranks 0");
    c.require(topology.all_pairs_routable(), "traffic.pattern",
              "a workload on a topology that cannot route every pair (rail_only) is not "
              "supported yet");
  }
  validate_scale_up(*this, c, ports);
  // What depends on the number of hosts, so that `fabricsim check` finds what `run` would.
  const int64_t hosts = topology.hosts(ports);
  traffic::check_traffic_endpoints(
      traffic, hosts, sw.traffic_classes,
      [&c](const std::string& key, const std::string& message) { c.fail(key, message); });
  if (!topology.all_pairs_routable())  // rail_only: no traffic between hosts without a route
    topo::check_traffic_routes(
        topo::build_topology(topology, ports, static_cast<uint64_t>(sim.seed), box_specs()),
        traffic, static_cast<uint64_t>(sim.seed),
        [&c](const std::string& key, const std::string& m) { c.fail(key, m); });
  check_packet_limit(traffic, packet_limit(),
                     [&c](const std::string& key, const std::string& m) { c.fail(key, m); });
  // The occupancy time series has a value per sample, switch and port (plus the total). It is
  // streamed to occupancy.csv (memory stays flat), and the writer stops at 64e6 values (130-500
  // MB of text; OccupancyWriter::kMaxValues). sim.duration's samples must fit, so that the file
  // covers the window; a drain past the cap (a workload's, or a stuck run's up to
  // sim.drain_limit, which is only a guard) ends the file there, said in summary.json.
  if (stats.occupancy_interval > Time()) {
    constexpr double kMaxValues = 64e6;
    const double values = sim.duration.as_s() / stats.occupancy_interval.as_s() *
                          static_cast<double>(topology.switch_count(ports) * (ports.max() + 1));
    c.require(values <= kMaxValues, "stats.occupancy_interval",
              stats.occupancy_interval.str() + " over sim.duration would write " +
                  fmt::format("{:.3g}", values) + " occupancy values (at most " +
                  fmt::format("{:.3g}", kMaxValues) + "): sample less often");
  }
  if (!link.ideal() && link.phy.lane_failure())
    c.require(link.phy.fail_host < hosts, "link.phy.lane_failure.host",
              std::to_string(link.phy.fail_host) + " is out of range [-1, " +
                  std::to_string(hosts) + ") for " + std::to_string(hosts) + " hosts");
}

traffic::PacketLimit RunConfig::packet_limit() const {
  traffic::PacketLimit l;
  l.bytes = traffic::kMaxPacketBytes;
  for (const int k : used_chips()) {
    const int64_t buffer = chip(k).buffer_cells() * static_cast<int64_t>(chip(k).cell_size.count());
    if (buffer < l.bytes) l = {buffer, chip_key(k) + ".buffer.size"};
  }
  if (flow_control.credit_mode()) {
    const int64_t vl = flow_control.credit.buffer_blocks() *
                       static_cast<int64_t>(flow_control.credit.unit.count());
    if (vl < l.bytes) l = {vl, "flow_control.credit.buffer_per_vl"};
  }
  return l;
}

double RunConfig::pfc_cell_expansion(const sw::SwitchConfig& chip) const {
  // The switch charges PFC accounts in whole cells; the headroom formulas count wire bytes. The
  // worst ratio of buffer bytes to wire bytes over every frame size is what in-flight data can
  // cost (254 B cells, Ethernet: a 64 B frame takes 84 B of wire and 254 B of buffer, x3.02).
  // An ideal link has no preamble, gap or minimum frame of its own, but what it carries under
  // PFC is still Ethernet: frames of at least 64 B (else a 1 B frame in a 254 B cell would make
  // the headroom 254 times the in-flight bytes).
  const FrameOverhead o = link.overhead();
  const uint64_t cell = chip.cell_size.count();
  const uint64_t mtu = std::max<uint64_t>(flow_control.pfc.mtu.count(), 1);
  const uint64_t smallest = link.ideal() ? std::min<uint64_t>(link::WireFormat::kMinFrame, mtu) : 1;
  double worst = 1.0;
  for (uint64_t f = smallest; f <= mtu; ++f) {
    const uint64_t stored = (o.frame_bytes(f) + cell - 1) / cell * cell;
    worst = std::max(worst, static_cast<double>(stored) / static_cast<double>(o.wire_bytes(f)));
  }
  return worst;
}

Bytes RunConfig::pfc_headroom(const sw::SwitchConfig& chip) const {
  // An ideal link takes no time (Link::latency): only the frames under way and the response
  // time are in flight after XOFF, whatever length the cable keys say.
  // The modules' retiming (link.optics) counts like the FEC's: the slower class's, both ends.
  const bool ideal = link.ideal();
  const Time modules = std::max(link.of_class(link::LinkClass::kHost).module_latency,
                                link.of_class(link::LinkClass::kFabric).module_latency);
  const Bytes wire = flow_control.pfc.headroom(
      ideal ? 0.0 : link.length_m, link.ns_per_m, chip.port_speed,
      ideal ? Time() : link.phy.fec_latency + link.phy.pcs_latency + modules + modules);
  if (flow_control.pfc.headroom_formula == "fixed") return wire;  // taken as given
  return Bytes(static_cast<uint64_t>(
      std::ceil(static_cast<double>(wire.count()) * pfc_cell_expansion(chip))));
}

std::vector<InertKey> RunConfig::inert_given() const {
  RunConfig copy = *this;  // (visit() takes it mutable; only read)
  const std::map<std::string, config::Inert> inert = config::inert_keys(copy);
  const auto by_set = [this](const std::string& key) {
    const auto it = given.find(key);
    return it != given.end() && it->second.rfind("--set ", 0) == 0;
  };
  std::vector<InertKey> out;
  for (const auto& [key, where] : given) {
    const auto it = inert.find(key);
    if (it == inert.end()) continue;
    // A --set that changes what the file's key needs (--set nic.cc=timely over a DCQCN profile)
    // leaves it idle on purpose: the override's own consequence, not a slip of the file.
    const std::vector<std::string>& deciders = it->second.deciders;
    if (!by_set(key) && std::any_of(deciders.begin(), deciders.end(), by_set)) continue;
    // A switch kind that leaves the key out takes the switch: value: if it can act there, it acts.
    if (key.rfind("switch.", 0) == 0) {
      const std::string rest = key.substr(std::string("switch").size());
      bool acts = false;
      for (size_t i = 0; i < switch_kinds.size() && !acts; ++i) {
        const std::string kind_key = chip_key(static_cast<int>(i)) + rest;
        acts = !given.count(kind_key) && !inert.count(kind_key);
      }
      if (acts) continue;
    }
    out.push_back({key, where, it->second.when, it->second.now});
  }
  // In the order given: the file's keys by line, then the overrides.
  const auto line = [](const InertKey& k) {
    const size_t colon = k.where.rfind(':');
    const bool file = k.where.rfind("--set ", 0) != 0 && colon != std::string::npos;
    return file ? std::atol(k.where.c_str() + colon + 1) : LONG_MAX;
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const InertKey& a, const InertKey& b) { return line(a) < line(b); });
  return out;
}

RunConfig RunConfig::load(const std::string& path, const std::vector<std::string>& overrides) {
  RunConfig cfg;
  config::load(cfg, path, overrides, &cfg.given);
  cfg.source_path = path;
  return cfg;
}

}  // namespace fabricsim::sim
