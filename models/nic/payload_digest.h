// What stands for a packet's payload in the NIC model: a CRC-32 of where it is in its message,
// and each packet's share of its message's checksum, so that the integrity check (every byte
// placed exactly once) needs no payload bytes. Shared by nic.cpp and nic_read.cpp.
#pragma once

#include <cstdint>
#include <cstring>

#include "models/link/crc32.h"

namespace fabricsim::nic {

// The CRC-32 standing for a packet's payload: of the message id, the offset and the length.
inline uint32_t digest(uint64_t message, uint64_t offset, uint32_t length) {
  uint8_t b[20];
  std::memcpy(b, &message, 8);
  std::memcpy(b + 8, &offset, 8);
  std::memcpy(b + 16, &length, 4);
  return link::crc32(b, sizeof b);
}

// A packet's share of its message's checksum (a sum: order-free, as placement is).
inline uint64_t mix(uint32_t crc) {
  uint64_t z = crc + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace fabricsim::nic
