// workload.format chakra: the job's Chakra execution traces (chakra_trace.h), one file per rank
// from workload.file, replayed with the workload section's collective settings (an all-reduce
// algorithm from workload.collective, channels, chunk).
#include <fmt/format.h>

#include "models/common/error.h"
#include "models/workload/chakra_trace.h"
#include "models/workload/workload_config.h"

namespace fabricsim::workload {
namespace {

ExecGraph read(const std::string& path, const WorkloadConfig& cfg, int hosts) {
  const std::vector<std::string> files = chakra_files(path, static_cast<int>(cfg.ranks));
  if (static_cast<int64_t>(files.size()) > hosts)
    throw InputError(
        fmt::format("workload.file: {}: {} ranks' traces on {} hosts (a rank per "
                    "host): give workload.ranks, or a larger topology",
                    path, files.size(), hosts));
  ChakraOptions o;
  // ALL_REDUCE calls run workload.collective when it is an all-reduce, else the ring.
  if (cfg.collective.rfind("allreduce", 0) == 0) o.allreduce = cfg.collective;
  o.channels = static_cast<int>(cfg.channels);
  o.chunk_bytes = cfg.chunk.count();
  return read_chakra(files, o);
}

}  // namespace

FABRICSIM_REGISTER_WORKLOAD_FORMAT(chakra) {
  registry.add("chakra", {"Chakra execution traces (.et, one per rank)", &read});
}

}  // namespace fabricsim::workload
