#include "models/common/device_scheduler.h"

namespace fabricsim {

DeviceScheduler::DeviceScheduler(sc_core::sc_module_name name, Time period)
    : sc_core::sc_module(name), period_(period) {
  SC_METHOD(run);
  sensitive << wake_;
  dont_initialize();
}

int DeviceScheduler::add(Client* c) {
  const int id = static_cast<int>(clients_.size());
  clients_.push_back(c);
  due_.push_back(kNone);
  if (id % 64 == 0) near_ = PortCalendar(id + 64);  // a bit per device (none scheduled yet)
  return id;
}

void DeviceScheduler::schedule(int id, int64_t cycle) {
  const int64_t old = due_[id];
  if (old <= cycle) return;
  if (old != kNone && near_.fits(old, now_)) near_.clear(old, id);  // (a far one goes stale)
  due_[id] = cycle;
  if (near_.fits(cycle, now_))
    near_.set(cycle, id);
  else
    far_.push(Far{cycle, id});
  if (!running_ && cycle < pending_) {
    pending_ = cycle;
    wake_.notify(to_sc(period_ * cycle - sim_now(*this)));
  }
}

void DeviceScheduler::run() {
  const int64_t c = sim_now(*this).as_fs() / period_.as_fs();  // woken at a cycle's start
  now_ = c;
  running_ = true;
  pending_ = kNone;
  while (!far_.empty() && near_.fits(far_.top().cycle, c)) {
    const Far f = far_.top();
    far_.pop();
    if (due_[f.id] == f.cycle) near_.set(f.cycle, f.id);
  }
  // Devices may make others due in this cycle (a zero-latency hand-over): they run in it too.
  for (int id = near_.take(c); id >= 0; id = near_.take(c)) {
    due_[id] = kNone;
    clients_[id]->wake(c);
  }
  running_ = false;
  while (!far_.empty() && due_[far_.top().id] != far_.top().cycle) far_.pop();
  int64_t next = near_.next_cycle(c + 1);
  if (!far_.empty() && far_.top().cycle < next) next = far_.top().cycle;
  if (next != kNone) {
    pending_ = next;
    wake_.notify(to_sc(period_ * next - sim_now(*this)));
  }
}

}  // namespace fabricsim
