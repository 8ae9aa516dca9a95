#include "models/switch/switch_module.h"

#include <algorithm>

namespace fabricsim::sw {

SwitchModule::SwitchModule(sc_core::sc_module_name name, const SwitchConfig& cfg,
                           ForwardingTable table, uint64_t seed, const MacConfig& mac,
                           DeviceScheduler* scheduler, int sc_ports)
    : sc_core::sc_module(name),
      in("in",
         static_cast<size_t>(sc_ports < 0 ? cfg.ports : std::min<int64_t>(sc_ports, cfg.ports))),
      out("out", in.size()),
      core_(cfg, std::move(table), seed, std::string(this->basename()), mac, sc_ports),
      ingress_(static_cast<size_t>(cfg.ports)),
      scheduler_(scheduler) {
  for (size_t i = 0; i < ingress_.size(); ++i) {
    ingress_[i].owner = this;
    ingress_[i].port = static_cast<int>(i);
    if (i < in.size()) in[i].bind(ingress_[i]);
  }
  if (scheduler_) {
    scheduler_id_ = scheduler_->add(this);
  } else {
    SC_METHOD(tick);
    sensitive << wake_;
    dont_initialize();
  }
}

void SwitchModule::tick() {
  wake(core_.cycle_at(sim_now(*this)));
}

void SwitchModule::wake(int64_t c) {
  if (c == scheduled_) {
    scheduled_ = EventWheel<int>::kNone;
    core_.run_cycle(c, *this);
    ++active_cycles_;
  }
  reschedule();
}

void SwitchModule::run_window(int64_t c, int64_t end) {
  if (c != scheduled_) {
    wake(c);
    return;
  }
  scheduled_ = EventWheel<int>::kNone;
  for (;;) {
    core_.run_cycle(c, *this);
    ++active_cycles_;
    const int64_t next = core_.next_work_cycle();  // after c: the core never asks twice
    // Asked for by an arrival meanwhile (possible only over a link shorter than the window,
    // which the scheduler's lookahead excludes): the scheduler decides, as after wake().
    if (next >= end || scheduled_ != EventWheel<int>::kNone) {
      reschedule(next);
      return;
    }
    c = next;
  }
}

void SwitchModule::reschedule() {
  reschedule(core_.next_work_cycle());
}

void SwitchModule::reschedule(int64_t next) {
  if (next == EventWheel<int>::kNone) return;
  next = std::max(next, current_cycle());  // work that came due while idle runs now
  if (next >= scheduled_) return;
  scheduled_ = next;
  if (scheduler_) {
    scheduler_->schedule(scheduler_id_, next);
    return;
  }
  wake_.notify(to_sc(core_.time_of(next) - sim_now(*this)));
}

int64_t SwitchModule::current_cycle() const {
  if (scheduler_ && scheduler_->running_here()) return scheduler_->cycle();
  return core_.cycle_of(sim_now(*this));
}

Time SwitchModule::now() const {
  if (scheduler_ && scheduler_->running_here()) return scheduler_->period() * scheduler_->cycle();
  return sim_now(*this);
}

void SwitchModule::set_side(int side) {
  side_ = side;
  if (scheduler_) scheduler_->set_side(scheduler_id_, side);
}

void SwitchModule::set_remote_port(int port) {
  remote_.resize(ingress_.size(), 0);
  remote_[static_cast<size_t>(port)] = 1;
}

void SwitchModule::deliver_receive(const PortMail& m) {
  static_cast<SwitchModule*>(m.to)->receive(m.port, m.p, m.first, m.last);
}

void SwitchModule::deliver_receive_int(const PortMail& m) {
  static_cast<SwitchModule*>(m.to)->receive_int(m.port, m.p, *m.tel, m.first, m.last);
}

void SwitchModule::deliver_transfer_int(const PortMail& m) {
  static_cast<SwitchModule*>(m.to)->out_if_[m.port]->transfer_int(m.p, *m.tel, m.first, m.last);
}

void SwitchModule::deliver_control_in(const PortMail& m) {
  static_cast<SwitchModule*>(m.to)->receive_control(m.port, m.f, m.last, m.cycle);
}

void SwitchModule::deliver_transfer(const PortMail& m) {
  static_cast<SwitchModule*>(m.to)->out_if_[m.port]->transfer(m.p, m.first, m.last);
}

void SwitchModule::deliver_control_out(const PortMail& m) {
  static_cast<SwitchModule*>(m.to)->out_if_[m.port]->control(m.f, m.first, m.last);
}

namespace {
using Replay = void (*)(const PortMail&);
}  // namespace

void (*SwitchModule::mail_replay(int kind))(const PortMail&) {
  static const Replay kReplays[] = {&deliver_receive,  &deliver_receive_int,  &deliver_control_in,
                                    &deliver_transfer, &deliver_transfer_int, &deliver_control_out};
  return kind >= 0 && kind < 6 ? kReplays[kind] : nullptr;
}

int SwitchModule::mail_kind(const PortMail& m) {
  for (int k = 0; k < 6; ++k)
    if (mail_replay(k) == m.deliver) return k;
  return -1;
}

void SwitchModule::start_of_simulation() {
  reschedule();  // work the core has from the start (flow-control timers)
}

void SwitchModule::end_of_elaboration() {
  out_if_ = bound_interfaces(out);
  if (out_if_.size() < ingress_.size()) {
    if (!idle_sink_)
      SC_REPORT_ERROR("fabricsim/switch", "ports without a SystemC port and no idle sink");
    out_if_.resize(ingress_.size(), idle_sink_);
  }
}

void SwitchModule::on_control(int port, const ControlFrame& f, Time first_bit, Time last_bit) {
  if (held_for_host(port)) {
    scheduler_->mail_to(0).post({&deliver_control_out, this, port, first_bit, last_bit, 0, {}, f});
    return;
  }
  out_if_[port]->control(f, first_bit, last_bit);
}

void SwitchModule::on_departure(int port, const Packet& p, Time first_bit, Time last_bit) {
  if (held_for_host(port)) {
    scheduler_->mail_to(0).post({&deliver_transfer, this, port, first_bit, last_bit, 0, p, {}});
    return;
  }
  out_if_[port]->transfer(p, first_bit, last_bit);
}

void SwitchModule::on_departure_int(int port, const Packet& p, const IntStack& tel, Time first_bit,
                                    Time last_bit) {
  if (held_for_host(port)) {
    PortMailbox& box = scheduler_->mail_to(0);
    PortMail m{&deliver_transfer_int, this, port, first_bit, last_bit, 0, p, {}};
    m.tel = box.keep(tel);
    box.post(m);
    return;
  }
  out_if_[port]->transfer_int(p, tel, first_bit, last_bit);
}

}  // namespace fabricsim::sw
