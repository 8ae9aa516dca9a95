// What the switch core's unit tests share: a sink that records departures and control frames, a
// packet maker, a loop that runs a core to idle, and the configuration keys that switch the
// structural limits off (tests of the timing rules want the slotted switch of theory; the limits
// have tests of their own, switch_limits_test.cpp). Test code only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/switch/switch_core.h"

namespace fabricsim::sw::test {

struct Departure {
  int port;
  Packet p;
  Time first, last;
};

class Recorder : public DepartureSink {
 public:
  struct Control {
    int port;
    ControlFrame f;
    Time first, last;
  };
  void on_departure(int port, const Packet& p, Time first, Time last) override {
    out.push_back({port, p, first, last});
  }
  void on_control(int port, const ControlFrame& f, Time first, Time last) override {
    control.push_back({port, f, first, last});
  }
  std::vector<Departure> out;
  std::vector<Control> control;
};

inline Packet make(uint64_t id, int src, int dst, uint64_t bytes, Time t, int tc = 0) {
  Packet p;
  p.id = id;
  p.src = src;
  p.dst = dst;
  p.tc = tc;
  p.size = Bytes(bytes);
  p.inject_time = t;
  return p;
}

// Runs the core until it has no work; returns the number of cycles that ran.
inline int64_t run_until_idle(SwitchCore& core, DepartureSink& rec) {
  int64_t cycles = 0;
  for (int64_t c = core.next_work_cycle(); c != EventWheel<int>::kNone;
       c = core.next_work_cycle(), ++cycles)
    core.run_cycle(c, rec);
  return cycles;
}

// Every structural limit off, explicitly (the code's defaults are finite).
inline std::vector<std::string> limits_off() {
  return {"ingress.admissions_per_cycle=0", "datapath.bytes_per_cycle=0",
          "buffer.bank_write_cells=0", "buffer.bank_read_cells=0"};
}

// The small chip of the core's tests: 4 ports at 800G, 250 B cells (2.5 ns = 5 cycles at 2 GHz),
// speedup 1, a 1 MB buffer with no reservation and every structural limit off; `base` adds the
// keys a file's tests share (classes, pipeline latencies), `extra` a test's own.
inline SwitchConfig small_chip(const std::vector<std::string>& base,
                               const std::vector<std::string>& extra) {
  std::vector<std::string> o = {"ports=4",
                                "port_speed=800Gbps",
                                "serdes.lanes=32",
                                "serdes.lane_rate=106.25Gbps",
                                "core_clock=2GHz",
                                "cell_size=250B",
                                "crossbar.speedup=1",
                                "buffer.size=1MB",
                                "buffer.reserved_per_port=0B"};
  const auto off = limits_off();
  o.insert(o.end(), off.begin(), off.end());
  o.insert(o.end(), base.begin(), base.end());
  o.insert(o.end(), extra.begin(), extra.end());
  SwitchConfig cfg;
  config::load(cfg, "", o);
  return cfg;
}

// Runs the core up to `until`, sampling progress every `every` (as the runner does between
// sc_start calls).
inline void run_sampled(SwitchCore& core, DepartureSink& rec, Time until, Time every, Time limit) {
  for (Time t = every; t <= until; t += every) {
    const int64_t end = core.cycle_of(t);
    for (int64_t c = core.next_work_cycle(); c != EventWheel<int>::kNone && c < end;
         c = core.next_work_cycle())
      core.run_cycle(c, rec);
    core.sample_progress(t, limit);
  }
}

}  // namespace fabricsim::sw::test
