// Fuzz target: the Chakra execution trace reader (workload.format chakra; models/workload/
// chakra_trace.h, docs/trace-format.md). Bad traces must end in InputError naming the file and
// node; an accepted job must be a well-formed graph that runs to its end (fuzz_graph.h): a cycle
// across ranks, say, must be refused, not deadlock. An abort, a sanitizer report, a hang or any
// other exception is a finding.
//
// Input: a job of 2 to 8 ranks' traces in one buffer: byte 0 gives the ranks (2 + byte % 7), then
// the lengths of all files but the last (2 bytes each, little-endian, clipped to what is left),
// then the files one after another (each a GlobalMetadata and nodes, varint-delimited, as on
// disk). The seeds are traces/chakra's jobs in this form.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/common/error.h"
#include "models/workload/chakra_trace.h"
#include "testbenches/fuzz/fuzz_graph.h"
#include "testbenches/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fabricsim;
  constexpr size_t kMaxRanks = 8;
  static std::vector<std::unique_ptr<fuzz::MemFile>> files;
  if (files.empty())
    for (size_t r = 0; r < kMaxRanks; ++r) files.push_back(std::make_unique<fuzz::MemFile>());
  workload::graph_limits().nodes = fuzz::kFuzzGraphNodes;
  workload::graph_limits().deps = 4 * fuzz::kFuzzGraphNodes;
  if (size < 1) return 0;
  const size_t ranks = 2 + data[0] % 7;
  size_t at = 1;
  std::vector<size_t> lengths;
  for (size_t r = 0; r + 1 < ranks; ++r) {
    size_t len = 0;
    if (at + 2 <= size) len = data[at] | static_cast<size_t>(data[at + 1]) << 8;
    at = std::min(size, at + 2);
    lengths.push_back(len);
  }
  std::vector<std::string> paths;
  for (size_t r = 0; r < ranks; ++r) {
    const size_t len = r + 1 < ranks ? std::min(lengths[r], size - at) : size - at;
    paths.push_back(files[r]->write(reinterpret_cast<const char*>(data + at), len));
    at += len;
  }
  try {
    fuzz::check_graph("chakra_fuzz", workload::read_chakra(paths, workload::ChakraOptions()));
  } catch (const InputError&) {
    // refused, naming the file and node: what bad input must get
  }
  return 0;
}
