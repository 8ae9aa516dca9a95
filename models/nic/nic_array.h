// The RDMA NICs of a fabric run: one Nic per host, driven by HostsModule's process as its
// endpoint (models/host/endpoint.h), with the message workload that posts to them.
//
// Not hardware by itself: what serves many NICs from one process (a process per NIC would wake
// per event each), and what reads the NICs at the end of the run: the integrity check (every
// posted message delivered exactly once and intact, or accounted as in flight or failed) and the
// flow completion times (fct.csv: handed out as the run goes, stream_fct, or at its end). The
// NICs share nothing: each has its own QPs, PCIe link and host memory, and they meet only
// through the packets they send.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/common/min_heap.h"
#include "models/host/endpoint.h"
#include "models/nic/message_workload.h"
#include "models/nic/nic.h"

namespace fabricsim::nic {

class NicArray;

// A closed-loop workload above the NICs (the ranks' programs of models/workload/): it posts
// messages as its programs reach them and hears when each completes and is delivered, where a
// MessageSource posts a list on its start times.
class MessageDriver {
 public:
  virtual ~MessageDriver() = default;
  // Once, at the run's first step: posts what is ready (nics.post).
  virtual void start(NicArray& nics, Time now) = 0;
  // Message `id` (as posted): its send CQE in the sender's memory at t; received whole at t (its
  // receive CQE, or its last byte for a plain WRITE). Called at t.
  virtual void completed(uint64_t id, Time t) = 0;
  virtual void delivered(uint64_t id, Time t) = 0;
  // Does what is due at `now`; returns when it next must (Time::max(): not before a notice).
  virtual Time run(Time now) = 0;
  // The messages it posts in all; the work it has not finished (0: done).
  virtual uint64_t total() const = 0;
  virtual uint64_t left() const = 0;
  // No message it posts from now on has an id below this (0: it cannot tell; UINT64_MAX: it
  // posts no more). NicArray::stream_fct writes a row only below it.
  virtual uint64_t first_unposted() const { return 0; }
};

class NicArray : public host::Endpoint {
 public:
  // `line_rates`: each host's port rate; `ect`: data packets are ECN-capable; `entropy`: the
  // switches hash the packets' entropy (the NICs write it: Nic).
  NicArray(const NicConfig& cfg, const std::vector<BitRate>& line_rates, bool ect,
           std::unique_ptr<MessageSource> source, bool entropy = false);
  NicArray(const NicConfig& cfg, const std::vector<BitRate>& line_rates, bool ect,
           std::unique_ptr<MessageDriver> driver, bool entropy = false);

  // The driver's posting: message m (its id unique in the run) from m.src, at `now`.
  void post(const Message& m, Time now);
  // The driver's work not finished (0 without a driver).
  uint64_t driver_left() const { return driver_ ? driver_->left() : 0; }
  const MessageDriver* driver() const { return driver_.get(); }

  void attach(host::HostPorts* ports) override { ports_ = ports; }
  void receive(int h, const Packet& p, Time t) override;
  void receive_int(int h, const Packet& p, const IntStack& tel, Time t) override;
  Time run(Time now) override;
  void tx_ready(int h, Time now) override { touch(h, now); }
  void stop(Time) override { stopped_ = true; }
  // Host windows (host::Endpoint): allowed once nothing is posted from above any more (a
  // driver that has posted its every message, a message list all posted) and no rate trace
  // samples every NIC at one instant. The driver then hears of completions and deliveries at
  // the window's end, in their time order: it only counts them.
  bool window_safe() const override;
  void begin_window(Time end, std::vector<int>& hosts) override;
  Time host_next(int h) const override { return queued_[h]; }
  void run_host(int h, Time now) override;
  void prefetch_arrival(int h, const Packet& p) const override { nics_[h]->prefetch_arrival(p); }
  void prefetch_host(int h) const override { nics_[h]->prefetch_self(); }
  Time end_window(Time end) override;

  int size() const { return static_cast<int>(nics_.size()); }
  // Test-only (FABRICSIM_FAULT=nic_payload): every NIC miscounts one packet it places.
  void inject_payload_fault() {
    for (auto& n : nics_) n->inject_payload_fault();
  }
  const Nic& nic(int h) const { return *nics_[h]; }
  // What the fabric knows of the path from host h to each peer (Nic::set_paths), for all NICs.
  void set_paths(const std::function<CcPath(int32_t h, int32_t peer)>& f) {
    for (auto& n : nics_) {
      const int32_t h = n->id();
      n->set_paths([f, h](int32_t peer) { return f(h, peer); });
    }
  }
  // Messages posted and neither completed nor failed, over all NICs.
  uint64_t outstanding() const;
  // A lower bound on the instant every message of a message list is done (completed or
  // failed), at `now`: not before the next one is posted, nor before each NIC has sent its
  // unsent bytes once at line rate, nor before the bytes posted toward each NIC have arrived
  // there and left its receive pipeline, at its line rate (less one packet that may be on its
  // way in), unless messages fail first, which takes retry_count + 1 timeouts in a row (once
  // a timer has fired anywhere: `now`). With a driver (a workload posting as it goes): `now`.
  // The runner's drain need not look before it.
  Time done_not_before(Time now) const;
  // A finite workload's messages not yet posted (0 for an endless one).
  uint64_t unposted() const { return total_ > posted_ ? total_ - posted_ : 0; }
  uint64_t total_messages() const { return total_; }
  Nic::Stats totals() const;
  // What the progress line shows, from each NIC's own counters without totals()'s pass over
  // every QP (a million in a 1,024-rank all-to-all: ~0.2 s, which the line on a terminal paid
  // several times a second): messages posted, completed and failed, their bytes, and the
  // payload that has reached the receivers (Nic::arrived_payload: retransmitted copies
  // included). A direct all-to-all completes its messages only near its end; the payload arrived
  // says how far it is.
  struct Progress {
    uint64_t posted = 0, completed = 0, failed = 0;
    uint64_t bytes_posted = 0, bytes_completed = 0, payload_arrived = 0;
  };
  Progress progress() const;

  // Every posted message: delivered exactly once with its checksum, or in flight, or failed.
  // Appends a violation per message that is not (at most `max_listed`, then a count).
  void check(std::vector<std::string>& violations, size_t max_listed = 10) const;
  // The work asked for was done: no message failed (its QP gave up after its retries) and
  // none is still in flight. Appends one line for each kind there is, with the lowest
  // `max_ids` message ids; `when` says what ended the run ("at sim.duration + ...").
  void check_done(std::vector<std::string>& violations, const std::string& when,
                  size_t max_ids = 5) const;

  // What the receiver's record said of a message delivered (its record is not kept: the
  // sender's SentMessage holds its time and whether it came intact).
  struct Delivered {
    int32_t src = 0;
    uint16_t qp_index = 0;
    uint64_t seq = 0;
    uint64_t bytes = 0;
    uint64_t checksum = 0;  // 0 when for_each_fct is asked for no sums
    Time delivered;
  };
  // One row per posted message, in id order.
  struct Fct {
    const SentMessage* sent;
    std::optional<Delivered> received;  // none: not delivered
  };
  std::vector<Fct> fct() const;
  // The same rows one at a time (8 B a message while it goes, not a row each); `sums`: fill
  // Delivered::checksum (a pass over each message's packets). After stream_fct, the rows it
  // has not handed out (all of higher ids than those it did).
  void for_each_fct(const std::function<void(const Fct&)>& f, bool sums) const;

  // fct.csv's rows as the run goes (a run of 33.5 M messages kept 3.2 GB of records to its end
  // for them). keep_fct_order(), before the first post, makes the array note every message's id
  // as it is posted (16 B while its row is not out). Then each stream_fct(f), at an instant
  // the NICs are not running (between the kernel's steps), hands f, in id order, the row of
  // every message completed and delivered intact while no message of a lower id is in flight,
  // failed, not intact, or not posted yet (MessageDriver::first_unposted; a MessageSource posts
  // in id order), and drops its record: check() and for_each_fct read the rest, which such a
  // message would add nothing to (it is no violation). RDMA READs, not matched here (their
  // requester's record), wait for the end, and hold the rows after theirs.
  void keep_fct_order() { fct_order_ = true; }
  void stream_fct(const std::function<void(const Fct&)>& f);
  // Rows stream_fct handed out.
  uint64_t fct_streamed() const { return streamed_; }
  // What a message's receiver must have summed (Nic::checksum, its sender's packets).
  uint64_t checksum(const SentMessage& s) const { return nics_[s.m.src]->checksum(s); }

  // The rate trace (nic.rate_trace_interval): every QP's pacer rate and congestion-control
  // state, sampled at multiples of `interval` (Time(): off), at most `max_rows` rows (then
  // counted in rate_rows_not_recorded()).
  void trace_rates(Time interval, uint64_t max_rows) {
    rate_interval_ = interval;
    rate_max_rows_ = max_rows;
    next_sample_ = interval > Time() ? Time() : Time::max();
  }
  struct RateRow {
    Time t;
    int32_t nic;
    Nic::QpRate qp;
  };
  const std::vector<RateRow>& rate_rows() const { return rate_rows_; }
  uint64_t rate_rows_not_recorded() const { return rate_rows_dropped_; }

 private:
  void touch(int h, Time now);
  void schedule(int h, Time t);
  // When the array next wants to run (run(), end_window()).
  Time next_time() const;
  // Hands the driver the notices due before `before`, in time order; whether there were any.
  bool tell_driver(Time before);
  void take_notices(int h);
  // Matches NIC h's messages received since the last call with their senders' records.
  void match_received(int h);

  // With a driver: completions and deliveries waiting for their time, and the message id of each
  // posted message by (source, destination, QP, seq) until it is delivered.
  struct Notice {
    Time t;
    uint64_t seq;
    uint64_t id;
    bool delivered;
    bool operator>(const Notice& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  std::unique_ptr<MessageDriver> driver_;
  bool driver_started_ = false;
  Time driver_next_ = Time::max();
  std::priority_queue<Notice, std::vector<Notice>, std::greater<>> notices_;
  uint64_t notice_seq_ = 0;
  std::unordered_map<uint64_t, uint64_t> ids_;
  std::vector<uint32_t> done_scratch_, rx_scratch_;
  // Deliveries matched with a posted message, and all of them (check(): exactly once); what
  // arrived of those not intact, by message id, for check()'s report.
  uint64_t matched_ = 0, delivered_ = 0;
  std::unordered_map<uint64_t, std::pair<uint64_t, uint64_t>> not_intact_;  // (bytes, checksum)

  std::vector<std::unique_ptr<Nic>> nics_;
  // Per NIC: payload bytes posted toward it (a WRITE's or SEND's destination, a READ's
  // requester), against Nic::arrived_payload (done_not_before).
  std::vector<uint64_t> bound_for_;
  // Both posting paths (a driver's, a list's): the NIC's post and the array's counts.
  void post_to_nic(const Message& m, Time now);
  std::vector<Reth> reths_;  // the READ requests' RETHs (nic.h, "RDMA READ")
  host::HostPorts* ports_ = nullptr;
  std::unique_ptr<MessageSource> source_;
  Message next_;
  bool have_next_ = false;
  bool stopped_ = false;
  uint64_t total_ = 0, posted_ = 0;
  // (time, nic) wake-ups, earliest first; queued_[h]: the earliest queued for NIC h.
  // (The NIC's number widened to 64 bits: a record without padding, so that a wake-up pushed
  // and popped right after is read back with the widths it was written with, store-forwarded.)
  MinHeap<std::pair<Time, int64_t>> wakes_;
  std::vector<Time> queued_;
  // Inside a host window: its end (a wake-up before it is run by run_host, not queued); else 0.
  Time window_end_;
  Time rate_interval_, next_sample_ = Time::max();
  uint64_t rate_max_rows_ = 0, rate_rows_dropped_ = 0;
  std::vector<RateRow> rate_rows_;
  std::vector<Nic::QpRate> scratch_;
  // keep_fct_order: every message posted whose row is not out, lowest id first.
  struct Posted {
    uint64_t id;
    int32_t nic;
    uint32_t index;  // into its NIC's sent()
    bool operator<(const Posted& o) const { return id < o.id; }
  };
  void note_posted(int src);
  bool fct_order_ = false;
  MinHeap<Posted> unstreamed_;
  uint64_t streamed_ = 0;
};

}  // namespace fabricsim::nic
