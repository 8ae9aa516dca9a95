// A PCIe link between a device and its root complex, at the level of TLPs: each direction
// carries one TLP after another at the link's TLP byte rate, each TLP its payload plus its
// overhead (pcie_config.h), and arrives `latency` after its last byte left.
//
// Hardware: the transaction and data link layers of a PCIe link as a DMA engine uses them.
// - A posted write (a DMA write into host memory, or a doorbell into the device's BAR) is split
//   into TLPs of at most max_payload bytes at max_payload-aligned addresses (so none crosses a
//   4 KB boundary); the writer is done when its last TLP has left.
// - A read is split into requests of at most max_read_request bytes at aligned addresses
//   (header-only TLPs); the completer (the root complex and host memory) turns each into data,
//   returned in completions of at most max_payload bytes.
// Not modelled (each would lower throughput a little, and none is published per product): flow
// control credits and the tags that bound reads in flight, data-link ACK/NAK and credit DLLPs,
// replays. What is modelled is the link's bandwidth, shared in order of booking by everything
// that crosses it, and its latency. Plain C++: the TLM-2.0 module around it is PcieLinkModule
// (pcie_tlm.h).
#pragma once

#include <algorithm>
#include <cstdint>

#include "models/common/units.h"
#include "tlm/pcie_config.h"

namespace fabricsim::tlm_host {

class PcieLink {
 public:
  enum Dir { kToHost = 0, kToDevice = 1 };
  explicit PcieLink(const PcieConfig& cfg);

  const PcieConfig& config() const { return cfg_; }
  // Time on the link of a TLP carrying `payload` bytes (its overhead included).
  Time tlp_time(uint64_t payload) const;
  // Books a TLP carrying `payload` bytes in direction `d`, ready to go at `t`: returns when its
  // last byte has left (`left`) and when it has arrived at the other end.
  struct Sent {
    Time left, arrived;
  };
  Sent send_tlp(Dir d, Time t, uint64_t payload);

  // A posted write of [addr, addr + n) in direction `d`, ready at `t`: the last TLP's times.
  // `on_tlp(sent, addr, bytes)`, if given, is called for each TLP as it is booked (the target
  // writes each TLP's data as it arrives, as the hardware does).
  Sent write(Dir d, Time t, uint64_t addr, uint64_t n) {
    return write(d, t, addr, n, [](const Sent&, uint64_t, uint64_t) {});
  }
  template <class F>
  Sent write(Dir d, Time t, uint64_t addr, uint64_t n, F&& on_tlp) {
    Sent last{t, t};
    split(addr, n, cfg_.max_payload.count(), [&](uint64_t a, uint64_t k) {
      last = send_tlp(d, t, k);
      on_tlp(last, a, k);
    });
    return last;
  }

  // The same write, its TLPs handed over in runs of equal ones instead of one by one:
  // on_run(first arrival, arrival step, count, bytes each) for the first piece, the whole
  // max_payload pieces after it (one run), and the rest. For a target that books a run at once
  // (HostMemory::access_run).
  template <class F>
  Sent write_runs(Dir d, Time t, uint64_t addr, uint64_t n, F&& on_run);

  // A read of [addr, addr + n), requested in direction `d` at `t` and completed in the other.
  // `complete(arrival, addr, bytes)` is the completer: called once per request, in order, with
  // the time the request arrived; returns when that request's data is ready to be sent back.
  // Returns when the last completion has arrived at the requester.
  template <class F>
  Time read(Dir d, Time t, uint64_t addr, uint64_t n, F&& complete);

  uint64_t tlps(Dir d) const { return tlps_[d]; }
  uint64_t payload_bytes(Dir d) const { return payload_[d]; }
  Time busy(Dir d) const { return busy_[d]; }  // time the direction carried TLPs

 private:
  Time exact_tlp_time(uint64_t payload) const;
  // Books the TLPs of [addr, addr + n) split at multiples of `chunk`, all ready at `t`, as
  // send_tlp one by one would (the pieces after the first start as the one before ends): the
  // last one's times. The whole pieces in between are booked at once (a 4 KB read's sixteen
  // completions were sixteen calls); on_run(first arrival, step, count, bytes each) hears each
  // run of equal TLPs (write_runs).
  template <class F>
  Sent book_runs(Dir d, Time t, uint64_t addr, uint64_t n, uint64_t chunk, F&& on_run);
  // The first piece of [addr, addr + n) split at multiples of `chunk`.
  static uint64_t piece(uint64_t addr, uint64_t n, uint64_t chunk) {
    const uint64_t into = (chunk & (chunk - 1)) == 0 ? addr & (chunk - 1) : addr % chunk;
    return std::min(n, chunk - into);
  }
  // Calls f(addr, bytes) for each piece of [addr, addr + n) split at multiples of `chunk`.
  // (A mask for the power-of-two chunks, which validated sizes are: a packet's payload read
  // splits into a dozen pieces or more, and a 64-bit divide per piece showed in profiles.)
  template <class F>
  static void split(uint64_t addr, uint64_t n, uint64_t chunk, F&& f) {
    while (n > 0) {
      const uint64_t k = piece(addr, n, chunk);
      f(addr, k);
      addr += k;
      n -= k;
    }
  }

  PcieConfig cfg_;
  unsigned __int128 fs_num_, fs_den_;  // time of one byte on the link: fs_num_ / fs_den_ fs
  Time free_[2];                       // each direction is free from then
  uint64_t tlps_[2] = {0, 0}, payload_[2] = {0, 0};
  Time busy_[2];
  // The last TLP size timed and its time: nearly every TLP with data is a full max_payload, so
  // one entry saves the 128-bit division of most (requests without data have their own).
  mutable uint64_t memo_payload_ = UINT64_MAX;
  mutable Time memo_time_;
  Time request_time_;  // a TLP without data (a read request): between every read's completions
};

template <class F>
PcieLink::Sent PcieLink::write_runs(Dir d, Time t, uint64_t addr, uint64_t n, F&& on_run) {
  return book_runs(d, t, addr, n, cfg_.max_payload.count(), on_run);
}

template <class F>
PcieLink::Sent PcieLink::book_runs(Dir d, Time t, uint64_t addr, uint64_t n, uint64_t chunk,
                                   F&& on_run) {
  Sent last{t, t};
  if (n == 0) return last;
  const uint64_t first = piece(addr, n, chunk);
  last = send_tlp(d, t, first);
  on_run(last.arrived, Time(), uint64_t{1}, first);
  n -= first;
  if (const uint64_t whole = n / chunk; whole > 0) {
    // Each starts when the one before it ends (free_ >= t since the first).
    const Time dur = tlp_time(chunk);
    const Time start = std::max(t, free_[d]);
    const auto k = static_cast<int64_t>(whole);
    free_[d] = start + dur * k;
    busy_[d] += dur * k;
    tlps_[d] += whole;
    payload_[d] += whole * chunk;
    on_run(start + dur + cfg_.latency, dur, whole, chunk);
    last = Sent{free_[d], free_[d] + cfg_.latency};
    n -= whole * chunk;
  }
  if (n > 0) {
    last = send_tlp(d, t, n);
    on_run(last.arrived, Time(), uint64_t{1}, n);
  }
  return last;
}

template <class F>
Time PcieLink::read(Dir d, Time t, uint64_t addr, uint64_t n, F&& complete) {
  const Dir back = d == kToHost ? kToDevice : kToHost;
  const uint64_t mrrs = cfg_.max_read_request.count();
  // Completions in max_payload pieces, or at the root complex's completion boundary.
  const uint64_t piece =
      cfg_.read_completion.count() ? cfg_.read_completion.count() : cfg_.max_payload.count();
  Time last = t;
  // The requests go out back to back (no tag limit); each one's completions follow its data.
  split(addr, n, mrrs, [&](uint64_t a, uint64_t k) {
    const Sent req = send_tlp(d, t, 0);
    const Time ready = complete(req.arrived, a, k);
    last = book_runs(back, ready, a, k, piece, [](Time, Time, uint64_t, uint64_t) {}).arrived;
  });
  return last;
}

}  // namespace fabricsim::tlm_host
