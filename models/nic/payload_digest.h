// What stands for a packet's payload in the NIC model: a CRC-32 of where it is in its message,
// and each packet's share of its message's checksum, so that the integrity check (every byte
// placed exactly once) needs no payload bytes. Shared by nic.cpp and nic_read.cpp.
#pragma once

#include <cstdint>
#include <cstring>

#include "models/link/crc32.h"

namespace fabricsim::nic {

// The CRC-32 standing for a packet's payload: of the message id, the offset and the length;
// `crc`: the sender's CRC datapath when nic.crc_impl names one (null: the byte-wise function).
// The expected checksum (Nic::checksum) always takes the function, so a datapath that computes
// differently fails the run's integrity check.
inline uint32_t digest(uint64_t message, uint64_t offset, uint32_t length,
                       link::Crc32BlockIf* crc = nullptr) {
  uint8_t b[20];
  std::memcpy(b, &message, 8);
  std::memcpy(b + 8, &offset, 8);
  std::memcpy(b + 16, &length, 4);
  return crc ? link::crc32_through(*crc, b, sizeof b) : link::crc32(b, sizeof b);
}

// A packet's share of its message's checksum (a sum: order-free, as placement is).
inline uint64_t mix(uint32_t crc) {
  uint64_t z = crc + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace fabricsim::nic
