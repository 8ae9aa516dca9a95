// A closed-loop traffic layer above the hosts' MACs: what an RDMA NIC (models/nic/nic_array.h)
// is to HostsModule, in place of an open-loop traffic source.
//
// Not hardware by itself: the seam between a host's port (its MAC and link-level flow control,
// host.h) and what drives it. HostsModule's one process serves both: it hands the endpoint every
// packet its hosts receive at the packet's last bit, runs it when it asked to be run, and lends it
// the hosts' transmit side (HostPorts). The endpoint keeps its devices' state; they interact only
// through the packets they send (with the links' latency), as every device does.
#pragma once

#include <vector>

#include "models/common/packet.h"
#include "models/common/telemetry.h"
#include "models/common/units.h"

namespace fabricsim::host {

// The hosts' transmit side as an endpoint sees it.
class HostPorts {
 public:
  virtual ~HostPorts() = default;
  // From when host h's MAC takes a frame without queueing it (>= now: nothing waits and the
  // wire is free by its preamble's end), or Time::max(): frames wait for flow control, and a
  // tx_ready(h) call will say when they have gone.
  virtual Time tx_free(int h, Time now) const = 0;
  // Hands packet p, generated at `now`, to host h's MAC (which sets its inject_time).
  virtual void send(int h, Packet& p, Time now) = 0;
  // The same for a frame with an INT header (models/common/telemetry.h) and its stack.
  virtual void send_int(int h, Packet& p, const IntStack& tel, Time now) {
    (void)tel;
    send(h, p, now);
  }
};

class Endpoint {
 public:
  virtual ~Endpoint() = default;
  virtual void attach(HostPorts* ports) = 0;
  // Packet p reached host h, its last bit at `t` (called at t, in time order).
  virtual void receive(int h, const Packet& p, Time t) = 0;
  // The same for a packet with an INT header, with its stack (valid for the call).
  virtual void receive_int(int h, const Packet& p, const IntStack& tel, Time t) {
    (void)tel;
    receive(h, p, t);
  }
  // Does what is due at `now`; returns when it next wants to run (Time::max(): not before a
  // packet or a tx_ready call).
  virtual Time run(Time now) = 0;
  // Host h's MAC has sent every frame that waited for flow control.
  virtual void tx_ready(int h, Time now) = 0;
  // The run is over: post no new work (what is in flight finishes).
  virtual void stop(Time now) = 0;

  // Host windows (HostsModule, "host windows"): the hosts run one after another, each through
  // a stretch of time in which nothing one does can reach another (their packets take a link
  // latency at least), so that a host's state stays in the CPU's caches across its events.
  // Whether the endpoint allows it now: the devices then meet only through their packets (no
  // layer above them posts work that takes effect at once). Default: never.
  virtual bool window_safe() const { return false; }
  // A window before `end` starts: appends the hosts whose device has work before it (the
  // others may too: a host is run once).
  virtual void begin_window(Time end, std::vector<int>& hosts) {
    (void)end;
    (void)hosts;
  }
  // When host h's device next has work of its own (Time::max(): none).
  virtual Time host_next(int h) const {
    (void)h;
    return Time::max();
  }
  // Host h will take packet p in this window: the endpoint may ask the CPU for the state it will
  // touch (a hint: nothing changes).
  virtual void prefetch_arrival(int h, const Packet& p) const {
    (void)h;
    (void)p;
  }
  // Host h runs next in this window: the same kind of hint for its device's own state.
  virtual void prefetch_host(int h) const { (void)h; }
  // Does host h's device's work due at `now` (as run() does for every device).
  virtual void run_host(int h, Time now) {
    (void)h;
    (void)now;
  }
  // The window is over (every host ran through it): does what the layer above the devices was
  // told meanwhile, up to `end`; returns when the endpoint next wants to run, as run() does.
  virtual Time end_window(Time end) {
    (void)end;
    return Time::max();
  }
};

}  // namespace fabricsim::host
