// Fuzz target: the packet trace reader and replay, traffic::TraceReplay (models/traffic/
// trace_replay.h; format in traces/README.md). Bad input must end in InputError (exit code 2 in
// the CLI) naming the line; an abort, a sanitizer report, a hang or any other exception is a
// finding.
//
// Input: a trace file, read for a run of 16 hosts and 4 traffic classes whose largest packet is
// 9216 B. A trace that is accepted is then replayed whole, and must replay as its format says:
// every packet line once, ids 0, 1, 2, ..., times non-decreasing, fields in range. (Packets of a
// host class whose queue is full wait in the hosts' spill store, models/host/spill_store.h, which
// has unit tests of its own: the trace is read once, in order, by this replay.)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "models/common/error.h"
#include "models/traffic/trace_replay.h"
#include "testbenches/fuzz/fuzz_input.h"

namespace {

using fabricsim::InputError;
using fabricsim::Packet;
using fabricsim::traffic::PacketLimit;
using fabricsim::traffic::TraceReplay;

constexpr int kEndpoints = 16;
constexpr int kTcs = 4;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "trace_fuzz: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fabricsim::fuzz::MemFile file;
  const std::string& path = file.write(reinterpret_cast<const char*>(data), size);
  const PacketLimit limit{9216, "switch.buffer.size"};

  std::unique_ptr<TraceReplay> made;
  try {
    made = std::make_unique<TraceReplay>(path, kEndpoints, kTcs, limit);
  } catch (const InputError&) {
    return 0;  // refused with a message naming the line: what bad input must get
  }
  // Accepted: the file was checked whole, so nothing below may throw.
  TraceReplay& replay = *made;
  std::vector<Packet> packets;
  {
    Packet p;
    while (replay.next(p)) {
      if (p.id != packets.size()) finding("packet ids are not 0, 1, 2, ...");
      if (p.src < 0 || p.src >= kEndpoints || p.dst < 0 || p.dst >= kEndpoints || p.tc >= kTcs ||
          p.size.count() < 1 || static_cast<int64_t>(p.size.count()) > limit.bytes)
        finding("a replayed packet has a field out of range");
      if (!packets.empty() && p.inject_time < packets.back().inject_time)
        finding("replayed packet times decrease");
      packets.push_back(p);
    }
    if (packets.size() != replay.packet_count())
      finding("replay returned " + std::to_string(packets.size()) + " packets of " +
              std::to_string(replay.packet_count()) + " counted");
  }
  return 0;
}
