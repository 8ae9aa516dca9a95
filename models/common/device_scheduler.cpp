#include "models/common/device_scheduler.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>

namespace fabricsim {

thread_local const DeviceScheduler* DeviceScheduler::t_running_ = nullptr;
thread_local int DeviceScheduler::t_side_ = 0;

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
  side_.push_back(1);
  if (id % 64 == 0) near_ = PortCalendar(id + 64);  // a bit per device (none scheduled yet)
  return id;
}

void DeviceScheduler::schedule(int id, int64_t cycle) {
  if (in_flight_) {
    // Threads, inside a window: the calendar is the main thread's between windows. Nothing
    // asked for inside a window can be due in it (the lookahead). Each thread has its list.
    if (cycle < window_end_)
      throw std::logic_error("threads: a device asked for a cycle inside the window");
    asked_[t_side_].v.push_back({cycle, id});
    return;
  }
  const int64_t old = due_[id];
  if (old <= cycle) return;
  if (old != kNone && near_.fits(old, now_)) near_.clear(old, id);  // (a far one goes stale)
  due_[id] = cycle;
  if (near_.fits(cycle, now_))
    near_.set(cycle, id);
  else
    far_.push(Far{cycle, id});
  if (running_ && cycle < window_end_ && id < current_) rescan_ = true;
  if (!running_ && cycle < pending_) {
    pending_ = cycle;
    wake_.notify(to_sc(period_ * cycle - sim_now(*this)));
  }
}

void DeviceScheduler::set_lookahead(int64_t cycles) {
  lookahead_ = std::clamp<int64_t>(cycles, 1, PortCalendar::kSlots / 2);
}

void DeviceScheduler::set_horizon(Time t) {
  // The cycles that start before t.
  const int64_t p = period_.as_fs();
  horizon_ = t.as_fs() > INT64_MAX - p ? kNone : (t.as_fs() + p - 1) / p;
}

void DeviceScheduler::set_parallel(std::vector<WindowWorker*> workers,
                                   std::function<void()> on_start, std::function<void()> on_end) {
  workers_ = std::move(workers);
  sides_ = static_cast<int>(workers_.size()) + 1;
  worker_wait_s_.assign(workers_.size(), 0.0);
  remote_.assign(static_cast<size_t>(sides_), nullptr);
  remote_busy_.assign(static_cast<size_t>(sides_), 0);
  share_.assign(static_cast<size_t>(sides_), {});
  asked_.assign(static_cast<size_t>(sides_), {});
  runs_.assign(static_cast<size_t>(sides_), {});
  mail_ = std::vector<Own<PortMailbox>>(static_cast<size_t>(sides_) * static_cast<size_t>(sides_));
  on_start_ = std::move(on_start);
  on_end_ = std::move(on_end);
}

void DeviceScheduler::run() {
  if (in_flight_) join();  // the window on the workers ends now
  if (held_) deliver_held();
  const int64_t c = sim_now(*this).as_fs() / period_.as_fs();  // woken at a cycle's start
  now_ = c;
  running_ = true;
  pending_ = kNone;
  while (!far_.empty() && near_.fits(far_.top().cycle, c)) {
    const Far f = far_.top();
    far_.pop();
    if (due_[f.id] == f.cycle) near_.set(f.cycle, f.id);
  }
  int64_t end = std::min(c + lookahead_, horizon_);
  if (end > c + 1 && bound_) {
    const Time b = bound_();
    if (b != Time::max()) end = std::min(end, (b.as_fs() + period_.as_fs() - 1) / period_.as_fs());
  }
  end = std::max(end, c + 1);
  if (sides_ > 1 && near_.next_cycle(c) != c) {
    // Woken at the end of a window with no device due (threads): nothing to run now.
    running_ = false;
    plan(c);
    return;
  }
  if (sides_ > 1 && end - c >= min_window_) {
    // The window's devices of each worker's side run there while this thread runs those of its
    // own side, now, and then the kernel runs the rest (the hosts) up to the window's end,
    // where this process joins the workers (or the rest does first: sync()). Each device runs
    // once in a window (run_window: its cycles there), so the devices due are taken out of the
    // calendar first, in id order; what they ask for meanwhile waits for the join.
    window_end_ = end;
    for (auto& v : share_) v.clear();
    for (int id = 0; id < static_cast<int>(clients_.size()); ++id)
      if (due_[id] < end) {
        near_.clear(due_[id], id);
        share_[steal_ ? 0 : side_[id]].push_back({due_[id], id});
        due_[id] = kNone;
      }
    in_flight_ = true;
    ++worker_windows_;
    if (on_start_) on_start_();
    if (steal_) {
      // The workers start on the list now; this thread joins them once the hosts have run.
      next_.store(0, std::memory_order_relaxed);
      if (!share_[0].empty())
        for (int s = 1; s < sides_; ++s) workers_[s - 1]->start([this, s] { run_taken(s); });
      pending_ = end;
      wake_.notify(to_sc(period_ * end - sim_now(*this)));
      return;
    }
    // (A side with nothing due stays idle: no hand-over.)
    for (int s = 1; s < sides_; ++s) {
      if (share_[s].empty()) continue;
      if (remote_[s]) {
        remote_[s]->start_window(now_, end, share_[s]);
        remote_busy_[s] = 1;
      } else {
        workers_[s - 1]->start([this, s] { run_share(s); });
      }
    }
    run_share(0);
    pending_ = end;
    wake_.notify(to_sc(period_ * end - sim_now(*this)));
    return;
  }
  if (on_start_) on_start_();
  t_running_ = this;
  if (end == c + 1) {
    // Devices may make others due in this cycle (a zero-latency hand-over): they run in it too.
    for (int id = near_.take(c); id >= 0; id = near_.take(c)) {
      due_[id] = kNone;
      clients_[id]->wake(c);
    }
  } else {
    // (Every cycle before `end` is within the calendar: lookahead_ < PortCalendar::kSlots.)
    window_end_ = end;
    run_window(end);
    window_end_ = 0;
  }
  t_running_ = nullptr;
  if (on_end_) on_end_();
  running_ = false;
  plan(end);
}

void DeviceScheduler::run_window(int64_t end) {
  t_running_ = this;
  const int n = static_cast<int>(clients_.size());
  do {
    rescan_ = false;
    int hinted = -1;  // the devices up to it were asked to prefetch (or are not due)
    for (int id = 0; id < n; ++id)
      while (due_[id] < end) {
        const int64_t d = due_[id];
        near_.clear(d, id);
        due_[id] = kNone;
        current_ = id;
        if (hinted < id) clients_[id]->prefetch_window();  // (the first, or made due since)
        if (hinted <= id) {  // the next device due: its state, while this one runs
          for (hinted = id + 1; hinted < n && due_[hinted] >= end;) ++hinted;
          if (hinted < n) clients_[hinted]->prefetch_window();
        }
        clients_[id]->run_window(d, end);
      }
  } while (rescan_);
  t_running_ = nullptr;
}

void DeviceScheduler::run_share(int side) {
  t_running_ = this;
  t_side_ = side;
  const std::vector<Far>& share = share_[side];
  runs_[static_cast<size_t>(side)].v += share.size();
  if (!share.empty()) clients_[share[0].id]->prefetch_window();
  for (size_t k = 0; k < share.size(); ++k) {
    if (k + 1 < share.size()) clients_[share[k + 1].id]->prefetch_window();
    clients_[share[k].id]->run_window(share[k].cycle, window_end_);
  }
  t_running_ = nullptr;
  t_side_ = 0;
}

void DeviceScheduler::run_taken(int side) {
  t_running_ = this;
  t_side_ = side;
  const std::vector<Far>& list = share_[0];
  // Each thread takes its next device before it runs the one it holds, so that it may ask for
  // that one's state meanwhile (a device another thread holds is not to be read).
  uint64_t ran = 0;
  size_t k = next_.fetch_add(1, std::memory_order_relaxed);
  if (k < list.size()) clients_[list[k].id]->prefetch_window();
  for (; k < list.size(); ++ran) {
    const size_t n = next_.fetch_add(1, std::memory_order_relaxed);
    if (n < list.size()) clients_[list[n].id]->prefetch_window();
    clients_[list[k].id]->run_window(list[k].cycle, window_end_);
    k = n;
  }
  runs_[static_cast<size_t>(side)].v += ran;
  t_running_ = nullptr;
  t_side_ = 0;
}

void DeviceScheduler::deliver_to(int side) {
  // By sender side, each box in call order: a side's switches run in id order and the sides
  // hold consecutive ids (Fabric::partition), so a host is handed what the switches sent it
  // in the order one thread calls it. A switch admits what it is handed by first bit, whatever
  // the order of the calls.
  t_running_ = this;
  t_side_ = side;
  for (int from = 0; from < sides_; ++from)
    mail_[static_cast<size_t>(side) * static_cast<size_t>(sides_) + static_cast<size_t>(from)]
        .v.deliver();
  t_running_ = nullptr;
  t_side_ = 0;
}

void DeviceScheduler::wait_all() {
  std::exception_ptr error;
  const auto t0 = std::chrono::steady_clock::now();
  for (WindowWorker* w : workers_) {
    if (!w) continue;
    try {
      w->wait();
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  main_wait_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (error) std::rethrow_exception(error);
  wait_remote();
}

void DeviceScheduler::wait_remote() {
  // Side by side in order: each side's calls to side t go to its box for t, as its thread's would.
  std::vector<PortMailbox*> out(static_cast<size_t>(sides_));
  for (int s = 1; s < sides_; ++s) {
    if (!remote_busy_[s]) continue;
    remote_busy_[s] = 0;
    for (int t = 0; t < sides_; ++t) out[t] = t == s ? nullptr : &mail_box(t, s);
    remote_[s]->wait(out, asked_[s].v);
  }
}

void DeviceScheduler::count_cross_calls() {
  for (int to = 0; to < sides_; ++to)
    for (int from = 0; from < sides_; ++from)
      if (to != from) cross_calls_ += mail_box(to, from).size();
}

void DeviceScheduler::set_remote(int side, RemoteSide* remote) {
  remote_[static_cast<size_t>(side)] = remote;
  min_window_ = 1;
}

void DeviceScheduler::deliver_now(int side) {
  if (!remote_[static_cast<size_t>(side)]) return;
  // A direct call reads the kernel's cycle: the first that can still run (SwitchModule).
  const int64_t p = period_.as_fs();
  const int64_t c = (sim_now(*this).as_fs() + p - 1) / p;
  // A host's call takes effect a link latency later (its frame's first bit arrives then): at or
  // after cycle c - 1 + lookahead. If the scheduler runs by then, the calls wait for it, and it
  // delivers them before anything else, one exchange for all (a window's end, where the hosts'
  // events often come first; the idle cycles between windows). Their replay reads the first
  // call's cycle: a receiving switch only compares it with its next work, which is later.
  if (pending_ != kNone && pending_ <= c - 1 + lookahead_) {
    if (!held_) held_cycle_ = c;
    held_ = true;
    return;
  }
  deliver_to_remote(side, c);
}

void DeviceScheduler::deliver_held() {
  held_ = false;
  for (int s = 1; s < sides_; ++s)
    if (remote_[s] && !mail_box(s, 0).empty()) deliver_to_remote(s, held_cycle_);
}

void DeviceScheduler::deliver_to_remote(int side, int64_t cycle) {
  RemoteSide* r = remote_[static_cast<size_t>(side)];
  std::vector<PortMailbox*> boxes;
  for (int from = 0; from < sides_; ++from) {
    boxes.push_back(&mail_box(side, from));
    cross_calls_ += boxes.back()->size();
  }
  r->start_delivery(cycle, 0, boxes);
  for (PortMailbox* b : boxes) b->clear();
  std::vector<PortMailbox*> out(static_cast<size_t>(sides_));
  for (int t = 0; t < sides_; ++t) out[t] = t == side ? nullptr : &mail_box(t, side);
  std::vector<ScheduledDevice> asked;
  r->wait(out, asked);
  for (int t = 0; t < sides_; ++t)
    if (out[t] && !out[t]->empty())
      throw std::logic_error("mpi: a delivery outside a window made calls to other sides");
  for (const ScheduledDevice& f : asked) schedule(f.id, f.cycle);
}

void DeviceScheduler::serve_window(int side, int64_t now, int64_t end,
                                   const std::vector<ScheduledDevice>& devices) {
  now_ = now;
  window_end_ = end;
  in_flight_ = true;
  share_[side] = devices;
  run_share(side);
  in_flight_ = false;
  window_end_ = 0;
}

void DeviceScheduler::serve_delivery(int side, int64_t now, int64_t window_end) {
  now_ = now;
  window_end_ = window_end;
  in_flight_ = true;
  deliver_to(side);
  in_flight_ = false;
  window_end_ = 0;
}

void DeviceScheduler::join() {
  // (The wake-up at the window's end stays set: run() then plans the next one.) The flags
  // change only once the workers are done: their devices read them.
  auto settle = [this] {
    in_flight_ = false;
    running_ = false;
    window_end_ = 0;
  };
  try {
    const auto reached = std::chrono::steady_clock::now();
    if (steal_) run_taken(0);  // what the workers have not taken yet
    wait_all();
    for (int w = 1; w < sides_; ++w) {  // the workers that finished first waited since
      const WindowWorker* k = workers_[static_cast<size_t>(w - 1)];
      if (k && !share_[static_cast<size_t>(steal_ ? 0 : w)].empty() && k->finished_at() < reached)
        worker_wait_s_[static_cast<size_t>(w - 1)] +=
            std::chrono::duration<double>(reached - k->finished_at()).count();
    }
    // The calls held for each side are delivered by that side's thread, all at once (each
    // touches only its side's devices), so that a switch's state stays in its thread's caches;
    // what the deliveries ask of the calendar waits in asked_ like the window's requests.
    count_cross_calls();
    const size_t n = static_cast<size_t>(sides_);
    std::vector<PortMailbox*> boxes;
    for (int s = 1; s < sides_; ++s) {
      bool any = false;
      for (size_t from = 0; from < n; ++from) any = any || !mail_[s * n + from].v.empty();
      if (!any) continue;
      if (remote_[s]) {
        boxes.clear();
        for (size_t from = 0; from < n; ++from) boxes.push_back(&mail_[s * n + from].v);
        remote_[s]->start_delivery(now_, window_end_, boxes);
        for (PortMailbox* b : boxes) b->clear();
        remote_busy_[s] = 1;
      } else {
        workers_[s - 1]->start([this, s] { deliver_to(s); });
      }
    }
    deliver_to(0);
    wait_all();
  } catch (...) {
    try {
      wait_all();
    } catch (...) {  // (the first error is the one reported)
    }
    settle();
    throw;
  }
  settle();
  for (auto& a : asked_) {  // what the devices asked for inside the window, side by side
    for (const Far& f : a.v) schedule(f.id, f.cycle);
    a.v.clear();
  }
  if (on_end_) on_end_();
}

void DeviceScheduler::plan(int64_t from) {
  while (!far_.empty() && due_[far_.top().id] != far_.top().cycle) far_.pop();
  int64_t next = near_.next_cycle(from);
  if (!far_.empty() && far_.top().cycle < next) next = far_.top().cycle;
  if (next != kNone) {
    pending_ = next;
    wake_.notify(to_sc(period_ * next - sim_now(*this)));
  }
}

}  // namespace fabricsim
