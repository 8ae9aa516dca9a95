// SystemC endpoints attached to the switch ports: the hosts that send and receive traffic.
//
// TrafficSourceModule: one process for all endpoints, pulling the merged, time-ordered packet
// stream of a TrafficSource and putting each packet on its endpoint's port at its inject time.
// TrafficSinkModule: the receiving hosts; they measure latency (first bit into the switch to last
// bit out) and delivered bytes, for packets injected inside the measurement window.
#pragma once

#include <memory>
#include <vector>

#include <systemc>

#include "models/common/packet_port.h"
#include "models/common/stats.h"
#include "models/traffic/traffic_source.h"

namespace fabricsim::traffic {

class TrafficSourceModule : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(TrafficSourceModule);
  sc_core::sc_vector<sc_core::sc_port<PacketPortIf>> out;

  TrafficSourceModule(sc_core::sc_module_name name, std::unique_ptr<TrafficSource> source,
                      int endpoints, BitRate port_rate, Time window_start, Time window_end);

  void stop() { stopped_ = true; }  // inject nothing more
  uint64_t injected() const { return injected_; }
  uint64_t injected_bytes() const { return injected_bytes_; }
  uint64_t win_injected() const { return win_injected_; }
  const std::vector<uint64_t>& win_injected_bytes() const { return win_bytes_; }

 private:
  void emit();
  void fetch();
  void end_of_elaboration() override;

  std::unique_ptr<TrafficSource> source_;
  std::vector<PacketPortIf*> out_if_;  // bound interfaces, resolved once after elaboration
  BitRate rate_;
  Time win_start_, win_end_;
  Packet next_;
  bool have_next_ = false;
  bool stopped_ = false;
  sc_core::sc_event wake_;
  uint64_t injected_ = 0, injected_bytes_ = 0, win_injected_ = 0;
  std::vector<uint64_t> win_bytes_;
};

class TrafficSinkModule : public sc_core::sc_module {
 public:
  sc_core::sc_vector<sc_core::sc_export<PacketPortIf>> in;

  TrafficSinkModule(sc_core::sc_module_name name, int endpoints, Time window_start, Time window_end,
                    int histogram_bits);

  uint64_t delivered() const { return delivered_; }
  uint64_t win_delivered() const { return win_delivered_; }
  const stats::Histogram& latency_fs() const {
    flush();
    return latency_;
  }
  const stats::Histogram& port_latency_fs(int port) const {
    flush();
    return port_latency_[port];
  }
  // Bytes whose last bit left the switch inside the window, per port.
  const std::vector<uint64_t>& win_delivered_bytes() const { return win_bytes_; }

 private:
  struct Port : PacketPortIf {
    TrafficSinkModule* owner = nullptr;
    int port = 0;
    void transfer(const Packet& p, Time first_bit, Time last_bit) override {
      owner->receive(port, p, first_bit, last_bit);
    }
  };
  void receive(int port, const Packet& p, Time first_bit, Time last_bit);
  // Latency samples are recorded in batches: the histograms' buckets then stay in cache for a
  // whole batch instead of being evicted by the switch's state between two packets.
  void flush() const;

  std::vector<Port> ports_;
  Time win_start_, win_end_;
  uint64_t delivered_ = 0, win_delivered_ = 0;
  mutable stats::Histogram latency_;
  mutable std::vector<stats::Histogram> port_latency_;
  struct Sample {
    uint64_t latency_fs;
    int port;
  };
  mutable std::vector<Sample> pending_;
  std::vector<uint64_t> win_bytes_;
};

}  // namespace fabricsim::traffic
