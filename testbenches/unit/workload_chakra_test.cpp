// Chakra execution traces (models/workload/chakra_trace.h): traces written here with the classes
// generated from our schema, read back into execution graphs and run on the ideal network. Each
// node type maps to its graph nodes, dependencies (data and control) are honoured, a trace's
// all-reduce is the built-in one to the femtosecond, and every malformed trace is an error naming
// its file, node and problem.
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra_et.pb.h"
#include "models/common/error.h"
#include "models/workload/chakra_trace.h"
#include "models/workload/collective.h"
#include "models/workload/ideal_network.h"

namespace fabricsim {
void PrintTo(const Time& t, std::ostream* os) {
  *os << t.as_fs() << " fs";
}
}  // namespace fabricsim

namespace fabricsim::workload {
namespace {

namespace fs = std::filesystem;
using ChakraProtoMsg::Node;
using ::testing::HasSubstr;

const BitRate kB = BitRate::gbps(800);  // 10,000 fs a byte
const Time kAlpha = Time::ns(1000);

class ChakraTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::path(::testing::TempDir()) /
        ("chakra_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // name: "<folder>/<name>" or "<name>", in the test's folder.
  std::string path(int rank, const std::string& name = "t") const {
    return (dir_ / (name + "." + std::to_string(rank) + ".et")).string();
  }
  // Writes rank r's trace (varint-delimited: GlobalMetadata, then the nodes).
  std::string write(int rank, const std::vector<Node>& nodes, const std::string& name = "t") {
    std::string bytes;
    auto put = [&](const google::protobuf::MessageLite& m) {
      std::string s = m.SerializeAsString();
      for (uint64_t n = s.size();; n >>= 7) {
        if (n < 0x80) {
          bytes.push_back(static_cast<char>(n));
          break;
        }
        bytes.push_back(static_cast<char>((n & 0x7F) | 0x80));
      }
      bytes += s;
    };
    ChakraProtoMsg::GlobalMetadata meta;
    meta.set_version("0.0.4");
    put(meta);
    for (const Node& n : nodes) put(n);
    const std::string p = path(rank, name);
    fs::create_directories(fs::path(p).parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  // One trace per rank.
  std::vector<std::string> job(const std::vector<std::vector<Node>>& ranks) {
    std::vector<std::string> files;
    for (size_t r = 0; r < ranks.size(); ++r) files.push_back(write(static_cast<int>(r), ranks[r]));
    return files;
  }
  fs::path dir_;
};

Node node(uint64_t id, const std::string& name, ChakraProtoMsg::NodeType type,
          std::vector<uint64_t> deps = {}, uint64_t us = 0) {
  Node n;
  n.set_id(id);
  n.set_name(name);
  n.set_type(type);
  for (uint64_t d : deps) n.add_data_deps(d);
  n.set_duration_micros(us);
  return n;
}
Node& attr(Node& n, const std::string& name, int64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
  return n;
}
Node comp(uint64_t id, uint64_t us, std::vector<uint64_t> deps = {}) {
  return node(id, "comp" + std::to_string(id), ChakraProtoMsg::COMP_NODE, std::move(deps), us);
}
Node send(uint64_t id, int dst, int64_t bytes, std::vector<uint64_t> deps = {}) {
  Node n = node(id, "send" + std::to_string(id), ChakraProtoMsg::COMM_SEND_NODE, std::move(deps));
  attr(n, "comm_dst", dst);
  return attr(n, "comm_size", bytes);
}
Node recv(uint64_t id, int src, int64_t bytes, std::vector<uint64_t> deps = {}) {
  Node n = node(id, "recv" + std::to_string(id), ChakraProtoMsg::COMM_RECV_NODE, std::move(deps));
  attr(n, "comm_src", src);
  return attr(n, "comm_size", bytes);
}
Node coll(uint64_t id, ChakraProtoMsg::CollectiveCommType type, int64_t bytes,
          std::vector<uint64_t> deps = {}) {
  Node n = node(id, "coll" + std::to_string(id), ChakraProtoMsg::COMM_COLL_NODE, std::move(deps));
  attr(n, "comm_type", type);
  return attr(n, "comm_size", bytes);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// A graph run on the ideal network.
struct Replay {
  explicit Replay(const ExecGraph& g) : net(g.ranks(), kB, kAlpha), e(g, net), end(net.run(e)) {}
  IdealNetwork net;
  WorkloadEngine e;
  Time end;
};
Time run(const ExecGraph& g) {
  return Replay(g).end;
}
// Ring all-reduce of s bytes on n ranks: 2(n - 1) steps of S/n bytes and alpha.
Time ring(uint64_t s, int n) {
  return (kAlpha + kB.serialization(Bytes(s / n))) * (2 * (n - 1));
}

TEST_F(ChakraTest, EachNodeTypeMapsToItsGraphNodes) {
  Node tagged = send(2, 1, 1000, {1});
  attr(tagged, "comm_tag", 7);
  Node tagged_recv = recv(11, 0, 1000);
  attr(tagged_recv, "comm_tag", 7);
  const auto files = job({
      {comp(1, 5), tagged, node(3, "load", ChakraProtoMsg::MEM_LOAD_NODE, {2}),
       coll(4, ChakraProtoMsg::ALL_GATHER, 1000, {3})},
      {tagged_recv, comp(12, 2, {11}), coll(13, ChakraProtoMsg::ALL_GATHER, 1000, {12})},
  });
  const ExecGraph g = read_chakra(files, {});
  // Rank 0: compute, send; rank 1: receive, compute; then the all-gather (MEM_LOAD: no node).
  ASSERT_GE(g.size(), 4u);
  EXPECT_EQ(g.node(0).kind, NodeKind::kCompute);
  EXPECT_EQ(g.node(0).duration, Time::us(5));
  EXPECT_EQ(g.node(1).kind, NodeKind::kSend);
  EXPECT_EQ(g.node(1).peer, 1);
  EXPECT_EQ(g.node(1).bytes, 1000u);
  EXPECT_EQ(g.node(1).channel, 0);
  EXPECT_EQ(g.node(1).tag, 8u);  // comm_tag + 1: never a collective's
  EXPECT_EQ(g.node(2).kind, NodeKind::kRecv);
  EXPECT_EQ(g.node(2).rank, 1);
  EXPECT_EQ(g.match(1), 2u);
  EXPECT_EQ(g.node(3).kind, NodeKind::kCompute);
  ASSERT_EQ(g.spans().size(), 1u);
  const Span& s = g.spans()[0];
  EXPECT_EQ(s.algorithm, "allgather_ring");
  EXPECT_EQ(s.name, "coll4");
  EXPECT_EQ(s.ranks, 2);
  EXPECT_EQ(s.bytes, 2000u);  // comm_size is each rank's input: S = n x comm_size
  // Rank 0's part of the all-gather waits for its send (through the MEM_LOAD), rank 1's for its
  // compute.
  const Replay x(g);
  for (uint32_t i = s.first; i < s.last; ++i) {
    if (g.node(i).kind != NodeKind::kSend) continue;
    EXPECT_GE(x.e.started(i), g.node(i).rank == 0 ? x.e.ended(1) : x.e.ended(3));
  }
}

TEST_F(ChakraTest, EachCommTypeRunsItsCollective) {
  const std::vector<std::pair<ChakraProtoMsg::CollectiveCommType, std::string>> cases = {
      {ChakraProtoMsg::ALL_REDUCE, "allreduce_halving_doubling"},
      {ChakraProtoMsg::REDUCE_SCATTER, "reducescatter_ring"},
      {ChakraProtoMsg::ALL_TO_ALL, "alltoall_direct"},
      {ChakraProtoMsg::BROADCAST, "broadcast_ring"}};
  for (const auto& [type, algorithm] : cases) {
    std::vector<std::vector<Node>> ranks(4);
    for (auto& r : ranks) {
      r.push_back(coll(1, type, 4096));
      if (type == ChakraProtoMsg::BROADCAST) attr(r.back(), "comm_src", 2);
    }
    ChakraOptions o;
    o.allreduce = "allreduce_halving_doubling";
    o.channels = 2;
    const ExecGraph g = read_chakra(job(ranks), o);
    ASSERT_EQ(g.spans().size(), 1u) << algorithm;
    EXPECT_EQ(g.spans()[0].algorithm, algorithm);
    EXPECT_EQ(g.spans()[0].bytes, 4096u);
    // The call as the registry builds it.
    ExecGraph want(4);
    CollectiveCall c;
    c.name = "coll1";
    c.ranks = {0, 1, 2, 3};
    c.bytes = 4096;
    c.channels = 2;
    c.root = type == ChakraProtoMsg::BROADCAST ? 2 : 0;
    add_collective(want, algorithm, c);
    want.finalize();
    ASSERT_EQ(g.size(), want.size()) << algorithm;
    EXPECT_EQ(run(g), run(want)) << algorithm;
  }
}

TEST_F(ChakraTest, AnAllReduceTraceIsTheBuiltInCollectiveToTheFemtosecond) {
  std::vector<std::vector<Node>> ranks(8, {coll(0, ChakraProtoMsg::ALL_REDUCE, 8 << 20)});
  const ExecGraph g = read_chakra(job(ranks), {});
  ExecGraph want(8);
  CollectiveCall c;
  c.name = "allreduce_ring#0";
  c.ranks.resize(8);
  std::iota(c.ranks.begin(), c.ranks.end(), 0);
  c.bytes = 8 << 20;
  add_collective(want, "allreduce_ring", c, RankNodes(8));
  want.finalize();
  ASSERT_EQ(g.size(), want.size());
  for (uint32_t i = 0; i < g.size(); ++i) EXPECT_EQ(g.describe(i), want.describe(i));
  EXPECT_EQ(run(g), ring(8 << 20, 8));
  EXPECT_EQ(run(want), ring(8 << 20, 8));
}

// The two-layer data-parallel step of scripts/make_chakra_examples.py on the ideal network:
// forward, backward of layer 2, its gradients' all-reduce overlapping layer 1's backward, then
// layer 1's all-reduce after both (a control dependency: one NCCL stream). The nodes are listed
// out of order (a node before what it depends on).
TEST_F(ChakraTest, DataAndControlDependenciesAreHonoured) {
  const uint64_t g2 = 4 << 20, g1 = 2 << 20;
  for (uint64_t bwd1 : {20, 200}) {  // shorter, then longer than layer 2's all-reduce
    std::vector<std::vector<Node>> ranks(4);
    for (auto& r : ranks) {
      Node ar1 = coll(5, ChakraProtoMsg::ALL_REDUCE, g1, {4});
      ar1.add_ctrl_deps(3);
      r = {ar1, comp(4, bwd1, {2}), coll(3, ChakraProtoMsg::ALL_REDUCE, g2, {2}), comp(2, 150, {1}),
           comp(1, 200)};
    }
    const ExecGraph g = read_chakra(job(ranks), {});
    ASSERT_EQ(g.spans().size(), 2u);
    EXPECT_EQ(g.spans()[0].name, "coll3");
    EXPECT_EQ(g.spans()[1].name, "coll5");
    const Replay x(g);
    const Time ar2_start = Time::us(350);
    const Time ar1_start = ar2_start + std::max(ring(g2, 4), Time::us(bwd1));
    EXPECT_EQ(x.end, ar1_start + ring(g1, 4)) << bwd1;
    for (uint32_t i = g.spans()[1].first; i < g.spans()[1].last; ++i)
      EXPECT_GE(x.e.started(i), ar1_start);
  }
}

TEST_F(ChakraTest, PointToPointMessagesMatchByTagAcrossACollective) {
  // Rank 0 sends to rank 1 before the all-reduce, rank 1 receives after it: the send must not
  // be taken for the all-reduce's first message on the same connection.
  const auto files = job({
      {send(1, 1, 3000), coll(2, ChakraProtoMsg::ALL_REDUCE, 1 << 16, {1})},
      {coll(1, ChakraProtoMsg::ALL_REDUCE, 1 << 16), recv(2, 0, 3000, {1})},
  });
  const ExecGraph g = read_chakra(files, {});
  EXPECT_EQ(g.node(g.match(0)).bytes, 3000u);
  EXPECT_EQ(g.node(g.match(0)).rank, 1);
  EXPECT_TRUE(Replay(g).e.finished());
}

TEST_F(ChakraTest, AMalformedTraceNamesItsFileNodeAndProblem) {
  const int64_t kib = 1024;
  struct Case {
    std::string what;
    std::vector<std::vector<Node>> ranks;
    std::vector<std::string> expect;
  };
  Node self_dep = comp(2, 1, {3});
  Node cyc = comp(3, 1, {2});
  Node unknown = node(6, "ckpt", static_cast<ChakraProtoMsg::NodeType>(10));
  Node bad_type = coll(4, ChakraProtoMsg::BARRIER, kib);
  Node no_size = node(5, "send5", ChakraProtoMsg::COMM_SEND_NODE);
  attr(no_size, "comm_dst", 1);
  const std::vector<Case> cases = {
      {"cycle",
       {{comp(1, 1), self_dep, cyc}, {}},
       {"t.0.et: node", "dependency cycle: ", "2", "3"}},
      {"missing dep", {{comp(1, 1, {9})}, {}}, {"t.0.et: node 1 (comp1): depends on node 9"}},
      {"duplicate id", {{comp(1, 1), comp(1, 2)}, {}}, {"t.0.et: node 1 (comp1): a second node"}},
      {"send without receive",
       {{send(7, 1, kib)}, {}},
       {"t.0.et: node 7 (send7): send to rank 1", "t.1.et never receives"}},
      {"receive without send",
       {{}, {recv(8, 0, kib)}},
       {"t.1.et: node 8 (recv8): receive from rank 0", "t.0.et never sends"}},
      {"sizes differ",
       {{send(7, 1, kib)}, {recv(8, 0, 2 * kib)}},
       {"t.0.et: node 7 (send7): sends 1024 B", "t.1.et: node 8 (recv8)", "2048 B"}},
      {"rank outside the job",
       {{send(7, 5, kib)}, {}},
       {"t.0.et: node 7 (send7): comm_dst 5", "2 ranks"}},
      {"receive from itself",
       {{}, {recv(8, 1, kib)}},
       {"t.1.et: node 8 (recv8): comm_src 1 is the rank"}},
      {"unknown node type",
       {{unknown}, {}},
       {"t.0.et: node 6 (ckpt): node type 10 (CHECKPOINT_NODE)"}},
      {"comm_type not modelled",
       {{bad_type}, {bad_type}},
       {"t.0.et: node 4 (coll4): comm_type 9 (BARRIER)"}},
      {"no comm_size",
       {{no_size}, {}},
       {"t.0.et: node 5 (send5): COMM_SEND_NODE has no comm_size"}},
      {"calls differ",
       {{coll(1, ChakraProtoMsg::ALL_REDUCE, kib)}, {coll(2, ChakraProtoMsg::ALL_GATHER, kib)}},
       {"t.1.et: node 2 (coll2)", "ALL_GATHER of 1024 B", "t.0.et: node 1 (coll1)", "ALL_REDUCE"}},
      {"a call one rank never reaches",
       {{coll(1, ChakraProtoMsg::ALL_REDUCE, kib), coll(2, ChakraProtoMsg::ALL_REDUCE, kib, {1})},
        {coll(1, ChakraProtoMsg::ALL_REDUCE, kib)}},
       {"t.0.et: node 2 (coll2)", "call 1", "never starts", "t.1.et: it has no more calls"}},
  };
  for (const Case& c : cases) {
    // Each case's files in a folder of its own: <case>/t.<rank>.et.
    std::vector<std::string> files;
    for (size_t r = 0; r < c.ranks.size(); ++r)
      files.push_back(write(static_cast<int>(r), c.ranks[r], c.what + "/t"));
    const std::string err = error_of([&] { read_chakra(files, {}); });
    for (const std::string& x : c.expect) EXPECT_THAT(err, HasSubstr(x)) << c.what;
  }
}

// Issue #38: a send's or receive's comm_size at most 2 GiB (one message, as a message file's
// line), a collective's at most 64 GiB (as workload.bytes: its algorithm cuts it into messages);
// an all-gather's S (n x comm_size) is multiplied checked. 2^61 + 1024 B on 8 ranks once
// wrapped to 8 KiB and ran with exit 0.
TEST_F(ChakraTest, CommSizesAreWithinTheLimit) {
  const int64_t max = int64_t{1} << 31, call_max = int64_t{64} << 30;
  const std::string over = "is larger than the largest size, 2147483648 B (2 GiB";
  const std::string call = "is larger than the largest size, 68719476736 B (64 GiB";
  EXPECT_THAT(error_of([&] {
                read_chakra(job({{send(7, 1, max + 1)}, {recv(8, 0, max + 1)}}), {});
              }),
              HasSubstr("t.0.et: node 7 (send7): comm_size 2147483649 " + over));
  EXPECT_THAT(error_of([&] {
                read_chakra(job({{send(7, 1, 1024)}, {recv(8, 0, max + 1)}}), {});
              }),
              HasSubstr("t.1.et: node 8 (recv8): comm_size 2147483649 " + over));
  const int64_t wraps = (int64_t{1} << 61) + 1024;
  std::vector<std::vector<Node>> ranks(8, {coll(3, ChakraProtoMsg::ALL_GATHER, wraps)});
  EXPECT_THAT(error_of([&] { read_chakra(job(ranks), {}); }),
              HasSubstr("t.0.et: node 3 (coll3): comm_size 2305843009213694976 " + call));
  for (auto type : {ChakraProtoMsg::ALL_REDUCE, ChakraProtoMsg::ALL_TO_ALL,
                    ChakraProtoMsg::REDUCE_SCATTER, ChakraProtoMsg::BROADCAST})
    EXPECT_THAT(error_of([&] {
                  read_chakra(job({{coll(3, type, call_max + 1)}, {}}), {});
                }),
                HasSubstr("node 3 (coll3): comm_size 68719476737 " + call));
  // An all-gather's S is n of them (more than 2 GiB, and exact); its messages are comm_size.
  ranks.assign(8, {coll(3, ChakraProtoMsg::ALL_GATHER, max)});
  const ExecGraph g = read_chakra(job(ranks), {});
  ASSERT_EQ(g.spans().size(), 1u);
  EXPECT_EQ(g.spans()[0].bytes, 8 * (uint64_t{1} << 31));
  // 64 GiB all-reduced on 32 ranks: messages of 2 GiB, taken; on 16, 4 GiB ones, refused.
  ranks.assign(32, {coll(3, ChakraProtoMsg::ALL_REDUCE, call_max)});
  EXPECT_EQ(read_chakra(job(ranks), {}).spans()[0].bytes, uint64_t{64} << 30);
  ranks.assign(16, {coll(3, ChakraProtoMsg::ALL_REDUCE, call_max)});
  EXPECT_THAT(error_of([&] { read_chakra(job(ranks), {}); }),
              HasSubstr("a message of 4294967296 B, larger than the largest"));
}

// Compute nodes keep their trace names (ranks.csv shows them); messages show a name clipped and
// escaped (a Kineto kernel name is long, with commas, and may hold a newline).
TEST_F(ChakraTest, NodeNamesAreKeptAndShownClipped) {
  Node k = comp(1, 5);
  k.set_name("void at::native::kernel<float, 4>(\"x\",\ny)");
  Node plain = comp(2, 3, {1});
  plain.set_name("");
  const ExecGraph g = read_chakra(job({{k, plain}, {comp(1, 1)}}), {});
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g.name(0), "void at::native::kernel<float, 4>(\"x\",\ny)");
  EXPECT_EQ(g.name(1), "");
  EXPECT_EQ(g.name(2), "comp1");
  Node bad = comp(4, 1, {9});
  bad.set_name(std::string(100000, 'k') + "\n");
  const std::string err = error_of([&] { read_chakra(job({{bad}, {}}), {}); });
  EXPECT_THAT(err, HasSubstr("t.0.et: node 4 (" + std::string(40, 'k') + "... ("));
  EXPECT_THAT(err, HasSubstr("characters)): depends on node 9"));
  EXPECT_LT(err.size(), 300u);
  // A name is kept to its first 1 KiB (at a character's start), marked and its length said:
  // names cost a node at most ~1 KiB whatever the trace holds.
  Node huge = comp(1, 5);
  huge.set_name(std::string(1023, 'a') + "\xc3\xa9" + std::string(100000, 'b'));
  const ExecGraph h = read_chakra(job({{huge}, {comp(1, 1)}}), {});
  EXPECT_EQ(h.name(0), std::string(1023, 'a') + "... (101025 characters)");
}

// Of a node's attributes only those read are kept (comm_*, pg_name), inputs and outputs go, and
// a string attribute (pg_name) longer than 256 bytes is refused: a node costs a bounded amount
// whatever a trace attaches to it.
TEST_F(ChakraTest, AttributesBeyondThoseReadAreNotKeptAndLongStringsAreRefused) {
  Node c = coll(3, ChakraProtoMsg::ALL_REDUCE, 1 << 20);
  auto* a = c.add_attr();
  a->set_name("pg_name");
  a->set_string_val(std::string(257, 'g'));
  EXPECT_THAT(error_of([&] {
                read_chakra(job({{c}, {c}}), {});
              }),
              HasSubstr("t.0.et: node 3 (coll3): attribute pg_name 'gggggggggg"));
  EXPECT_THAT(error_of([&] {
                read_chakra(job({{c}, {c}}), {});
              }),
              HasSubstr("is longer than 256 bytes"));
  // 10,000 other attributes of 1 KiB each on a compute node: read, and the run is as without.
  Node k = comp(1, 5);
  for (int i = 0; i < 10000; ++i) {
    auto* x = k.add_attr();
    x->set_name("junk" + std::to_string(i));
    x->set_string_val(std::string(1024, 'j'));
  }
  const ExecGraph g = read_chakra(job({{k}, {comp(1, 5)}}), {});
  EXPECT_EQ(g.size(), 2u);
}

TEST_F(ChakraTest, ACorruptFileIsAnErrorNamingIt) {
  const std::string p = write(0, {comp(1, 1), comp(2, 1, {1})});
  std::string bytes;
  {
    std::ifstream in(p, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto with = [&](const std::string& b) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << b;
    return error_of([&] { read_chakra({p}, {}); });
  };
  EXPECT_THAT(with(bytes.substr(0, bytes.size() - 3)),
              HasSubstr(p + ": the file ends inside a message"));
  EXPECT_THAT(with(bytes + '\x85'), HasSubstr(p + ": the message length at byte"));
  // A 2-byte message that is no Node: field 1 as 5 bytes of data, which are not there.
  EXPECT_THAT(with(bytes + std::string("\x02\x0a\x05", 3)),
              HasSubstr(p + ": the node after node 2 (comp2) does not parse"));
  EXPECT_THAT(with(""), HasSubstr(p + ": empty"));
  EXPECT_THAT(error_of([&] { read_chakra({path(7)}, {}); }), HasSubstr(path(7) + ": cannot open"));
  // A name that is not UTF-8 does not parse: our one line, not also protobuf's log on stderr.
  ::testing::internal::CaptureStderr();
  const std::string utf8 = with(bytes + std::string("\x04\x12\x02\xff\xfe", 5));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_THAT(utf8, HasSubstr(p + ": the node after node 2 (comp2) does not parse"));
}

TEST_F(ChakraTest, AJobsFilesFromAPatternAFolderOrAPrefix) {
  for (int r = 0; r < 3; ++r) write(r, {comp(1, 1)}, "job");
  const std::vector<std::string> want = {path(0, "job"), path(1, "job"), path(2, "job")};
  EXPECT_EQ(chakra_files((dir_ / "job.{rank}.et").string(), 0), want);
  EXPECT_EQ(chakra_files((dir_ / "job.{rank}.et").string(), 2),
            std::vector<std::string>(want.begin(), want.begin() + 2));
  EXPECT_EQ(chakra_files(dir_.string(), 0), want);
  EXPECT_EQ(chakra_files((dir_ / "job").string(), 0), want);
  EXPECT_THAT(error_of([&] { chakra_files((dir_ / "job.{rank}.et").string(), 4); }),
              HasSubstr("rank 3's trace " + path(3, "job") + " does not exist"));
  EXPECT_THAT(error_of([&] { chakra_files((dir_ / "nope.{rank}.et").string(), 0); }),
              HasSubstr("no trace for rank 0"));
  write(0, {comp(1, 1)}, "other");
  EXPECT_THAT(error_of([&] { chakra_files(dir_.string(), 0); }), HasSubstr("several names"));
}

// Each rank's send waits on its own receive (a point-to-point exchange written in the wrong
// order, or a receive before a collective the sender is behind): every check passed, and the run
// deadlocked advising a longer sim.drain_limit. Refused, naming the files and nodes on the cycle.
TEST_F(ChakraTest, ACycleAcrossRanksIsRefusedNamingItsNodes) {
  const std::string p2p = error_of([&] {
    read_chakra(job({{recv(1, 1, 64), send(2, 1, 64, {1})}, {recv(3, 0, 64), send(4, 0, 64, {3})}}),
                {});
  });
  EXPECT_THAT(p2p, HasSubstr("on a dependency cycle across ranks"));
  for (const char* node :
       {"t.0.et node 2 (send2)", "t.1.et node 3 (recv3)", "t.1.et node 4 (send4)"})
    EXPECT_THAT(p2p, HasSubstr(node));
  EXPECT_THAT(p2p, HasSubstr(": node 1 (recv1): "));
  // Through a collective: rank 0 receives before the all-reduce, rank 1 sends after it.
  const std::string through_call = error_of([&] {
    read_chakra(job({{recv(1, 1, 64), coll(2, ChakraProtoMsg::ALL_REDUCE, 1024, {1})},
                     {coll(2, ChakraProtoMsg::ALL_REDUCE, 1024), send(3, 0, 64, {2})}}),
                {});
  });
  EXPECT_THAT(through_call, HasSubstr("on a dependency cycle across ranks"));
  EXPECT_THAT(through_call, HasSubstr("node 2 (coll2)"));
  EXPECT_THAT(through_call, HasSubstr("node 3 (send3)"));
  // The exchange in a good order (rank 1 receives, then sends back) runs.
  const ExecGraph ok = read_chakra(
      job({{send(1, 1, 64), recv(2, 1, 64, {1})}, {recv(3, 0, 64), send(4, 0, 64, {3})}}), {});
  IdealNetwork net(2, kB, kAlpha);
  WorkloadEngine e(ok, net);
  net.run(e);
  EXPECT_TRUE(e.finished());
}

// A job's traces hold at most the graph's node limit, counted as they are read.
TEST_F(ChakraTest, TheJobsNodesAreBounded) {
  const GraphLimits saved = graph_limits();
  graph_limits().nodes = 3;
  const std::string e = error_of([&] {
    read_chakra(job({{comp(1, 1), comp(2, 1)}, {comp(3, 1), comp(4, 1)}}), {});
  });
  EXPECT_THAT(e, HasSubstr("t.1.et: node 4 (comp4) is past the 3 nodes the job's traces may hold"));
  // A chain of joining points, each on a compute and the previous one: the k-th stands for k
  // computes (a 1 MB trace of them hung, quadratic). Their total is bounded as the nodes are.
  graph_limits().nodes = 1000;
  std::vector<Node> chain;
  for (uint64_t k = 0; k < 100; ++k) {
    chain.push_back(comp(2 * k + 1, 1));
    std::vector<uint64_t> deps = {2 * k + 1};
    if (k) deps.push_back(2 * k);
    chain.push_back(
        node(2 * k + 2, "join" + std::to_string(k), ChakraProtoMsg::METADATA_NODE, deps));
  }
  const std::string joins = error_of([&] { read_chakra(job({chain, {comp(1, 1)}}), {}); });
  graph_limits() = saved;
  EXPECT_THAT(joins, HasSubstr("t.0.et: node 90 (join44): a joining point (no GPU time) standing "
                               "for 45 graph nodes, past the 1000"));
}

}  // namespace
}  // namespace fabricsim::workload
