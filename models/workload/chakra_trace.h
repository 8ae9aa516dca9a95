// Chakra execution traces (MLCommons Chakra, ASTRA-sim's workload format) read into an ExecGraph
// (exec_graph.h): the reader behind workload.format chakra.
//
// Not hardware: a recorded (or generated) training step, one file per rank, replayed on the
// ranks. A file is a stream of protobuf messages of our schema (chakra_et.proto: Chakra's field
// numbers), each after its length as a varint: a GlobalMetadata, then the rank's nodes. A node
// runs once every node in its data_deps and ctrl_deps has (Chakra's two kinds are one here: the
// replay honours both); its recorded start time is not used. The mapping:
//   COMP_NODE: compute on the rank's GPU for duration_micros (0: no GPU time, a joining point);
//   MEM_LOAD_NODE, MEM_STORE_NODE, METADATA_NODE: joining points (memory is not modelled);
//   COMM_SEND_NODE / COMM_RECV_NODE: a message of comm_size bytes to comm_dst / from comm_src,
//     on channel (QP) 0, matched in program order within its comm_tag (tag + 1 in the graph,
//     so that it never matches a collective's message);
//   COMM_COLL_NODE: a collective call; the k-th COMM_COLL of one process group (pg_name, "" if
//     absent) on every rank that has one forms the call, its communicator those ranks in rank
//     order. comm_type ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER, ALL_TO_ALL, BROADCAST (root: the
//     communicator's first rank, or comm_src); comm_size is each rank's input buffer as
//     ASTRA-sim and Chakra's PyTorch converter count it, so S (nccl-tests) is comm_size, and
//     comm_size x n for an all-gather.
// Any other node type or comm_type is an error, as is a malformed trace: every error is an
// InputError "FILE: node ID (NAME): problem" (a cycle lists the ids on it; a send without its
// receive, calls that do not match across ranks and ranks outside the job name both files).
//
// Ordering: ExecGraph takes dependencies on earlier nodes, and a call couples its ranks, so the
// nodes are added in one global order: each rank's nodes in a topological order (Kahn, the
// file's order among the ready), ranks advanced round-robin until each waits at its next
// collective; a call is added once every rank of its group waits at it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/workload/exec_graph.h"

namespace fabricsim::workload {

struct ChakraOptions {
  std::string allreduce = "allreduce_ring";  // the algorithm of ALL_REDUCE calls
  int channels = 1;                          // every call's channels and pipelining slice
  uint64_t chunk_bytes = 0;
};

// The job's graph from files[r], rank r's trace (finalized). InputError for what is wrong.
ExecGraph read_chakra(const std::vector<std::string>& files, const ChakraOptions& options);

// A job's files from `pattern`: "{rank}" replaced by 0 .. ranks - 1; a folder holding
// <name>.<rank>.et files of one name; or a prefix that <prefix>.<rank>.et completes (ASTRA-sim's
// way). ranks 0: as many as exist from rank 0 on. InputError naming the pattern if a file is
// missing or there is none.
std::vector<std::string> chakra_files(const std::string& pattern, int ranks);

}  // namespace fabricsim::workload
