// The bytes MPI ranks exchange (models/sim/mpi_partition.h): a growing buffer of trivially
// copyable values and strings, and the held calls (PortMail) and switch reports in it.
//
// Not hardware. A call is sent as (kind, switch, port, times, cycle, packet or control frame, INT
// stack if any): the switch by its index, which every rank's identical fabric shares, where the
// call itself holds pointers valid in one process only.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "models/common/port_mailbox.h"
#include "models/sim/report.h"
#include "models/switch/switch_module.h"

namespace fabricsim::sim::mpi {

static_assert(std::is_trivially_copyable_v<Packet>, "a Packet is sent as its bytes");
static_assert(std::is_trivially_copyable_v<ControlFrame>, "a ControlFrame is sent as its bytes");
static_assert(std::is_trivially_copyable_v<IntStack>, "an INT stack is sent as its bytes");
static_assert(std::is_trivially_copyable_v<Time>, "a Time is sent as its bytes");
static_assert(std::is_trivially_copyable_v<stats::SpanRecord>, "a span is sent as its bytes");
static_assert(std::is_trivially_copyable_v<LatencyReport>, "sent as its bytes");
static_assert(std::is_trivially_copyable_v<link::LinkModule::Counters>, "sent as its bytes");
static_assert(std::is_trivially_copyable_v<SwitchCounts>, "sent as its bytes");
static_assert(std::is_trivially_copyable_v<link::FlowControl::PortStats>, "sent as its bytes");

class Buf {
 public:
  std::vector<char> d;
  size_t at = 0;  // read position

  void reset() {
    d.clear();
    at = 0;
  }
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const size_t n = d.size();
    d.resize(n + sizeof(T));
    std::memcpy(d.data() + n, &v, sizeof(T));
  }
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    if (at + sizeof(T) > d.size()) throw std::runtime_error("mpi: a message ended early");
    T v;
    std::memcpy(&v, d.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  void put_str(const std::string& s) {
    put<uint64_t>(s.size());
    d.insert(d.end(), s.begin(), s.end());
  }
  std::string get_str() {
    const auto n = get<uint64_t>();
    if (at + n > d.size()) throw std::runtime_error("mpi: a message ended early");
    std::string s(d.data() + at, n);
    at += n;
    return s;
  }
  template <class T>
  void put_vec(const std::vector<T>& v) {
    put<uint64_t>(v.size());
    for (const T& x : v) put(x);
  }
  template <class T>
  std::vector<T> get_vec() {
    std::vector<T> v(get<uint64_t>());
    for (T& x : v) x = get<T>();
    return v;
  }
};

// The fabric's switches, both ways: index -> module (this process's), module -> index.
struct SwitchIndex {
  std::vector<sw::SwitchModule*> modules;
  std::unordered_map<const void*, int> index;
};

inline bool carries_packet(int kind) {
  return kind != 2 && kind != 5;
}
inline bool carries_tel(int kind) {
  return kind == 1 || kind == 4;
}

inline void put_mail(Buf& b, const PortMail& m, const SwitchIndex& x) {
  const int kind = sw::SwitchModule::mail_kind(m);
  const auto it = x.index.find(m.to);
  if (kind < 0 || it == x.index.end()) throw std::logic_error("mpi: a held call of no switch");
  b.put<uint8_t>(static_cast<uint8_t>(kind));
  b.put<int32_t>(it->second);
  b.put<int32_t>(m.port);
  b.put(m.first);
  b.put(m.last);
  b.put(m.cycle);
  if (carries_packet(kind))
    b.put(m.p);
  else
    b.put(m.f);
  if (carries_tel(kind)) b.put(*m.tel);
}

inline void get_mail(Buf& b, PortMailbox& box, const SwitchIndex& x) {
  const int kind = b.get<uint8_t>();
  PortMail m{};
  m.deliver = sw::SwitchModule::mail_replay(kind);
  const int s = b.get<int32_t>();
  if (!m.deliver || s < 0 || s >= static_cast<int>(x.modules.size()))
    throw std::runtime_error("mpi: a held call of no switch received");
  m.to = x.modules[static_cast<size_t>(s)];
  m.port = b.get<int32_t>();
  m.first = b.get<Time>();
  m.last = b.get<Time>();
  m.cycle = b.get<int64_t>();
  if (carries_packet(kind))
    m.p = b.get<Packet>();
  else
    m.f = b.get<ControlFrame>();
  if (carries_tel(kind)) m.tel = box.keep(b.get<IntStack>());
  box.post(m);
}

// A box's calls, counted.
inline void put_box(Buf& b, const PortMailbox& box, const SwitchIndex& x) {
  b.put<uint64_t>(box.size());
  for (const PortMail& m : box.held()) put_mail(b, m, x);
}
inline void get_box(Buf& b, PortMailbox& box, const SwitchIndex& x) {
  for (auto n = b.get<uint64_t>(); n > 0; --n) get_mail(b, box, x);
}

// Every field of the reports (a field added to them must be added here: the MPI test compares
// every result file with a one-process run's).
inline void put_port(Buf& b, const PortReport& p) {
  b.put(p.host);
  b.put_str(p.peer);
  b.put(p.peer_port);
  for (uint64_t v : {p.rx_packets, p.rx_bytes, p.tx_packets, p.tx_bytes, p.drops}) b.put(v);
  for (double v : {p.offered_load, p.accepted_load}) b.put(v);
  b.put(p.latency);
  for (double v : {p.buffer_peak_bytes, p.buffer_mean_bytes, p.buffer_peak_bytes_run}) b.put(v);
  b.put(p.fc);
  b.put(p.fc_run);
  for (uint64_t v : {p.control_frames_sent, p.ecn_marked, p.underruns}) b.put(v);
  b.put(p.underrun_ns);
}

inline PortReport get_port(Buf& b) {
  PortReport p;
  p.host = b.get<int>();
  p.peer = b.get_str();
  p.peer_port = b.get<int>();
  for (uint64_t* v : {&p.rx_packets, &p.rx_bytes, &p.tx_packets, &p.tx_bytes, &p.drops})
    *v = b.get<uint64_t>();
  for (double* v : {&p.offered_load, &p.accepted_load}) *v = b.get<double>();
  p.latency = b.get<LatencyReport>();
  for (double* v : {&p.buffer_peak_bytes, &p.buffer_mean_bytes, &p.buffer_peak_bytes_run})
    *v = b.get<double>();
  p.fc = b.get<link::FlowControl::PortStats>();
  p.fc_run = b.get<link::FlowControl::PortStats>();
  for (uint64_t* v : {&p.control_frames_sent, &p.ecn_marked, &p.underruns}) *v = b.get<uint64_t>();
  p.underrun_ns = b.get<double>();
  return p;
}

inline void put_switch(Buf& b, const SwitchReport& r) {
  b.put_str(r.name);
  b.put_str(r.kind);
  for (double v :
       {r.buffer_capacity_bytes, r.buffer_peak_bytes, r.buffer_mean_bytes, r.buffer_peak_bytes_run})
    b.put(v);
  for (uint64_t v :
       {r.received, r.departed, r.dropped, r.in_flight, r.underruns, r.ecn_packets, r.ecn_marked,
        r.cells_switched})
    b.put(v);
  b.put(r.ecn_bin_bytes);
  b.put<uint64_t>(r.ports.size());
  for (const PortReport& p : r.ports) put_port(b, p);
  b.put<uint64_t>(r.ecn_bins.size());
  for (const auto& e : r.ecn_bins) {
    b.put(e.first);
    b.put(e.second);
  }
}

inline SwitchReport get_switch(Buf& b) {
  SwitchReport r;
  r.name = b.get_str();
  r.kind = b.get_str();
  for (double* v : {&r.buffer_capacity_bytes, &r.buffer_peak_bytes, &r.buffer_mean_bytes,
                    &r.buffer_peak_bytes_run})
    *v = b.get<double>();
  for (uint64_t* v : {&r.received, &r.departed, &r.dropped, &r.in_flight, &r.underruns,
                      &r.ecn_packets, &r.ecn_marked, &r.cells_switched})
    *v = b.get<uint64_t>();
  r.ecn_bin_bytes = b.get<int64_t>();
  for (auto n = b.get<uint64_t>(); n > 0; --n) r.ports.push_back(get_port(b));
  for (auto n = b.get<uint64_t>(); n > 0; --n) {
    const auto first = b.get<uint64_t>();
    r.ecn_bins.emplace_back(first, b.get<uint64_t>());
  }
  return r;
}

inline void put_strings(Buf& b, const std::vector<std::string>& v) {
  b.put<uint64_t>(v.size());
  for (const auto& s : v) b.put_str(s);
}
inline std::vector<std::string> get_strings(Buf& b) {
  std::vector<std::string> v(b.get<uint64_t>());
  for (auto& s : v) s = b.get_str();
  return v;
}

}  // namespace fabricsim::sim::mpi
