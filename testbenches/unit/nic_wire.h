// NICs on a fake wire for the NIC's unit tests (nic_device_test, nic_device_fct_test): each
// host's frames serialised at the line rate and delivered a latency later, through a switch that
// only forwards; some dropped or altered on purpose by the test (Wire::on_frame).
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "models/nic/nic_array.h"
#include "testbenches/unit/loaded_config.h"

namespace fabricsim::nic {

class ListSource : public MessageSource {
 public:
  explicit ListSource(std::vector<Message> m) : m_(std::move(m)) {}
  bool next(Message& m) override {
    if (i_ >= m_.size()) return false;
    m = m_[i_];
    m.id = i_++;
    return true;
  }
  uint64_t total() const override { return m_.size(); }

 private:
  std::vector<Message> m_;
  size_t i_ = 0;
};

// Hosts joined by ideal wires through a switch that only forwards (after `latency`).
class Wire : public host::HostPorts {
 public:
  Wire(NicArray& nics, BitRate rate, Time latency)
      : nics_(nics), rate_(rate), latency_(latency), free_(static_cast<size_t>(nics.size())) {
    nics.attach(this);
  }
  // Called for every frame sent; returns false to lose it (it may also alter it).
  std::function<bool(Packet&)> on_frame = [](Packet&) { return true; };
  // Called after each instant the NICs ran (what a fabric's runner does between its steps).
  std::function<void(Time)> after_step;

  Time tx_free(int h, Time now) const override { return std::max(now, free_[h]); }
  void send(int h, Packet& p, Time now) override {
    const Time ser = rate_.serialization(Bytes(p.size.count() + 20));  // preamble + IFG
    free_[h] = now + ser;
    ++frames;
    if (on_frame(p)) q_.push({now + ser + latency_, seq_++, p});
  }
  // Runs until nothing is left to do (or `limit`); returns the time it stopped.
  Time run(Time limit = Time::us(100000)) {
    Time now;
    Time wake = nics_.run(now);
    for (;;) {
      const Time t = std::min(wake, q_.empty() ? Time::max() : q_.top().t);
      if (t == Time::max() || t > limit) return now;
      now = t;
      while (!q_.empty() && q_.top().t <= now) {
        const Arrival a = q_.top();
        q_.pop();
        nics_.receive(a.p.dst, a.p, now);
      }
      wake = nics_.run(now);
      if (after_step) after_step(now);
    }
  }
  uint64_t frames = 0;

 private:
  struct Arrival {
    Time t;
    uint64_t seq;
    Packet p;
    bool operator>(const Arrival& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  NicArray& nics_;
  BitRate rate_;
  Time latency_;
  std::vector<Time> free_;
  std::priority_queue<Arrival, std::vector<Arrival>, std::greater<>> q_;
  uint64_t seq_ = 0;
};

inline Message msg(int src, int dst, uint64_t bytes, Time start = Time(), Verb v = Verb::kWrite) {
  Message m;
  m.src = src;
  m.dst = dst;
  m.bytes = bytes;
  m.start = start;
  m.verb = v;
  return m;
}

struct Pair {
  explicit Pair(std::vector<Message> m, std::vector<std::string> o = {}, int hosts = 2,
                bool entropy = false)
      : cfg(test::loaded<NicConfig>(o)),
        nics(cfg, std::vector<BitRate>(static_cast<size_t>(hosts), BitRate::gbps(400)),
             cfg.cc != "none", std::make_unique<ListSource>(std::move(m)), entropy),
        wire(nics, BitRate::gbps(400), Time::ns(500)) {}
  NicConfig cfg;
  NicArray nics;
  Wire wire;
  std::vector<std::string> violations() {
    std::vector<std::string> v;
    nics.check(v);
    return v;
  }
};

}  // namespace fabricsim::nic
