// The switch core's per-packet records and queues (SwitchCore's private data path state, apart so
// that switch_core.h holds the chip's interface and timing rules): the packet pool's record, the
// cell cursors beside it, the intrusive queue heads and the egress port's wire state. Only the
// switch core's sources use them (through SwitchCore's aliases).
#pragma once

#include <cstdint>
#include <vector>

#include "models/common/fifo.h"
#include "models/common/packet.h"
#include "models/common/units.h"
#include "models/switch/shared_buffer.h"

namespace fabricsim::sw::core {

constexpr uint32_t kNil = UINT32_MAX;
enum class Ev : uint8_t {
  kQueueReady,
  kCellReady,
  kEgressCell,
  kEgressDone,
  kEgressRetry,     // flow control may let a blocked egress port start (pkt = port)
  kControlArrival,  // a control frame from a peer takes effect (pkt = index in ctrl_pool_)
  kEgressJoin,      // egress.start no_underrun: the packet may start now (its eg_ready)
  kCellWrite,       // the packet's next cell is due to be written into the buffer
};
struct Event {
  Ev kind;
  uint32_t pkt;  // packet slot, or port for kEgressDone
};
// A packet waiting in the egress pipeline to join its egress class queue (egress.start
// no_underrun: at its eg_ready), in SwitchCore's line of joins: its egress port, class and frame
// bytes, taken while its record was at hand, so that joining reads nothing of the record (a
// cache miss per hop when the queue is deep: the record was last touched at admission); and its
// place among the wheel's events of its cycle (EventWheel::take_order).
struct Join {
  uint32_t pkt;
  uint16_t out;
  uint8_t tc;
  uint32_t bytes;
  uint32_t order;
};
// Per-packet state, exactly two cache lines: packets are touched at arrival, admission, every
// crossbar transfer and departure, and the pool is the largest hot structure.
struct alignas(64) Pkt {
  Packet p;
  Time first_bit;
  // Earliest start on the egress wire; with egress.start no_underrun, while the packet crosses,
  // the latest (arrival of cell k at the egress - wire time of the k cells before it).
  Time eg_ready;
  Time tx_start, tx_base_time, tx_end;
  int64_t ready_at = 0;  // cycle in which cell cells_sent (the next to cross) is eligible
  SharedBuffer::Allocation alloc;
  uint32_t in_next = kNil;  // link in the ingress queue (VOQ or FIFO)
  uint32_t tx_base_bytes = 0;
  int16_t in = 0, out = 0;  // ingress and egress port (ports <= 512)
  uint16_t cells = 0, cells_sent = 0, cells_at_egress = 0;  // <= 65535 B / 16 B cells
  bool measured = false;
  // Cell allocation: dropped mid-way (drop_mid_packet: counted, never delivered), and joined
  // its ingress queue (queue_ready).
  bool stomped = false, queued = false;
  uint16_t written = 0;  // cells written into the buffer (occupancy grows cell by cell)
  // Cycles the packet waited for an admission slot of its pipeline: its processing, and so
  // every cell's eligibility for the crossbar, is that much later.
  uint16_t admit_lag = 0;
  // Cell allocation: the cell ids it holds in the buffer, one per arrival (packet allocation
  // holds all its cells from admission: held_cells()).
  uint16_t taken = 0;
};
// Pkt::ready_at of a packet whose next cell (after the first) is not written yet (a bank
// conflict delayed it): its write wakes it.
constexpr int64_t kWaitWrite = INT64_MAX / 4;
// With bank limits or cell allocation: the ids of a packet's next cell to write (cell
// allocation: the last it took, which its next one is linked behind) and to read (its list in
// the buffer; kNoCell when it has read all it took so far), beside the pool (Pkt has no room
// left), indexed like it.
struct CellCursor {
  uint32_t write_cell = 0, read_cell = 0;
  int64_t booked = -1;       // the cycle the next cell's write is booked for (-1: not asked)
  int64_t read_booked = -1;  // shared_memory: the cycle its next read is booked for
};
struct List {
  uint32_t head = kNil, tail = kNil;
  bool empty() const { return head == kNil; }
};
// An egress class queue: its packets' slots, oldest first, in a ring that keeps its capacity (a
// queue that drains and fills again allocates nothing). A packet joins and leaves it without its
// record being touched: a list linked through the records wrote the tail's record at each join,
// a record last touched at its admission, so a cache miss per packet-hop in a deep queue; and
// the slot behind the front is at hand to ask the CPU for its record a frame ahead.
using SlotRing = Fifo<uint32_t, SIZE_MAX>;
constexpr uint32_t kControl = UINT32_MAX - 1;  // Egress::current: a control frame
struct Egress {
  uint32_t current = kNil;  // packet (or kControl) on the wire
  Time ctrl_end;            // last bit of the control frame on the wire
  // The cycles with a look (kEgressRetry) in the wheel for this port (a few: now, a refresh
  // timer, the end of a pause). A look at or after one already there is not scheduled: that
  // earlier look re-arms whatever the port waits for. Without this, a port looked at on every
  // admission piled up a timer event per admission (tens of thousands under incast).
  std::vector<int64_t> looks;
  // Stomped frames that left (dropped mid-way, never delivered, not in tx_packets): progress
  // for the liveness check all the same, since the port did send them.
  uint64_t stomped_sent = 0;
};

// A control frame from a peer on its way in (pooled until it takes effect).
struct PendingControl {
  int port;
  ControlFrame f;
  Time arrival;
};

// A packet whose first cell is due to be seen (admission) at an ingress port.
struct DueAdmission {
  int in;
  uint32_t pkt;
};

// One handed over after a later-due one (a short frame overtaking, or a switch upstream handing
// over as its last bit leaves): a heap on due cycle, merged into their cycle's batch.
struct LateAdmission {
  int64_t due;
  DueAdmission a;
  bool operator>(const LateAdmission& o) const { return due > o.due; }
};

// Liveness samples per port: departures seen at the last sample, the sample from which the port
// has been stalled, and the longest stall and frame stall beyond the limit.
struct Progress {
  uint64_t tx_seen = 0;
  Time since;
  Time worst, worst_from;         // port stall beyond the limit (worst > 0)
  Time frame_worst, frame_bound;  // frame on the wire beyond its bound
  uint64_t frame_id = 0, frame_bytes = 0;
};

static_assert(sizeof(Pkt) == 128, "Pkt should stay two cache lines");

}  // namespace fabricsim::sw::core
