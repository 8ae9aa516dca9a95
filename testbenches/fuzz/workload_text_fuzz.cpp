// Fuzz target: the text workload reader (workload.format text; models/workload/workload_text.cpp,
// format in docs/trace-format.md). Bad input must end in InputError naming the file and line; an
// accepted workload must be a well-formed graph that runs to its end (fuzz_graph.h). An abort, a
// sanitizer report, a hang or any other exception is a finding.
//
// Input: a text workload, read for 16 hosts with 4 QPs between two ranks (channels 1 to 4).
#include <cstdint>
#include <string>

#include "models/common/error.h"
#include "models/workload/workload_config.h"
#include "testbenches/fuzz/fuzz_graph.h"
#include "testbenches/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fabricsim;
  static fuzz::MemFile file;
  workload::graph_limits().nodes = fuzz::kFuzzGraphNodes;
  workload::graph_limits().deps = 4 * fuzz::kFuzzGraphNodes;
  const std::string& path = file.write(reinterpret_cast<const char*>(data), size);
  workload::WorkloadConfig cfg;
  cfg.format = "text";
  cfg.max_channels = 4;
  const workload::WorkloadFormatEntry* text = workload::WorkloadFormats::global().find("text");
  if (!text) fuzz::graph_finding("workload_text_fuzz", "no text format registered");
  try {
    fuzz::check_graph("workload_text_fuzz", text->read(path, cfg, 16));
  } catch (const InputError&) {
    // refused, naming the file and line: what bad input must get
  }
  return 0;
}
