// The NIC's work and completion queue entries as they lie in host memory (the driver's view), and
// where the next one of a ring is.
//
// Hardware: an RDMA NIC's send/receive queues and completion queues are rings of fixed-size
// entries in host memory. The driver writes a work queue entry (WQE) and rings a doorbell with its
// new producer index; the NIC fetches WQEs by DMA and, when work completes, writes a completion
// queue entry (CQE) by DMA. The CQE carries an owner (phase) bit that flips on every pass over the
// ring, so the driver polls memory for new CQEs without reading a NIC register. Our own layout,
// little-endian, in the spirit of real NICs (64 B WQEs, 32 B CQEs) but not any vendor's:
//   WQE: opcode u8 | flags u8 | reserved u16 | qpn u32 | wr_id u64 | local_addr u64 | length u32 |
//        lkey u32 | remote_addr u64 | rkey u32 | imm u32 | 16 B reserved
//   CQE: wr_id u64 | qpn u32 | byte_len u32 | imm u32 | opcode u8 | status u8 | owner u8 | 9 B
//        reserved
#pragma once

#include <cstdint>

namespace fabricsim::nic {

enum class Opcode : uint8_t {
  kSend = 0,
  kRdmaWrite = 1,
  kRdmaWriteImm = 2,
  kRdmaRead = 3,
  kRecv = 4
};
constexpr uint8_t kOpcodes = 5;

struct Wqe {
  static constexpr uint32_t kBytes = 64;
  static constexpr uint8_t kSignaled = 1;  // flags: write a CQE when done
  Opcode opcode = Opcode::kSend;
  uint8_t flags = kSignaled;
  uint32_t qpn = 0;
  uint64_t wr_id = 0;
  uint64_t local_addr = 0;
  uint32_t length = 0;
  uint32_t lkey = 0;
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint32_t imm = 0;

  void encode(uint8_t* out) const;  // kBytes bytes
  // False (and `this` unchanged) if the opcode is not one of ours: a driver bug or a stale slot.
  bool decode(const uint8_t* in);
  bool operator==(const Wqe& o) const;
};

struct Cqe {
  static constexpr uint32_t kBytes = 32;
  enum Status : uint8_t { kOk = 0, kRetryExceeded = 1, kBadWqe = 2 };
  uint64_t wr_id = 0;
  uint32_t qpn = 0;
  uint32_t byte_len = 0;
  uint32_t imm = 0;
  Opcode opcode = Opcode::kSend;
  uint8_t status = kOk;
  uint8_t owner = 0;  // the ring pass it was written in, mod 2

  void encode(uint8_t* out) const;
  void decode(const uint8_t* in);
  bool operator==(const Cqe& o) const;
};

// A ring of `entries` (a power of two) entries of `entry_bytes` at `base`. Indices run freely
// (mod 2^32); slot = index mod entries; pass = index / entries, whose parity is a CQE's owner bit.
struct Ring {
  uint64_t base = 0;
  uint32_t entries = 0;
  uint32_t entry_bytes = 0;
  uint64_t address(uint32_t index) const {
    return base + static_cast<uint64_t>(index & (entries - 1)) * entry_bytes;
  }
  uint8_t owner(uint32_t index) const { return static_cast<uint8_t>((index / entries) & 1); }
  // Entries from `index` before the ring wraps.
  uint32_t until_wrap(uint32_t index) const { return entries - (index & (entries - 1)); }
};

}  // namespace fabricsim::nic
