#include "models/workload/chakra_trace.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/logging.h>

#include "chakra_et.pb.h"
#include "models/common/error.h"
#include "models/common/stop_signal.h"
#include "models/traffic/text_fields.h"
#include "models/workload/collective.h"
#include "models/workload/scale_up.h"

namespace fabricsim::workload {
namespace {

namespace fs = std::filesystem;
using EtNode = ChakraProtoMsg::Node;  // a trace's node (Node is the graph's)

// The longest compute node we take (the workload section's compute limit): a day would not fit
// the femtosecond clock's int64 once summed over many of them.
constexpr uint64_t kMaxMicros = 1000000000;

// The job's traces' nodes, and the graph nodes their joining points stand for: the graph's
// limit, or kMaxTraceNodes if lower (a parsed node is larger than a graph node).
uint64_t trace_node_limit() {
  return std::min(graph_limits().nodes, kMaxTraceNodes);
}

// One rank's trace, parsed.
struct RankTrace {
  std::string file;
  std::vector<EtNode> nodes;    // in file order
  std::vector<uint32_t> order;  // a topological order (indices into nodes)
};

using traffic::shown;  // a trace's strings (node names, pg_name) as messages show them: clipped

// "FILE: node ID (NAME)", and with ": PROBLEM" after it. The name is clipped and escaped: a Kineto
// kernel name may be KBs long and hold a newline.
std::string where(const RankTrace& t, const EtNode& n) {
  return fmt::format("{}: node {} ({})", t.file, n.id(), shown(n.name()));
}
std::string what(const RankTrace& t, const EtNode& n, const std::string& problem) {
  return where(t, n) + ": " + problem;
}

const char* type_name(int type) {
  switch (type) {
    case ChakraProtoMsg::INVALID_NODE:
      return "INVALID_NODE";
    case ChakraProtoMsg::METADATA_NODE:
      return "METADATA_NODE";
    case ChakraProtoMsg::MEM_LOAD_NODE:
      return "MEM_LOAD_NODE";
    case ChakraProtoMsg::MEM_STORE_NODE:
      return "MEM_STORE_NODE";
    case ChakraProtoMsg::COMP_NODE:
      return "COMP_NODE";
    case ChakraProtoMsg::COMM_SEND_NODE:
      return "COMM_SEND_NODE";
    case ChakraProtoMsg::COMM_RECV_NODE:
      return "COMM_RECV_NODE";
    case ChakraProtoMsg::COMM_COLL_NODE:
      return "COMM_COLL_NODE";
    case 8:
      return "STORAGE_NODE";
    case 9:
      return "BATCH_NODE";
    case 10:
      return "CHECKPOINT_NODE";
    default:
      return "an unknown type";
  }
}

const char* comm_type_name(int64_t t) {
  static const char* const names[] = {
      "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER", "SCATTER", "BROADCAST",
      "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};
  return t >= 0 && t < 10 ? names[t] : "unknown";
}

// A node's integer attribute (any of protobuf's integer kinds: writers differ), if it has it.
std::optional<int64_t> int_attr(const RankTrace& t, const EtNode& n, const std::string& name) {
  for (const auto& a : n.attr()) {
    if (a.name() != name) continue;
    using A = ChakraProtoMsg::AttributeProto;
    switch (a.value_case()) {
      case A::kInt32Val:
        return a.int32_val();
      case A::kInt64Val:
        return a.int64_val();
      case A::kUint32Val:
        return a.uint32_val();
      case A::kSint32Val:
        return a.sint32_val();
      case A::kSint64Val:
        return a.sint64_val();
      case A::kUint64Val:
        if (a.uint64_val() > static_cast<uint64_t>(INT64_MAX))
          throw InputError(what(t, n, fmt::format("attribute {} is too large", name)));
        return static_cast<int64_t>(a.uint64_val());
      default:
        throw InputError(what(t, n, fmt::format("attribute {} is not an integer", name)));
    }
  }
  return std::nullopt;
}

int64_t need_int(const RankTrace& t, const EtNode& n, const std::string& name) {
  const auto v = int_attr(t, n, name);
  if (!v)
    throw InputError(what(t, n, fmt::format("{} has no {} attribute", type_name(n.type()), name)));
  return *v;
}

std::string string_attr(const EtNode& n, const std::string& name) {
  for (const auto& a : n.attr())
    if (a.name() == name && a.value_case() == ChakraProtoMsg::AttributeProto::kStringVal)
      return a.string_val();
  return "";
}

// What of a node is kept once parsed: its id, type, dependencies, duration, the attributes the
// reader asks for (comm_*, pg_name) and its name, at most kKeptNameBytes of it; inputs, outputs,
// other attributes and unknown fields go (docs/trace-format.md, "Limits of the input files":
// memory per node). A node's own parse is bounded by the file, which is.
constexpr size_t kKeptNameBytes = 1024;
constexpr size_t kMaxPgNameBytes = 256;
void slim(const std::string& file, EtNode& n) {
  n.clear_inputs();
  n.clear_outputs();
  n.clear_start_time_micros();
  n.DiscardUnknownFields();
  auto& attrs = *n.mutable_attr();
  for (int i = attrs.size() - 1; i >= 0; --i) {
    const std::string& a = attrs.Get(i).name();
    if (a.compare(0, 5, "comm_") != 0 && a != "pg_name") attrs.DeleteSubrange(i, 1);
  }
  for (auto& a : attrs) {
    a.clear_doc_string();
    if (a.value_case() == ChakraProtoMsg::AttributeProto::kStringVal &&
        a.string_val().size() > kMaxPgNameBytes)
      throw InputError(fmt::format("{}: node {} ({}): attribute {} '{}' is longer than {} bytes",
                                   file, n.id(), shown(n.name()), shown(a.name()),
                                   shown(a.string_val()), kMaxPgNameBytes));
  }
  if (n.name().size() > kKeptNameBytes) {
    // Clipped at a character's start (UTF-8), marked as clipped, its length said.
    size_t at = kKeptNameBytes;
    while (at > 0 && (static_cast<uint8_t>(n.name()[at]) & 0xc0) == 0x80) --at;
    const std::string clipped =
        fmt::format("{}... ({} characters)", n.name().substr(0, at), n.name().size());
    n.set_name(clipped);
  }
}

// Reads a file's varint-delimited messages: GlobalMetadata, then Nodes.
RankTrace parse(const std::string& file, uint64_t& job_nodes) {
  RankTrace t;
  t.file = file;
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the Chakra trace", file));
  // Refused before it is read, when its size says so (a regular file's; chakra_files takes no
  // other kind).
  std::error_code ec;
  if (const auto size = fs::file_size(file, ec); !ec && size > static_cast<uintmax_t>(INT32_MAX))
    throw InputError(fmt::format("{}: larger than 2 GiB, which the reader does not take", file));
  // The whole file in memory (a rank's trace is MBs), so that its end is known: a length cut
  // short is an error, not the end. Read in blocks, a look at the stop signal between them (2 GiB
  // take seconds), refused as it passes 2 GiB (a file that grew since its size was taken).
  std::string data;
  if (!ec) data.reserve(fs::file_size(file, ec) + 1);
  constexpr size_t kBlock = size_t{64} << 20;
  // Blocks within what was reserved (the file's size): the buffer is never reallocated (a copy
  // of it, and up to twice its size, for a moment); past it only for a file that grew.
  while (in) {
    check_stop("reading the Chakra traces");
    const size_t at = data.size();
    if (at + 1 >= data.capacity() && in.peek() == std::char_traits<char>::eof()) break;
    const size_t step =
        at + 1 < data.capacity() ? std::min(kBlock, data.capacity() - 1 - at) : kBlock;
    data.resize(at + step);
    in.read(&data[at], static_cast<std::streamsize>(step));
    data.resize(at + static_cast<size_t>(in.gcount()));
    if (data.size() > static_cast<size_t>(INT32_MAX))
      throw InputError(fmt::format("{}: larger than 2 GiB, which the reader does not take", file));
  }
  const auto size_all = static_cast<int>(data.size());
  // A field that does not parse (a string that is not UTF-8) is our error naming the node, not
  // protobuf's log line on stderr besides it.
  const google::protobuf::LogSilencer quiet;
  google::protobuf::io::CodedInputStream coded(reinterpret_cast<const uint8_t*>(data.data()),
                                               size_all);
  bool metadata = false;
  for (;;) {
    if (coded.CurrentPosition() == size_all) break;
    uint32_t size = 0;
    const int at = coded.CurrentPosition();
    if (!coded.ReadVarint32(&size))
      throw InputError(fmt::format("{}: the message length at byte {} is cut short", file, at));
    if (size > static_cast<uint32_t>(size_all - coded.CurrentPosition()))
      throw InputError(
          fmt::format("{}: the file ends inside a message (byte {}: {} B announced, "
                      "{} left)",
                      file, at, size, size_all - coded.CurrentPosition()));
    const auto limit = coded.PushLimit(static_cast<int>(size));
    bool ok = false;
    if (!metadata) {
      ChakraProtoMsg::GlobalMetadata m;
      ok = m.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
      metadata = true;
      if (!ok)
        throw InputError(
            fmt::format("{}: not a Chakra trace (its first message, {} B, is not a GlobalMetadata)",
                        file, size));
    } else {
      EtNode n;
      ok = n.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
      if (!ok) {
        if (t.nodes.empty())
          throw InputError(fmt::format("{}: its first node ({} B) does not parse", file, size));
        throw InputError(fmt::format("{}: the node after node {} ({}) does not parse ({} B)", file,
                                     t.nodes.back().id(), shown(t.nodes.back().name()), size));
      }
      // A node parsed holds ~100 B or more for a few bytes of file: the job's count is bounded
      // as the graph's is, before the node is kept.
      if (++job_nodes > trace_node_limit())
        throw InputError(
            fmt::format("{}: node {} ({}) is past the {} nodes the job's traces may hold in all "
                        "(docs/trace-format.md, \"Limits of the input files\")",
                        file, n.id(), shown(n.name()), trace_node_limit()));
      if ((job_nodes & 0xffff) == 0) check_stop("reading the Chakra traces");
      slim(file, n);
      t.nodes.push_back(std::move(n));
    }
    coded.PopLimit(limit);
  }
  if (!metadata) throw InputError(fmt::format("{}: empty (no GlobalMetadata, no nodes)", file));
  return t;
}

// Orders a rank's nodes (Kahn; among the ready, the file's order). A dependency on a node the
// file does not have and a cycle are errors; the cycle's ids are listed.
void order(RankTrace& t) {
  const auto n = static_cast<uint32_t>(t.nodes.size());
  std::unordered_map<uint64_t, uint32_t> index;
  for (uint32_t i = 0; i < n; ++i)
    if (!index.emplace(t.nodes[i].id(), i).second)
      throw InputError(what(t, t.nodes[i], "a second node with this id"));
  std::vector<std::vector<uint32_t>> deps(n), succ(n);
  for (uint32_t i = 0; i < n; ++i) {
    const EtNode& x = t.nodes[i];
    std::set<uint32_t> d;
    for (const auto* list : {&x.data_deps(), &x.ctrl_deps()})
      for (uint64_t id : *list) {
        const auto it = index.find(id);
        if (it == index.end())
          throw InputError(what(t, x,
                                fmt::format("depends on node {}, which the file does not "
                                            "have",
                                            id)));
        d.insert(it->second);
      }
    deps[i].assign(d.begin(), d.end());
    for (uint32_t p : deps[i]) succ[p].push_back(i);
  }
  std::vector<uint32_t> waiting(n);
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
  for (uint32_t i = 0; i < n; ++i)
    if ((waiting[i] = static_cast<uint32_t>(deps[i].size())) == 0) ready.push(i);
  while (!ready.empty()) {
    const uint32_t i = ready.top();
    ready.pop();
    t.order.push_back(i);
    for (uint32_t s : succ[i])
      if (--waiting[s] == 0) ready.push(s);
  }
  if (t.order.size() == n) return;
  // A cycle: from a node left waiting, follow dependencies left waiting until one repeats.
  uint32_t at = 0;
  while (waiting[at] == 0) ++at;
  std::vector<uint32_t> path;
  std::vector<int> seen(n, -1);
  while (seen[at] < 0) {
    seen[at] = static_cast<int>(path.size());
    path.push_back(at);
    for (uint32_t d : deps[at])
      if (waiting[d] > 0) {
        at = d;
        break;
      }
  }
  std::string ids;
  for (size_t k = static_cast<size_t>(seen[at]); k < path.size(); ++k)
    ids += fmt::format("{} <- ", t.nodes[path[k]].id());
  ids += std::to_string(t.nodes[at].id());
  throw InputError(what(t, t.nodes[at], "on a dependency cycle: " + ids));
}

// Where each rank is: its next node in its order, or done.
struct Cursor {
  size_t pos = 0;
  std::vector<std::vector<uint32_t>> done;  // per node (file index): graph nodes that finish it
};

// A node's comm_size: at least a byte, at most kMaxWorkloadBytes for a send or receive (one
// message), kMaxCallBytes for a collective (its algorithm cuts it into messages).
uint64_t comm_size(const RankTrace& t, const EtNode& n) {
  const int64_t size = need_int(t, n, "comm_size");
  if (size <= 0) throw InputError(what(t, n, fmt::format("comm_size {}: no bytes", size)));
  const bool call = n.type() == ChakraProtoMsg::COMM_COLL_NODE;
  const uint64_t max = call ? kMaxCallBytes : kMaxWorkloadBytes;
  if (static_cast<uint64_t>(size) > max)
    throw InputError(
        what(t, n,
             fmt::format("comm_size {} is larger than the largest size, {} B ({})", size, max,
                         call ? "64 GiB, a call's largest" : "2 GiB, IBA's largest message")));
  return static_cast<uint64_t>(size);
}

// A collective node's call.
struct Coll {
  int64_t type = 0;
  uint64_t bytes = 0;  // comm_size
  std::string group;   // pg_name
};

Coll coll_of(const RankTrace& t, const EtNode& n) {
  Coll c;
  c.type = need_int(t, n, "comm_type");
  c.bytes = comm_size(t, n);
  c.group = string_attr(n, "pg_name");
  switch (c.type) {
    case ChakraProtoMsg::ALL_REDUCE:
    case ChakraProtoMsg::ALL_GATHER:
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::ALL_TO_ALL:
    case ChakraProtoMsg::BROADCAST:
      return c;
    default:
      throw InputError(what(t, n,
                            fmt::format("comm_type {} ({}) is not modelled (ALL_REDUCE, "
                                        "REDUCE_SCATTER, ALL_GATHER, ALL_TO_ALL and "
                                        "BROADCAST are)",
                                        c.type, comm_type_name(c.type))));
  }
}

// Checks every node before the graph is built: types, peers, sizes and limits. Returns the
// process groups' members (pg_name -> the ranks with a call of it, in rank order).
std::map<std::string, std::vector<int>> check_nodes(const std::vector<RankTrace>& traces) {
  const auto ranks = static_cast<int>(traces.size());
  std::map<std::string, std::vector<int>> groups;
  for (int r = 0; r < ranks; ++r) {
    const RankTrace& t = traces[r];
    for (const EtNode& n : t.nodes) {
      switch (static_cast<int>(n.type())) {
        case ChakraProtoMsg::COMP_NODE:
          if (n.duration_micros() > kMaxMicros)
            throw InputError(what(t, n,
                                  fmt::format("duration_micros {} exceeds {} (1000 s)",
                                              n.duration_micros(), kMaxMicros)));
          break;
        case ChakraProtoMsg::MEM_LOAD_NODE:
        case ChakraProtoMsg::MEM_STORE_NODE:
        case ChakraProtoMsg::METADATA_NODE:
          break;
        case ChakraProtoMsg::COMM_SEND_NODE:
        case ChakraProtoMsg::COMM_RECV_NODE: {
          const bool send = n.type() == ChakraProtoMsg::COMM_SEND_NODE;
          const char* key = send ? "comm_dst" : "comm_src";
          const int64_t peer = need_int(t, n, key);
          if (peer < 0 || peer >= ranks)
            throw InputError(
                what(t, n, fmt::format("{} {} is outside the job's {} ranks", key, peer, ranks)));
          if (peer == r)
            throw InputError(what(t, n, fmt::format("{} {} is the rank itself", key, peer)));
          comm_size(t, n);
          const int64_t tag = int_attr(t, n, "comm_tag").value_or(0);
          if (tag < 0 || tag >= UINT32_MAX)
            throw InputError(what(t, n, fmt::format("comm_tag {} out of range", tag)));
          break;
        }
        case ChakraProtoMsg::COMM_COLL_NODE: {
          const Coll c = coll_of(t, n);
          auto& members = groups[c.group];
          if (members.empty() || members.back() != r) members.push_back(r);
          if (c.type == ChakraProtoMsg::BROADCAST) {
            const auto root = int_attr(t, n, "comm_src");
            if (root && (*root < 0 || *root >= ranks))
              throw InputError(what(t, n,
                                    fmt::format("broadcast root (comm_src) {} is outside "
                                                "the job's {} ranks",
                                                *root, ranks)));
          }
          break;
        }
        default:
          throw InputError(what(t, n,
                                fmt::format("node type {} ({}) is not modelled",
                                            static_cast<int>(n.type()), type_name(n.type()))));
      }
    }
  }
  return groups;
}

// The call that the k-th COMM_COLL_NODE of process group `group` forms (n0, of type and size c0,
// on the group's first rank, trace t0; the other ranks' agree): its algorithm and CollectiveCall.
std::pair<std::string, CollectiveCall> call_of(const RankTrace& t0, const EtNode& n0,
                                               const Coll& c0, const std::vector<int>& members,
                                               const std::string& group, uint64_t k,
                                               const ChakraOptions& o) {
  CollectiveCall call;
  call.name = n0.name().empty() ? fmt::format("{}#{}", comm_type_name(c0.type), k) : n0.name();
  call.ranks = members;
  call.bytes = c0.bytes;
  call.channels = o.channels;
  call.chunk_bytes = o.chunk_bytes;
  std::string algorithm;
  switch (c0.type) {
    case ChakraProtoMsg::ALL_REDUCE:
      algorithm = o.allreduce;
      break;
    case ChakraProtoMsg::REDUCE_SCATTER:
      algorithm = "reducescatter_ring";
      break;
    case ChakraProtoMsg::ALL_GATHER:
      algorithm = "allgather_ring";
      // comm_size is each rank's input; S, the output, is n of them. Checked: a product that
      // wrapped (2^61 + 1024 B on 8 ranks is 8 KiB mod 2^64) would run a wrong call silently.
      if (__builtin_mul_overflow(c0.bytes, static_cast<uint64_t>(members.size()), &call.bytes))
        throw InputError(what(t0, n0,
                              fmt::format("ALL_GATHER of comm_size {} B on {} ranks: {} x {} "
                                          "does not fit in 64 bits",
                                          c0.bytes, members.size(), c0.bytes, members.size())));
      break;
    case ChakraProtoMsg::ALL_TO_ALL:
      algorithm = "alltoall_direct";
      break;
    default: {  // BROADCAST
      algorithm = "broadcast_ring";
      const int root = static_cast<int>(int_attr(t0, n0, "comm_src").value_or(members.front()));
      const auto it = std::find(members.begin(), members.end(), root);
      if (it == members.end())
        throw InputError(what(t0, n0,
                              fmt::format("broadcast root (comm_src) {} is not a rank of "
                                          "its process group '{}'",
                                          root, shown(group))));
      call.root = static_cast<int>(it - members.begin());
    }
  }
  return {algorithm, call};
}

// No rank can go on: a rank waits at a call that another rank of its group never reaches. The
// error names both (waiting[r]: the call rank r waits at, nullptr when it is done).
[[noreturn]] void never_starts(const std::vector<RankTrace>& traces,
                               const std::vector<const EtNode*>& waiting,
                               const std::map<std::string, std::vector<int>>& groups,
                               const std::map<std::string, uint64_t>& calls) {
  for (size_t r = 0; r < traces.size(); ++r) {
    const EtNode* n = waiting[r];
    if (!n) continue;
    const std::string group = string_attr(*n, "pg_name");
    for (int s : groups.at(group)) {
      const EtNode* m = waiting[s];
      if (m && string_attr(*m, "pg_name") == group) continue;
      const std::string there =
          m ? fmt::format("it waits at node {} ({}), a call of process group '{}'", m->id(),
                          shown(m->name()), shown(string_attr(*m, "pg_name")))
            : std::string("it has no more calls");
      const auto k = calls.find(group);
      throw InputError(fmt::format("{}: call {} of process group '{}' never starts: {}: {}",
                                   where(traces[r], *n), k == calls.end() ? 0 : k->second,
                                   shown(group), traces[s].file, there));
    }
  }
  throw std::logic_error("never_starts: every rank can go on");
}

// Per graph node, the trace node it was built from: (rank, index in the rank's file).
using Origins = std::vector<std::pair<int, uint32_t>>;

// A cycle finalize found through matched messages (graph nodes, each waiting for the next), as
// the trace nodes on it: "FILE: node ID (NAME): on a dependency cycle across ranks: ...". A
// collective's nodes on it are its call's node on each rank, named once.
std::string cycle_message(const std::vector<RankTrace>& traces, const Origins& origin,
                          const std::vector<uint32_t>& cycle) {
  std::vector<std::pair<int, uint32_t>> on;
  for (const uint32_t x : cycle)
    if (on.empty() || on.back() != origin[x]) on.push_back(origin[x]);
  if (on.size() > 1 && on.front() == on.back()) on.pop_back();
  constexpr size_t kShown = 8;
  std::string chain;
  for (size_t k = 1; k < on.size() && k < kShown; ++k) {
    const auto [r, i] = on[k];
    chain += fmt::format(", which waits for {} node {} ({})", traces[r].file,
                         traces[r].nodes[i].id(), shown(traces[r].nodes[i].name()));
  }
  if (on.size() > kShown) chain += fmt::format(", ... ({} nodes in all)", on.size());
  const auto [r, i] = on.front();
  return what(traces[r], traces[r].nodes[i],
              "on a dependency cycle across ranks (a receive waits for its send), which no run "
              "can finish: it waits for " +
                  (on.size() > 1 ? chain.substr(std::string(", which waits for ").size())
                                 : std::string("itself")) +
                  (on.size() > 1 ? ", which waits for it" : ""));
}

// Every point-to-point send with its receive, as finalize pairs them, named by file and node
// (`origin`: a message node's rank and index in its trace).
void check_pairs(const ExecGraph& g, const std::vector<RankTrace>& traces, const Origins& origin) {
  std::map<std::tuple<int, int, uint32_t>, std::pair<std::vector<uint32_t>, std::vector<uint32_t>>>
      pairs;
  for (uint32_t i = 0; i < g.size(); ++i) {
    const auto& x = g.node(i);
    if (x.tag == 0) continue;
    if (x.kind == NodeKind::kSend) pairs[{x.rank, x.peer, x.tag}].first.push_back(i);
    if (x.kind == NodeKind::kRecv) pairs[{x.peer, x.rank, x.tag}].second.push_back(i);
  }
  auto name = [&](uint32_t i) {
    const auto [r, k] = origin[i];
    return where(traces[r], traces[r].nodes[k]);
  };
  for (const auto& [key, v] : pairs) {
    const auto& [src, dst, tag] = key;
    const auto& [sends, recvs] = v;
    for (size_t k = 0; k < std::max(sends.size(), recvs.size()); ++k) {
      if (k >= recvs.size())
        throw InputError(
            fmt::format("{}: send to rank {} (comm_tag {}) that {} never receives: "
                        "it has {} receive(s) from rank {} with that tag",
                        name(sends[k]), dst, tag - 1, traces[dst].file, recvs.size(), src));
      if (k >= sends.size())
        throw InputError(
            fmt::format("{}: receive from rank {} (comm_tag {}) that {} never sends: "
                        "it has {} send(s) to rank {} with that tag",
                        name(recvs[k]), src, tag - 1, traces[src].file, sends.size(), dst));
      if (g.node(sends[k]).bytes != g.node(recvs[k]).bytes)
        throw InputError(fmt::format("{}: sends {} B, but its receive, {}, expects {} B",
                                     name(sends[k]), g.node(sends[k]).bytes, name(recvs[k]),
                                     g.node(recvs[k]).bytes));
    }
  }
}

}  // namespace

ExecGraph read_chakra(const std::vector<std::string>& files, const ChakraOptions& o) {
  const auto ranks = static_cast<int>(files.size());
  std::vector<RankTrace> traces;
  traces.reserve(files.size());
  uint64_t job_nodes = 0;
  for (const std::string& f : files) {
    check_stop("reading the Chakra traces");
    traces.push_back(parse(f, job_nodes));
    order(traces.back());
  }

  // Check every node before building: types, peers, sizes; the process groups' members.
  std::map<std::string, std::vector<int>> groups = check_nodes(traces);  // pg_name -> ranks

  ExecGraph g(ranks);
  std::vector<Cursor> at(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) at[r].done.resize(traces[r].nodes.size());
  // Per graph node: the (rank, file index) of the trace node it comes from, to name it.
  Origins origin;
  std::map<std::string, uint64_t> calls;  // per group: calls added

  // Each rank's nodes by id.
  std::vector<std::unordered_map<uint64_t, uint32_t>> index(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    for (uint32_t i = 0; i < traces[r].nodes.size(); ++i) index[r][traces[r].nodes[i].id()] = i;
  // A node's dependencies as graph nodes (those that finish each node it depends on).
  auto deps_fast = [&](int r, const EtNode& n) {
    std::vector<uint32_t> d;
    for (const auto* list : {&n.data_deps(), &n.ctrl_deps()})
      for (uint64_t id : *list) {
        const auto& v = at[r].done[index[r].at(id)];
        d.insert(d.end(), v.begin(), v.end());
      }
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    return d;
  };
  // Graph nodes the joining points stand for, in all: a chain of joining points each on a
  // compute and the previous one stands for 1, 2, 3, ... nodes (quadratic: a 1 MB trace held
  // GBs), so their total is bounded as the graph's nodes are.
  uint64_t joined = 0;

  // Adds rank r's nodes up to its next collective; whether it added any.
  auto advance = [&](int r) {
    const RankTrace& t = traces[r];
    Cursor& c = at[r];
    bool added = false;
    while (c.pos < t.order.size()) {
      const uint32_t i = t.order[c.pos];
      const EtNode& n = t.nodes[i];
      if (n.type() == ChakraProtoMsg::COMM_COLL_NODE) return added;  // waits for its group
      std::vector<uint32_t> deps = deps_fast(r, n);
      switch (static_cast<int>(n.type())) {
        case ChakraProtoMsg::COMP_NODE:
          if (n.duration_micros() > 0) {
            const uint32_t x =
                g.add_compute(r, Time::us(static_cast<int64_t>(n.duration_micros())), deps);
            g.set_name(x, n.name());  // ranks.csv names the span by it
            origin.emplace_back(r, i);
            c.done[i] = {x};
            break;
          }
          [[fallthrough]];
        default:  // joining points: finished when their dependencies are
          if ((joined += deps.size()) > trace_node_limit())
            throw InputError(what(
                t, n,
                fmt::format("a joining point (no GPU time) standing for {} graph nodes, past the "
                            "{} the job's joining points may stand for in all (a chain of them, "
                            "each on another and on more nodes)",
                            deps.size(), trace_node_limit())));
          c.done[i] = std::move(deps);
          break;
        case ChakraProtoMsg::COMM_SEND_NODE:
        case ChakraProtoMsg::COMM_RECV_NODE: {
          const bool send = n.type() == ChakraProtoMsg::COMM_SEND_NODE;
          const auto peer = static_cast<int>(need_int(t, n, send ? "comm_dst" : "comm_src"));
          const uint64_t bytes = comm_size(t, n);
          const auto tag = static_cast<uint32_t>(int_attr(t, n, "comm_tag").value_or(0) + 1);
          // The scale-up switch's reduce and multicast operations are told apart by tag
          // (scale_up.h): a trace's own tags stay out of their range.
          const uint32_t kind = tag & kNvlsKindMask;
          if (kind == kNvlsReduce || kind == kNvlsMulticast)
            throw InputError(
                what(t, n,
                     fmt::format("comm_tag {} is in the range the scale-up switch's "
                                 "reduce and multicast operations use (0x{:x} - "
                                 "0x{:x}): renumber the trace's tags",
                                 tag - 1, kNvlsReduce - 1, kNvlsMulticast + 0xFFFFFEu)));
          const uint32_t x = send ? g.add_send(r, peer, bytes, 0, deps, tag)
                                  : g.add_recv(r, peer, bytes, 0, deps, tag);
          origin.emplace_back(r, i);
          c.done[i] = {x};
          break;
        }
      }
      ++c.pos;
      added = true;
    }
    return added;
  };
  auto waits_at = [&](int r) -> const EtNode* {
    const RankTrace& t = traces[r];
    return at[r].pos < t.order.size() ? &t.nodes[t.order[at[r].pos]] : nullptr;
  };

  for (;;) {
    bool progress = false;
    for (int r = 0; r < ranks; ++r) progress |= advance(r);
    // Every group whose ranks all wait at their next call of it: the call.
    for (const auto& [group, members] : groups) {
      bool all = true;
      for (int r : members) {
        const EtNode* n = waits_at(r);
        all = all && n && string_attr(*n, "pg_name") == group;
      }
      if (!all) continue;
      const int first = members.front();
      const EtNode& n0 = *waits_at(first);
      const Coll c0 = coll_of(traces[first], n0);
      for (int r : members) {
        const EtNode& n = *waits_at(r);
        const Coll c = coll_of(traces[r], n);
        if (c.type != c0.type || c.bytes != c0.bytes)
          throw InputError(fmt::format(
              "{}: call {} of process group '{}' is {} of {} B, but {}, the same call, is {} of "
              "{} B",
              where(traces[r], n), calls[group], shown(group), comm_type_name(c.type), c.bytes,
              where(traces[first], n0), comm_type_name(c0.type), c0.bytes));
      }
      const auto [algorithm, call] =
          call_of(traces[first], n0, c0, members, group, calls[group], o);
      RankNodes start;
      for (int r : members) start.push_back(deps_fast(r, *waits_at(r)));
      RankNodes done;
      try {
        done = add_collective(g, algorithm, call, start);
      } catch (const std::invalid_argument& e) {
        throw InputError(what(traces[first], n0, e.what()));
      }
      for (size_t x = origin.size(); x < g.size(); ++x) {  // the call's nodes, each its rank's
        const int r = g.node(static_cast<uint32_t>(x)).rank;
        origin.emplace_back(r, traces[r].order[at[r].pos]);
      }
      for (size_t k = 0; k < members.size(); ++k) {
        const int r = members[k];
        at[r].done[traces[r].order[at[r].pos]] = std::move(done[k]);
        ++at[r].pos;
      }
      ++calls[group];
      progress = true;
    }
    bool finished = true;
    for (int r = 0; r < ranks; ++r) finished = finished && !waits_at(r);
    if (finished) break;
    if (progress) continue;
    std::vector<const EtNode*> waiting;
    for (int r = 0; r < ranks; ++r) waiting.push_back(waits_at(r));
    never_starts(traces, waiting, groups, calls);
  }

  check_pairs(g, traces, origin);
  try {
    g.finalize();
  } catch (const CycleError& e) {
    throw InputError(cycle_message(traces, origin, e.nodes()));
  } catch (const std::invalid_argument& e) {  // not expected after the check above
    throw InputError(fmt::format("{} ... {}: {}", files.front(), files.back(), e.what()));
  }
  return g;
}

std::vector<std::string> chakra_files(const std::string& pattern, int ranks) {
  std::string p = pattern;
  const std::string key = "{rank}";
  if (p.find(key) == std::string::npos) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      // A folder: the one name of its <name>.<rank>.et files.
      std::set<std::string> names;
      for (const auto& e : fs::directory_iterator(p, ec)) {
        const std::string f = e.path().filename().string();
        if (f.size() < 4 || f.substr(f.size() - 3) != ".et") continue;
        const std::string stem = f.substr(0, f.size() - 3);
        const size_t dot = stem.rfind('.');
        if (dot == std::string::npos || dot + 1 == stem.size() ||
            stem.find_first_not_of("0123456789", dot + 1) != std::string::npos)
          continue;
        names.insert(stem.substr(0, dot));
      }
      if (names.size() != 1)
        throw InputError(
            fmt::format("workload.file: {}: a folder of Chakra traces holds "
                        "<name>.<rank>.et files of one name; it has {}",
                        pattern, names.empty() ? "none" : "several names"));
      p = (fs::path(p) / (*names.begin() + ".{rank}.et")).string();
    } else {
      p += ".{rank}.et";  // ASTRA-sim's prefix
    }
  }
  auto file = [&](int r) {
    std::string f = p;
    for (size_t at = f.find(key); at != std::string::npos; at = f.find(key, at))
      f.replace(at, key.size(), std::to_string(r));
    return f;
  };
  std::vector<std::string> files;
  std::error_code ec;
  if (ranks > 0) {
    for (int r = 0; r < ranks; ++r) {
      files.push_back(file(r));
      if (!fs::is_regular_file(files.back(), ec))
        throw InputError(
            fmt::format("workload.file: {}: rank {}'s trace {} does not exist "
                        "(workload.ranks is {})",
                        pattern, r, files.back(), ranks));
    }
  } else {
    while (fs::is_regular_file(file(static_cast<int>(files.size())), ec))
      files.push_back(file(static_cast<int>(files.size())));
    if (files.empty())
      throw InputError(
          fmt::format("workload.file: {}: no trace for rank 0 ({})", pattern, file(0)));
  }
  return files;
}

}  // namespace fabricsim::workload
