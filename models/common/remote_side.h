// A side of a parallel run that another process runs (MPI ranks: models/sim/mpi_partition.h).
//
// Not hardware: part of the simulation kernel's partitioning (docs/architecture.md, "MPI"). The
// DeviceScheduler of the process that runs the kernel (rank 0) keeps the calendar of every
// device; for a side that another process runs it hands a RemoteSide what a WindowWorker would
// run there (a window's devices, or the calls held for the side at the window's end) and, at
// the join, takes back what the side did: its calls to devices of other sides and its schedule()
// requests, as a worker thread leaves them in the mailboxes and request lists.
#pragma once

#include <cstdint>
#include <vector>

namespace fabricsim {

class PortMailbox;

// A device due in a cycle (the scheduler's calendar entries).
struct ScheduledDevice {
  int64_t cycle;
  int id;
  bool operator>(const ScheduledDevice& o) const {
    return cycle != o.cycle ? cycle > o.cycle : id > o.id;
  }
};

class RemoteSide {
 public:
  virtual ~RemoteSide() = default;
  // Runs `devices` (each from its cycle) through the window of cycles before `end`; `now`: the
  // scheduler's cycle (what the devices read as theirs).
  virtual void start_window(int64_t now, int64_t end,
                            const std::vector<ScheduledDevice>& devices) = 0;
  // Delivers the calls held for the side, boxes[0], boxes[1], ... in turn (sender side order);
  // `now`: the cycle the receivers read; `window_end`: the window being joined (0: none).
  virtual void start_delivery(int64_t now, int64_t window_end,
                              const std::vector<PortMailbox*>& boxes) = 0;
  // Waits for the side to finish what was started: its calls to side t are posted to out[t]
  // (out[own side] is null), its schedule() requests appended to `asked`, in call order.
  virtual void wait(const std::vector<PortMailbox*>& out, std::vector<ScheduledDevice>& asked) = 0;
};

}  // namespace fabricsim
