#include "testbenches/cosim/islip_cycle.h"

namespace fabricsim::cosim {

IslipCycleModel::IslipCycleModel(int ports, int iterations)
    : n_(ports),
      k_(iterations),
      sched_(ports, iterations),
      single_(ports, 1),
      pending_(static_cast<size_t>(ports), -1),
      single_match_(static_cast<size_t>(ports), -1) {
  pins_.match.assign(static_cast<size_t>(ports), -1);
  pins_.grant_ptr.assign(static_cast<size_t>(ports), 0);
  pins_.accept_ptr.assign(static_cast<size_t>(ports), 0);
  reset();
}

void IslipCycleModel::reset() {
  sched_.reset();
  single_.reset();
  remaining_ = 0;
  pins_.busy = pins_.done = false;
  for (auto& m : pins_.match) m = -1;
  refresh_pointers();
}

void IslipCycleModel::refresh_pointers() {
  for (int p = 0; p < n_; ++p) {
    pins_.grant_ptr[p] = sched_.grant_pointer(p);
    pins_.accept_ptr[p] = sched_.accept_pointer(p);
  }
}

bool IslipCycleModel::edge(bool start, const std::vector<PortSet>& requests,
                           const PortSet& out_ready) {
  pins_.done = false;
  if (pins_.busy) {
    if (--remaining_ == 0) {
      pins_.busy = false;
      pins_.done = true;
      pins_.match = pending_;
    }
    return false;
  }
  if (!start) return false;
  sched_.schedule(requests, out_ready, pending_);
  first_size_ = 0;
  if (k_ > 1) {
    single_.schedule(requests, out_ready, single_match_);
    for (int m : single_match_) first_size_ += m >= 0;
  } else {
    for (int m : pending_) first_size_ += m >= 0;
  }
  refresh_pointers();
  remaining_ = k_ - 1;
  if (remaining_ == 0) {
    pins_.done = true;
    pins_.match = pending_;
  } else {
    pins_.busy = true;
  }
  return true;
}

}  // namespace fabricsim::cosim
