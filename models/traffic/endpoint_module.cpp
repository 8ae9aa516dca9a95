#include "models/traffic/endpoint_module.h"

namespace fabricsim::traffic {

namespace {
constexpr size_t kLatencyBatch = 1024;
}  // namespace

TrafficSourceModule::TrafficSourceModule(sc_core::sc_module_name name,
                                         std::unique_ptr<TrafficSource> source, int endpoints,
                                         BitRate port_rate, Time window_start, Time window_end)
    : sc_core::sc_module(name),
      out("out", static_cast<size_t>(endpoints)),
      source_(std::move(source)),
      rate_(port_rate),
      win_start_(window_start),
      win_end_(window_end),
      win_bytes_(static_cast<size_t>(endpoints), 0) {
  SC_METHOD(emit);
  sensitive << wake_;
  // Runs once at time 0 to fetch the first packet.
}

void TrafficSourceModule::end_of_elaboration() {
  out_if_ = bound_interfaces(out);
}

void TrafficSourceModule::fetch() {
  have_next_ = !stopped_ && source_->next(next_);
  if (have_next_) wake_.notify(to_sc(next_.inject_time - from_sc(sc_core::sc_time_stamp())));
}

void TrafficSourceModule::emit() {
  const Time now = from_sc(sc_core::sc_time_stamp());
  if (!have_next_) {
    fetch();
    return;
  }
  while (have_next_ && next_.inject_time == now && !stopped_) {
    ++injected_;
    injected_bytes_ += next_.size.count();
    if (next_.inject_time >= win_start_ && next_.inject_time < win_end_) {
      ++win_injected_;
      win_bytes_[next_.src] += next_.size.count();
    }
    out_if_[next_.src]->transfer(next_, now, now + rate_.serialization(next_.size));
    have_next_ = source_->next(next_);
  }
  if (have_next_ && !stopped_) wake_.notify(to_sc(next_.inject_time - now));
}

TrafficSinkModule::TrafficSinkModule(sc_core::sc_module_name name, int endpoints, Time window_start,
                                     Time window_end, int histogram_bits)
    : sc_core::sc_module(name),
      in("in", static_cast<size_t>(endpoints)),
      ports_(static_cast<size_t>(endpoints)),
      win_start_(window_start),
      win_end_(window_end),
      latency_(histogram_bits),
      win_bytes_(static_cast<size_t>(endpoints), 0) {
  pending_.reserve(kLatencyBatch);
  port_latency_.reserve(static_cast<size_t>(endpoints));
  for (int i = 0; i < endpoints; ++i) {
    // Per-port histograms are coarser (percentiles within 2^-5 = 3%): 64-512 fine histograms
    // would not stay in cache, and recording is on every packet's path.
    port_latency_.emplace_back(std::min(histogram_bits, 5));
    ports_[i].owner = this;
    ports_[i].port = i;
    in[i].bind(ports_[i]);
  }
}

void TrafficSinkModule::receive(int port, const Packet& p, Time, Time last_bit) {
  ++delivered_;
  if (last_bit >= win_start_ && last_bit < win_end_) win_bytes_[port] += p.size.count();
  if (p.inject_time >= win_start_ && p.inject_time < win_end_) {
    ++win_delivered_;
    pending_.push_back({static_cast<uint64_t>((last_bit - p.inject_time).as_fs()), port});
    if (pending_.size() == kLatencyBatch) flush();
  }
}

void TrafficSinkModule::flush() const {
  for (const Sample& s : pending_) latency_.record(s.latency_fs);
  for (const Sample& s : pending_) port_latency_[s.port].record(s.latency_fs);
  pending_.clear();
}

}  // namespace fabricsim::traffic
