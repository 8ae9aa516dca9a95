#include "models/nic/work_queue_format.h"

#include <cstring>

namespace fabricsim::nic {

namespace {

template <class T>
void put(uint8_t*& p, T v) {
  for (size_t i = 0; i < sizeof(T); ++i)
    *p++ = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
}
template <class T>
T get(const uint8_t*& p) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<uint64_t>(*p++) << (8 * i);
  return static_cast<T>(v);
}

}  // namespace

void Wqe::encode(uint8_t* out) const {
  std::memset(out, 0, kBytes);
  uint8_t* p = out;
  put<uint8_t>(p, static_cast<uint8_t>(opcode));
  put<uint8_t>(p, flags);
  put<uint16_t>(p, 0);
  put<uint32_t>(p, qpn);
  put<uint64_t>(p, wr_id);
  put<uint64_t>(p, local_addr);
  put<uint32_t>(p, length);
  put<uint32_t>(p, lkey);
  put<uint64_t>(p, remote_addr);
  put<uint32_t>(p, rkey);
  put<uint32_t>(p, imm);
}

bool Wqe::decode(const uint8_t* in) {
  const uint8_t* p = in;
  const auto op = get<uint8_t>(p);
  if (op >= kOpcodes) return false;
  opcode = static_cast<Opcode>(op);
  flags = get<uint8_t>(p);
  get<uint16_t>(p);
  qpn = get<uint32_t>(p);
  wr_id = get<uint64_t>(p);
  local_addr = get<uint64_t>(p);
  length = get<uint32_t>(p);
  lkey = get<uint32_t>(p);
  remote_addr = get<uint64_t>(p);
  rkey = get<uint32_t>(p);
  imm = get<uint32_t>(p);
  return true;
}

bool Wqe::operator==(const Wqe& o) const {
  return opcode == o.opcode && flags == o.flags && qpn == o.qpn && wr_id == o.wr_id &&
         local_addr == o.local_addr && length == o.length && lkey == o.lkey &&
         remote_addr == o.remote_addr && rkey == o.rkey && imm == o.imm;
}

void Cqe::encode(uint8_t* out) const {
  std::memset(out, 0, kBytes);
  uint8_t* p = out;
  put<uint64_t>(p, wr_id);
  put<uint32_t>(p, qpn);
  put<uint32_t>(p, byte_len);
  put<uint32_t>(p, imm);
  put<uint8_t>(p, static_cast<uint8_t>(opcode));
  put<uint8_t>(p, status);
  put<uint8_t>(p, owner);
}

void Cqe::decode(const uint8_t* in) {
  const uint8_t* p = in;
  wr_id = get<uint64_t>(p);
  qpn = get<uint32_t>(p);
  byte_len = get<uint32_t>(p);
  imm = get<uint32_t>(p);
  opcode = static_cast<Opcode>(get<uint8_t>(p));
  status = get<uint8_t>(p);
  owner = get<uint8_t>(p);
}

bool Cqe::operator==(const Cqe& o) const {
  return wr_id == o.wr_id && qpn == o.qpn && byte_len == o.byte_len && imm == o.imm &&
         opcode == o.opcode && status == o.status && owner == o.owner;
}

}  // namespace fabricsim::nic
