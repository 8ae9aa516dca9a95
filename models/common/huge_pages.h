// Transparent huge pages for the simulator's heap.
//
// Not hardware: how the process asks Linux for its memory. A fabric's state (packet pools, port
// and queue records, NIC message records, a workload's graph) is gigabytes of heap touched for
// the first time as the run goes; in 4 KB pages each first touch is a page fault and each
// access a TLB entry. glibc's malloc backs its arenas with 2 MB pages (madvise) when the
// tunable glibc.malloc.hugetlb=1 is set, which it reads only at process start: so a run sets it
// and starts itself again, once, before anything else (docs/performance.md, "Huge pages").
// Skipped under valgrind (the tool measures the process it started), sanitizers (their own
// allocator), MPI launchers (their daemons track the process), when the kernel offers no THP,
// and with FABRICSIM_HUGE_PAGES=0. Results do not depend on it.
#pragma once

namespace fabricsim {

// Starts the program again with the tunable set, if it is not and nothing above says no;
// returns if it does not (or if exec fails).
void restart_with_huge_pages(char** argv);
// Whether the heap is being backed by huge pages (the tunable set and THP on): perf.json.
bool heap_huge_pages();

}  // namespace fabricsim
