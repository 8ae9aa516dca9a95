// Calls from one partition of a parallel run (sim.threads) to another, held while a window runs
// and delivered in the order they were made once it has ended.
//
// Not hardware: what stands between partitions of the fabric (the switches of each worker
// thread, a window of cycles at a time, and the hosts and switches of the main thread) on the
// wires that join them. One box per (receiving side, sending side): only the sender's thread
// writes it in a window, only the receiver's reads it at the join. A call made inside a window
// takes effect at least a link latency later, after the window (the lookahead), so delivering it
// when the window ends, in call order, changes nothing: each side sees the others' calls with
// the times a one-thread run gives them (docs/architecture.md, "Threads").
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "models/common/packet.h"
#include "models/common/telemetry.h"
#include "models/common/units.h"

namespace fabricsim {

struct PortMail {
  void (*deliver)(const PortMail&);  // replays the call
  void* to;                          // its receiver
  int port;
  Time first, last;               // the frame's first and last bit (or the times the call had)
  int64_t cycle;                  // what else the call had (the receiver's cycle at the call)
  Packet p;                       // a packet (transfer) ...
  ControlFrame f;                 // ... or a control frame
  const IntStack* tel = nullptr;  // a packet's INT stack (PortMailbox::keep), or none
};

class PortMailbox {
 public:
  void post(const PortMail& m) { mail_.push_back(m); }
  // A copy of an INT stack that lives until the mail is delivered, for PortMail::tel.
  const IntStack* keep(const IntStack& t) {
    tel_.push_back(t);
    return &tel_.back();
  }
  // Replays every call held, oldest first, and empties the box (its memory is kept).
  void deliver() {
    for (const PortMail& m : mail_) m.deliver(m);
    mail_.clear();
    tel_.clear();
  }
  bool empty() const { return mail_.empty(); }
  size_t size() const { return mail_.size(); }
  // MPI: the calls held, to send to the process that runs their receivers; then clear().
  const std::vector<PortMail>& held() const { return mail_; }
  void clear() {
    mail_.clear();
    tel_.clear();
  }

 private:
  std::vector<PortMail> mail_;
  std::deque<IntStack> tel_;  // (a deque: the pointers stay valid as it grows)
};

}  // namespace fabricsim
