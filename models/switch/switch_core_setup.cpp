// SwitchCore's construction: every structure sized once from the configuration (ports, classes,
// architecture, scheduler, buffer, banks, flow control, MACs), so that the cycle-by-cycle data
// path (switch_core.cpp) never allocates. Statistics and checks: switch_core_stats.cpp.
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "models/switch/switch_core.h"

namespace fabricsim::sw {

namespace {

const link::FlowControlConfig& no_flow_control() {
  static const link::FlowControlConfig none = [] {
    link::FlowControlConfig c;
    c.mode = "none";
    return c;
  }();
  return none;
}

// The ports that keep state of their own (SwitchCore's constructor): all, or the wired ones and
// one idle port whose state every port past them shares.
int ports_with_state(const SwitchConfig& cfg, const MacConfig& mac, int wired) {
  const int declared = static_cast<int>(cfg.ports);
  const bool crossbar = !cfg.packet_model() && cfg.arch() != Architecture::kOutputQueued &&
                        cfg.arch() != Architecture::kSharedMemory;
  const bool credits = mac.flow_control && mac.flow_control->credit_mode();
  if (wired < 0 || wired + 1 >= declared || crossbar || credits) return declared;
  return wired + 1;
}

}  // namespace

SwitchCore::SwitchCore(const SwitchConfig& cfg, ForwardingTable table, uint64_t seed,
                       std::string name, const MacConfig& mac, int wired)
    : name_(std::move(name)),
      cfg_(cfg),
      arch_(cfg.arch()),
      no_crossbar_(cfg.packet_model() || arch_ == Architecture::kOutputQueued ||
                   arch_ == Architecture::kSharedMemory),
      packet_model_(cfg.packet_model()),
      timing_(cfg, mac.overhead),
      cut_through_(cfg.cut_through()),
      egress_whole_(cfg.egress_start == "all_cells"),
      egress_in_time_(cfg.egress_start == "no_underrun"),
      strict_priority_(cfg.egress_policy() == EgressPolicy::kStrictPriority),
      one_class_voq_(arch_ == Architecture::kVoq && cfg.traffic_classes == 1),
      table_(std::move(table)),
      balancer_(cfg.routing, table_, static_cast<int64_t>(cfg.cell_size.count())),
      non_minimal_(balancer_.non_minimal()),
      declared_(static_cast<int>(cfg.ports)),
      n_(ports_with_state(cfg, mac, wired)),
      tcs_(static_cast<int>(cfg.traffic_classes)),
      period_(cfg.cycle()),
      period_div_(static_cast<uint64_t>(period_.as_fs())),
      overhead_(mac.overhead),
      fc_(mac.flow_control ? *mac.flow_control : no_flow_control(), n_, cfg.port_speed,
          mac.headroom_per_pg,
          mac.flow_control
              ? link::FlowControl::pfc_shared_pool(*mac.flow_control, cfg.buffer_size,
                                                   static_cast<int>(cfg.ports), mac.headroom_per_pg)
              : Bytes(),
          mac.fc_frame_bytes, mac.credit_unit, declared_),  // (PFC's headroom pool: every port)
      fc_on_(fc_.enabled()),
      ctrl_sent_(static_cast<size_t>(n_), 0),
      cell_ser_(cfg.port_speed.serialization(cfg.cell_size)),
      cell_bytes_(static_cast<int64_t>(cfg.cell_size.count())),
      // A slot per cell, width_ cells per crossbar slot.
      slot_num_(cell_ser_.as_fs() * 1000 * cfg.crossbar_width()),
      slot_den_(cfg.speedup_milli()),
      slot_fs_(static_cast<uint64_t>(slot_num_ / slot_den_)),
      slot_frac_(static_cast<uint64_t>(slot_num_ % slot_den_)),
      rng_(Rng::derive(seed, name_ + ".scheduler")),
      // With link-level flow control the admission policy lives in FlowControl (PFC pools, or
      // the credits' receive buffers); the buffer only stores cells.
      buffer_(cfg.buffer_cells(), declared_, fc_on_ ? 0 : cfg.reserved_cells_per_port(), n_ * tcs_,
              cfg.alpha),
      admission_(declared_, static_cast<int>(cfg.ingress_pipelines),
                 static_cast<int>(cfg.admissions_per_cycle)),
      // output_queued is the ideal: its memory has no bank limits; nor has the packet model,
      // which has no cells to write, and reserves a packet's cells at admission.
      banks_(static_cast<int>(cfg.buffer_banks),
             arch_ == Architecture::kOutputQueued || packet_model_
                 ? 0
                 : static_cast<int>(cfg.bank_write_cells),
             arch_ == Architecture::kOutputQueued || packet_model_
                 ? 0
                 : static_cast<int>(cfg.bank_read_cells)),
      cell_alloc_(cfg.cell_allocation() && !packet_model_),
      write_limited_(banks_.write_limited()),
      read_limited_(banks_.read_limited()),
      cursors_(write_limited_ || read_limited_ || cell_alloc_),
      // The bytes an input's datapath moves in one crossbar slot (slot_num_ / slot_den_ fs).
      datapath_budget_(static_cast<uint32_t>(static_cast<__int128>(cfg.datapath_bytes) * slot_num_ /
                                             (static_cast<__int128>(slot_den_) * period_.as_fs()))),
      requested_outputs_(n_),
      requesting_inputs_(n_),
      match_(static_cast<size_t>(n_), -1),
      done_(n_),
      egress_(static_cast<size_t>(n_)),
      head_bytes_(static_cast<size_t>(tcs_), 0),
      ports_(static_cast<size_t>(n_)),
      port_cells_(static_cast<size_t>(n_), 0),
      port_avg_(static_cast<size_t>(n_)),
      port_run_peak_(static_cast<size_t>(n_), 0),
      dirty_ports_(n_) {
  if (packet_model_) buffer_.count_only();
  if (write_limited_) write_lag_.reset(new uint16_t[static_cast<size_t>(cfg.buffer_cells())]);
  if (!no_crossbar_)
    scheduler_ = make_scheduler(cfg.scheduler, n_, static_cast<int>(cfg.iterations), rng_,
                                cfg.scheduler_impl);
  if (scheduler_) scheduler_->set_requesting_inputs(&requesting_inputs_);
  if (scheduler_) {
    match_cycles_ = cfg.matching_cycles();
    pipelined_ = cfg.pipelined && match_cycles_ > 0;
    width_ = static_cast<int>(cfg.crossbar_width());
    packet_mode_ = cfg.packet_mode();
  }
  xbar_delay_ = cfg.crossbar_cycles + cfg.egress_cycles + (pipelined_ ? match_cycles_ : 0);
  if (packet_mode_) {
    hold_q_.assign(static_cast<size_t>(n_), -1);
    hold_tc_.assign(static_cast<size_t>(n_), 0);
    hold_out_.assign(static_cast<size_t>(n_), -1);
    hold_next_fs_.assign(static_cast<size_t>(n_), 0);
    // A held pair's own slot, rounded up to whole femtoseconds.
    hold_step_fs_ = slot_fs_ + (slot_frac_ != 0);
    held_in_ = PortSet(n_);
    ending_ = PortSet(n_);
    held_out_ = PortSet(n_);
    offered_outputs_ = PortSet(n_);
    stash_.assign(static_cast<size_t>(n_) * static_cast<size_t>(held_in_.num_words()), 0);
  }
  // (The packet model has no ingress queues whatever the architecture.)
  const size_t queues = no_crossbar_                        ? 0
                        : arch_ == Architecture::kVoq       ? static_cast<size_t>(n_) * n_ * tcs_
                        : arch_ == Architecture::kInputFifo ? static_cast<size_t>(n_)
                                                            : 0;
  iq_.resize(queues);
  iq_ready_out_.assign(queues, -1);
  // Per (input, output) pair: only a crossbar's ingress queues use them (a 64-port chip's two
  // 8 KiB tables, first touched here, are a set-up cost a fabric of packet-model chips skips).
  const size_t pairs = queues ? static_cast<size_t>(n_) * n_ : 0;
  pair_classes_.assign(pairs, 0);
  pair_started_.assign(pairs, 0);
  requests_.assign(static_cast<size_t>(n_), PortSet(n_));
  out_requests_.assign(static_cast<size_t>(n_), 0);
  in_requests_.assign(static_cast<size_t>(n_), 0);
  egq_.resize(static_cast<size_t>(n_) * tcs_);
  egq_bytes_.assign(static_cast<size_t>(n_), 0);
  egq_busy_.assign(static_cast<size_t>(n_), 0);
  arbiters_.reserve(static_cast<size_t>(n_));
  for (int j = 0; j < n_; ++j)
    arbiters_.emplace_back(cfg.egress_policy(), tcs_, cfg.dwrr_weights, cfg.dwrr_quantum.count());
  int_stamp_ = cfg.int_telemetry;
  if (cfg.trimming.enabled) {
    trim_ = true;
    trim_bytes_ = static_cast<uint32_t>(cfg.trimming.bytes.count());
    trim_tc_ = static_cast<uint8_t>(cfg.trim_class());
  }
  if (mac.flow_control && mac.flow_control->ecn.enabled) {
    const link::EcnConfig& ec = mac.flow_control->ecn;
    ecn_on_ = true;
    ecn_enqueue_ = ec.mark_on != "dequeue";
    ecn_ = std::make_unique<link::EcnMarker>(ec, n_ * tcs_);
    ecn_rng_ = Rng::derive(seed, name_ + ".ecn");
    constexpr int kBins = 20;  // over [0, 2 Kmax): the curve and some of the saturated part
    ecn_bin_bytes_ = std::max<int64_t>(1, static_cast<int64_t>(2 * ec.kmax.count() / kBins));
    ecn_bins_.resize(kBins);
  }
  mac_.reserve(static_cast<size_t>(n_));  // (grown one by one, each MAC was copied ~twice)
  eg_fast_rate_.reserve(static_cast<size_t>(n_));
  for (int j = 0; j < declared_; ++j) {
    const auto rate_of = [&](const std::vector<BitRate>& v) {
      return static_cast<size_t>(j) < v.size() ? v[j] : cfg.port_speed;
    };
    const link::Mac m(rate_of(mac.port_rates),
                      rate_of(mac.port_rates_after.empty() ? mac.port_rates : mac.port_rates_after),
                      mac.rates_change_at, overhead_);
    if (j >= n_) {
      // Sends nothing, but the window's end allows for the longest frame of every port
      // (set_window), the ports past n_ too.
      idle_frame_ = std::max(idle_frame_, m.slowest_rate().serialization(Bytes(65535)));
      continue;
    }
    mac_.push_back(m);
    // A lane failure changes the rate once: the faster of the two is the one to plan for.
    const BitRate before = m.rate(Time()), after = m.rate(Time::max());
    eg_fast_rate_.push_back(after.as_bps() > before.as_bps() ? after : before);
  }
  // Flow-control timers (PFC refreshes, IB FC packets) run from the start.
  if (fc_on_)
    for (int j = 0; j < n_; ++j) schedule_control_timer(j);
}

SwitchCore::~SwitchCore() = default;

}  // namespace fabricsim::sw
