// The ingress pipelines' admission rate: how many packets per cycle the chip can admit.
//
// Hardware: a switch chip's ports share a few ingress pipelines (parser, forwarding lookup, the
// MMU's admission decision), each taking a fixed number of packets per clock. Port p belongs to
// pipeline floor(p x pipelines / ports) (contiguous groups). A packet whose first cell is seen in
// a cycle where its pipeline has admitted its share waits for a later cycle: it is delayed, never
// dropped for it (its cells keep arriving meanwhile). Parameters: pipelines and
// admissions_per_cycle (0: unlimited, the idealised switch of theory).
//
// Packets that wait queue per pipeline in arrival order (the ingress FIFO before the pipeline; not
// bounded in the model), and go first in the next cycles, oldest first. Per pipeline the count is
// kept with its cycle, so a new cycle needs no clearing; take() is O(1) and allocates nothing, and
// a cycle's waiting admissions cost what they admit (the queues grow by doubling, kept).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fabricsim::sw {

class IngressAdmission {
 public:
  // per_cycle = 0: unlimited. ports, pipelines >= 1.
  IngressAdmission(int ports, int pipelines, int per_cycle);

  bool limited() const { return per_cycle_ > 0; }
  int pipeline_of(int port) const { return pipe_of_[static_cast<size_t>(port)]; }
  // Takes an admission slot of `port`'s pipeline in `cycle` if one is left; cycles must not go
  // backwards. False: the packet waits (counted).
  bool take(int port, int64_t cycle) {
    if (!limited()) return true;
    Slot& s = slots_[static_cast<size_t>(pipe_of_[static_cast<size_t>(port)])];
    if (s.cycle != cycle) {
      s.cycle = cycle;
      s.used = 0;
    }
    if (s.used >= per_cycle_) return false;
    ++s.used;
    return true;
  }
  // Cycles packets waited for a slot, summed (counted as they are admitted).
  uint64_t waits() const { return waits_; }

  // A packet of `port` found no slot in `cycle`: it waits in its pipeline's queue.
  void wait(int port, uint32_t pkt, int64_t cycle) {
    Queue& q = queues_[static_cast<size_t>(pipe_of_[static_cast<size_t>(port)])];
    q.items.push_back(Waiting{pkt, cycle});
    ++waiting_;
  }
  bool waiting() const { return waiting_ > 0; }
  // Admits waiting packets in `cycle`, before that cycle's arrivals: per pipeline, oldest first,
  // as many as its slots allow. f(pkt, cycles_waited) for each.
  template <class F>
  void admit_waiting(int64_t cycle, F&& f) {
    for (size_t p = 0; p < queues_.size() && waiting_ > 0; ++p) {
      Queue& q = queues_[p];
      Slot& s = slots_[p];
      if (s.cycle != cycle) {
        s.cycle = cycle;
        s.used = 0;
      }
      while (q.head < q.items.size() && s.used < per_cycle_) {
        const Waiting w = q.items[q.head++];
        ++s.used;
        --waiting_;
        waits_ += static_cast<uint64_t>(cycle - w.since);
        f(w.pkt, cycle - w.since);
      }
      if (q.head == q.items.size()) {
        q.items.clear();
        q.head = 0;
      } else if (q.head > 1024 && 2 * q.head > q.items.size()) {
        q.items.erase(q.items.begin(), q.items.begin() + static_cast<std::ptrdiff_t>(q.head));
        q.head = 0;
      }
    }
  }

 private:
  struct Slot {
    int64_t cycle = -1;
    int32_t used = 0;
  };
  struct Waiting {
    uint32_t pkt;
    int64_t since;  // the cycle it first found no slot
  };
  struct Queue {
    std::vector<Waiting> items;
    size_t head = 0;
  };
  int32_t per_cycle_;
  std::vector<int32_t> pipe_of_;
  std::vector<Slot> slots_;
  std::vector<Queue> queues_;
  uint64_t waits_ = 0;
  uint64_t waiting_ = 0;
};

}  // namespace fabricsim::sw
