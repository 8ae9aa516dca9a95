// Fuzz target: the message file reader (traffic.pattern messages; models/nic/message_workload.h,
// format in docs/trace-format.md). Bad input must end in InputError naming the file and line; an
// accepted file is then read whole and must read as its format says: ids 0, 1, 2, ..., starts
// non-decreasing, every field in range, as many messages as the checking pass counted. An
// abort, a sanitizer report, a hang or any other exception is a finding.
//
// Input: a message file, read for 16 hosts, 2 QPs between two hosts and 4 traffic classes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "models/common/error.h"
#include "models/config/config.h"
#include "models/nic/message_workload.h"
#include "testbenches/fuzz/fuzz_input.h"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "messages_fuzz: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fabricsim;
  static fuzz::MemFile file;
  const std::string& path = file.write(reinterpret_cast<const char*>(data), size);
  // The section's defaults through the loader, as a run has them (a TrafficConfig built in code
  // is refused by make_messages's checks).
  static const traffic::TrafficConfig loaded = [] {
    traffic::TrafficConfig c;
    config::load(c, "", {"pattern=messages", "messages.file=x"});
    return c;
  }();
  traffic::TrafficConfig cfg = loaded;
  cfg.messages_file = path;
  nic::MessageLimits lim;
  lim.hosts = 16;
  lim.qps_per_pair = 2;
  lim.traffic_classes = 4;
  std::unique_ptr<nic::MessageSource> source;
  try {
    source = nic::make_messages(cfg, lim, BitRate::gbps(400), 1, "", Time::max());
  } catch (const InputError&) {
    return 0;  // refused with a message naming the line: what bad input must get
  }
  // Accepted: the file was checked whole, so nothing below may throw.
  nic::Message m;
  uint64_t count = 0;
  Time last;
  while (source->next(m)) {
    if (m.id != count) finding("message ids are not 0, 1, 2, ...");
    if (m.src < 0 || m.src >= lim.hosts || m.dst < 0 || m.dst >= lim.hosts || m.src == m.dst ||
        m.qp < 0 || m.qp >= lim.qps_per_pair || m.tc < 0 || m.tc >= lim.traffic_classes ||
        m.bytes < 1 || m.bytes > lim.max_bytes || m.start < Time())
      finding("a message has a field out of range");
    if (m.start < last) finding("message starts decrease");
    last = m.start;
    ++count;
  }
  if (count != source->total())
    finding("read " + std::to_string(count) + " messages of " + std::to_string(source->total()) +
            " counted");
  return 0;
}
