// SystemC wrapper of the switch chip: ports in and out, one clocked process for the whole switch.
//
// The switch runs only in core-clock cycles that have work: after each cycle, and after each packet
// arrival, it asks the SwitchCore for its next busy cycle and asks to be woken then, so an idle
// switch costs no kernel activity (no sc_clock). The wake-up comes from a DeviceScheduler shared by
// the switches of a fabric (one process for all: fabric.cpp), or, without one, from the module's
// own process and timed event.
#pragma once

#include <memory>
#include <vector>

#include <systemc>

#include "models/common/device_scheduler.h"
#include "models/common/packet_port.h"
#include "models/switch/switch_core.h"

namespace fabricsim::sw {

class SwitchModule : public sc_core::sc_module,
                     private DepartureSink,
                     private DeviceScheduler::Client {
 public:
  SC_HAS_PROCESS(SwitchModule);
  sc_core::sc_vector<sc_core::sc_export<PacketPortIf>> in;
  sc_core::sc_vector<sc_core::sc_port<PacketPortIf>> out;

  // `scheduler`: the process that wakes this switch (null: a process of its own).
  SwitchModule(sc_core::sc_module_name name, const SwitchConfig& cfg, ForwardingTable table,
               uint64_t seed, const MacConfig& mac = {}, DeviceScheduler* scheduler = nullptr);

  SwitchCore& core() { return core_; }
  const SwitchCore& core() const { return core_; }
  uint64_t active_cycles() const { return active_cycles_; }

 private:
  struct Ingress : PacketPortIf {
    SwitchModule* owner = nullptr;
    int port = 0;
    void transfer(const Packet& p, Time first_bit, Time) override {
      // Only an arrival that needs the switch earlier than planned moves the wake-up.
      if (owner->core_.receive(port, p, first_bit, sim_now(*owner)) < owner->scheduled_)
        owner->reschedule();
    }
    void control(const ControlFrame& f, Time, Time last_bit) override {
      if (owner->core_.receive_control(port, f, last_bit, owner->current_cycle()) <
          owner->scheduled_)
        owner->reschedule();
    }
  };

  void tick();  // the module's own process (no scheduler): wake_ fired
  void wake(int64_t cycle) override;
  void run_window(int64_t cycle, int64_t end) override;
  void reschedule();
  void reschedule(int64_t next);  // the core's next_work_cycle(), computed already
  // The first cycle that can still run: the one starting now, or the next if now is mid-cycle.
  int64_t current_cycle() const;
  void end_of_elaboration() override;
  void start_of_simulation() override;
  void on_departure(int port, const Packet& p, Time first_bit, Time last_bit) override;
  void on_control(int port, const ControlFrame& f, Time first_bit, Time last_bit) override;

  SwitchCore core_;
  std::vector<Ingress> ingress_;
  std::vector<PacketPortIf*> out_if_;  // bound egress interfaces (bound_interfaces)
  DeviceScheduler* scheduler_;
  int scheduler_id_ = -1;
  sc_core::sc_event wake_;  // without a scheduler
  int64_t scheduled_ = EventWheel<int>::kNone;
  uint64_t active_cycles_ = 0;
};

}  // namespace fabricsim::sw
