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
  // `sc_ports`: how many of the chip's ports get SystemC ports (in[p], out[p]; -1: all). The
  // ports from there on are not wired: what the core sends them goes to set_idle_sink's sink.
  // (A k = 8 fat tree wires 8 of a 64-port chip's ports; naming 112 unused SystemC objects a
  // chip was 9% of a short run's instructions.)
  SwitchModule(sc_core::sc_module_name name, const SwitchConfig& cfg, ForwardingTable table,
               uint64_t seed, const MacConfig& mac = {}, DeviceScheduler* scheduler = nullptr,
               int sc_ports = -1);
  // Where the ports without a SystemC port send (before the end of elaboration).
  void set_idle_sink(PacketPortIf* sink) { idle_sink_ = sink; }

  SwitchCore& core() { return core_; }
  const SwitchCore& core() const { return core_; }
  uint64_t active_cycles() const { return active_cycles_; }
  // Threads (DeviceScheduler::set_parallel): the switch runs on the main thread (side 0) or a
  // worker (side 1 and up; 1 is the default); port `port` leads to a host (the main thread's),
  // so what the switch sends there from a worker inside a window waits for the window's end.
  void set_side(int side);
  int side() const { return side_; }
  void set_remote_port(int port);
  // MPI: the switch runs in another process (models/sim/mpi_partition.h): every call to it is
  // held for that process, one made outside a window (a host's) sent there at once.
  void set_elsewhere() { elsewhere_ = true; }
  bool elsewhere() const { return elsewhere_; }
  // MPI: the kind of a call held in a mailbox (a small number that another process maps back to
  // the same replay; -1: not one of this module's), and the replay of a kind. Every call's
  // PortMail::to is the receiving switch (receive_*) or the sending one (transfer_*, *_out).
  static int mail_kind(const PortMail& m);
  static void (*mail_replay(int kind))(const PortMail&);

 private:
  struct Ingress : PacketPortIf {
    SwitchModule* owner = nullptr;
    int port = 0;
    // (now() and current_cycle() are the caller's: a host's kernel time, or the cycle the
    // scheduler runs a switch in.)
    void transfer(const Packet& p, Time first_bit, Time) override {
      if (owner->from_other_thread()) {
        owner->scheduler_->mail_to(owner->side_)
            .post({&deliver_receive, owner, port, first_bit, owner->now(), 0, p, {}});
        owner->posted();
      } else {
        owner->receive(port, p, first_bit, owner->now());
      }
    }
    void transfer_int(const Packet& p, const IntStack& tel, Time first_bit, Time) override {
      if (owner->from_other_thread()) {
        PortMailbox& box = owner->scheduler_->mail_to(owner->side_);
        PortMail m{&deliver_receive_int, owner, port, first_bit, owner->now(), 0, p, {}};
        m.tel = box.keep(tel);
        box.post(m);
        owner->posted();
      } else {
        owner->receive_int(port, p, tel, first_bit, owner->now());
      }
    }
    void control(const ControlFrame& f, Time, Time last_bit) override {
      if (owner->from_other_thread()) {
        owner->scheduler_->mail_to(owner->side_)
            .post({&deliver_control_in,
                   owner,
                   port,
                   Time(),
                   last_bit,
                   owner->current_cycle(),
                   {},
                   f});
        owner->posted();
      } else {
        owner->receive_control(port, f, last_bit, owner->current_cycle());
      }
    }
  };
  // Only an arrival that needs the switch earlier than planned moves the wake-up.
  void receive(int port, const Packet& p, Time first_bit, Time now) {
    if (core_.receive(port, p, first_bit, now) < scheduled_) reschedule();
  }
  void receive_int(int port, const Packet& p, const IntStack& tel, Time first_bit, Time now) {
    if (core_.receive_int(port, p, tel, first_bit, now) < scheduled_) reschedule();
  }
  void receive_control(int port, const ControlFrame& f, Time last_bit, int64_t earliest) {
    if (core_.receive_control(port, f, last_bit, earliest) < scheduled_) reschedule();
  }
  // Threads: a call from another side's thread while a window runs (a host's, or a switch's
  // on another side) waits for the window's end; with stealing, every call inside a window
  // does (any thread may be running this switch).
  bool from_other_thread() const {
    return scheduler_ &&
           (elsewhere_ || (scheduler_->window_in_flight() &&
                           (scheduler_->stealing() || side_ != DeviceScheduler::thread_side())));
  }
  // MPI: a call held outside a window goes to the switch's process at once.
  void posted() {
    if (elsewhere_ && !scheduler_->window_in_flight()) scheduler_->deliver_now(side_);
  }
  // Threads: what a switch on a worker sends a host inside a window waits for its end.
  bool held_for_host(int port) const {
    return !remote_.empty() && remote_[static_cast<size_t>(port)] &&
           DeviceScheduler::thread_side() != 0 && scheduler_->window_in_flight();
  }
  static void deliver_receive(const PortMail& m);
  static void deliver_receive_int(const PortMail& m);
  static void deliver_transfer_int(const PortMail& m);
  static void deliver_control_in(const PortMail& m);
  static void deliver_transfer(const PortMail& m);
  static void deliver_control_out(const PortMail& m);

  void tick();  // the module's own process (no scheduler): wake_ fired
  void wake(int64_t cycle) override;
  void run_window(int64_t cycle, int64_t end) override;
  void prefetch_window() override { core_.prefetch_window(); }
  void reschedule();
  void reschedule(int64_t next);  // the core's next_work_cycle(), computed already
  // The first cycle that can still run: the one starting now, or the next if now is mid-cycle.
  // While its scheduler runs it, the cycle it runs in (the kernel's time is the main thread's).
  int64_t current_cycle() const;
  // The present as the switch sees it: the start of current_cycle() while its scheduler runs it,
  // else the kernel's time.
  Time now() const;
  void end_of_elaboration() override;
  void start_of_simulation() override;
  void on_departure(int port, const Packet& p, Time first_bit, Time last_bit) override;
  void on_departure_int(int port, const Packet& p, const IntStack& tel, Time first_bit,
                        Time last_bit) override;
  void on_control(int port, const ControlFrame& f, Time first_bit, Time last_bit) override;

  SwitchCore core_;
  std::vector<Ingress> ingress_;
  std::vector<PacketPortIf*> out_if_;  // bound egress interfaces (bound_interfaces)
  PacketPortIf* idle_sink_ = nullptr;  // the egress of the ports past out.size()
  std::vector<uint8_t> remote_;        // per port: leads to a host (set_remote_port)
  int side_ = 1;                       // the thread it runs on (set_side)
  bool elsewhere_ = false;             // MPI: another process runs it
  DeviceScheduler* scheduler_;
  int scheduler_id_ = -1;
  sc_core::sc_event wake_;  // without a scheduler
  int64_t scheduled_ = EventWheel<int>::kNone;
  uint64_t active_cycles_ = 0;
};

}  // namespace fabricsim::sw
