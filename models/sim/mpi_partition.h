// MPI ranks: the sides of sim.threads in processes of their own, on one machine or several
// (docs/architecture.md, "MPI"; `mpirun -np N fabricsim run CONFIG`).
//
// Not hardware: the simulation kernel's partitioning across processes. Every rank elaborates the
// same whole fabric from the same configuration, so that device ids, ports and mailboxes agree;
// rank 0 runs the SystemC kernel, the hosts and side 0's switches, and its scheduler's calendar
// holds every switch; rank r > 0 runs side r's switches when rank 0 hands it a window, and
// delivers the calls held for them at the window's end, sending back what they did (calls to
// other sides, schedule() requests, flow-control spans, the oldest frame on a watched wire).
// Calls between two ranks other than 0 go through rank 0. At the end each rank sends rank 0 its
// switches' reports, checks, counters and spans, and rank 0 writes the results.
#pragma once

#include <cstdlib>
#include <string>

#include "models/sim/run_config.h"

namespace fabricsim::sim {

// The number of processes of the MPI job this process was launched in (mpirun, srun; 1: none),
// from the launcher's environment (without calling MPI).
inline int launched_ranks() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* s = std::getenv(v)) return std::max(1, std::atoi(s));
  if (std::getenv("PMIX_RANK"))
    for (const char* v : {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"})
      if (const char* s = std::getenv(v)) return std::max(1, std::atoi(s));
  return 1;
}

// Built with MPI (FABRICSIM_MPI): starts it and fills g_mpi_world; ends it, or aborts the whole
// job with `code` (every rank exits). mpi_finished(): rank 0 has the other ranks' final state
// (they are ending normally).
void mpi_start(int* argc, char*** argv);
void mpi_end();
[[noreturn]] void mpi_abort(int code);
bool mpi_finished();
// A rank other than 0: elaborates the fabric of `cfg` and runs its side for rank 0 until the
// run ends; returns the exit code.
int mpi_serve(const RunConfig& cfg);

}  // namespace fabricsim::sim
