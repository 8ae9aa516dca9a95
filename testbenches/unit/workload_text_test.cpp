// The text workload format (models/workload/workload_text.cpp): communicators' groups, blocking
// and async statements on the ideal network against their closed forms, all-to-allv's skewed
// sizes, the generated examples, and every malformed line named by file and line.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "models/common/error.h"
#include "models/workload/collective.h"
#include "models/workload/ideal_network.h"
#include "models/workload/workload_config.h"
#include "models/workload/workload_results.h"
#include "testbenches/unit/bounded_call.h"
#include "testbenches/unit/loaded_config.h"

namespace fabricsim {
void PrintTo(const Time& t, std::ostream* os) {
  *os << t.as_fs() << " fs";
}
}  // namespace fabricsim

namespace fabricsim::workload {
namespace {

const BitRate kB = BitRate::gbps(800);  // 10,000 fs a byte
const Time kAlpha = Time::ns(1000);

class TextWorkload : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/workload_text_test.XXXXXX";
    const int fd = mkstemp(name);
    ASSERT_GE(fd, 0);
    close(fd);
    path_ = name;
  }
  void TearDown() override { std::remove(path_.c_str()); }

  ExecGraph read(const std::string& text, int hosts = 64, int64_t max_channels = 64) {
    std::ofstream(path_) << text;
    WorkloadConfig cfg = test::loaded<WorkloadConfig>({"format=text", "file=x"});
    cfg.max_channels = max_channels;
    return WorkloadFormats::global().find("text")->read(path_, cfg, hosts);
  }
  std::string error(const std::string& text, int hosts = 64) {
    try {
      read(text, hosts);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }
  // The graph run on the ideal network; returns the last finish.
  static Time run(const ExecGraph& g) {
    IdealNetwork net(g.ranks(), kB, kAlpha);
    WorkloadEngine e(g, net);
    const Time t = net.run(e);
    EXPECT_TRUE(e.finished());
    return t;
  }
  std::string path_;
};

TEST_F(TextWorkload, CommunicatorsTileTheRanksInGroups) {
  const ExecGraph g = read(
      "ranks 8\ncommunicator tp size 4 stride 1\ncommunicator dp size 2 stride 4\n"
      "collective allreduce_ring tp 4KiB\ncollective allreduce_ring dp 4KiB\n");
  ASSERT_EQ(g.spans().size(), 2u + 4u);  // tp: {0-3}, {4-7}
  EXPECT_EQ(g.spans()[0].name, "allreduce_ring#0@tp0");
  EXPECT_EQ(g.spans()[0].ranks, 4);
  // dp groups: {0, 4}, {1, 5}, {2, 6}, {3, 7}: the first group's messages go between 0 and 4.
  const Span& dp0 = g.spans()[2];
  EXPECT_EQ(dp0.ranks, 2);
  for (uint32_t i = dp0.first; i < dp0.last; ++i) {
    const Node& x = g.node(i);
    EXPECT_TRUE((x.rank == 0 && x.peer == 4) || (x.rank == 4 && x.peer == 0)) << g.describe(i);
  }
}

// compute A, an async all-reduce of S over n ranks (T = 2(n-1)(alpha + S/(nB))), compute C, wait:
// the step ends at A + max(T, C) on every rank; blocking, at A + T + C.
TEST_F(TextWorkload, AsyncCollectivesOverlapTheComputeAfterThem) {
  const int n = 4;
  const uint64_t S = 1 << 20;
  const Time T = (kAlpha + Time::fs(static_cast<int64_t>(S / n) * 10000)) * (2 * (n - 1));
  for (const char* c : {"5us", "100us"}) {
    Time C;
    std::string err;
    ASSERT_TRUE(parse_time(c, C, err));
    const std::string head = "ranks 4\ncompute 10us\n";
    const Time async =
        run(read(head + "collective allreduce_ring world 1MiB async\ncompute " + c + "\nwait\n"));
    EXPECT_EQ(async, Time::us(10) + std::max(T, C)) << c;
    const Time blocking = run(read(head + "collective allreduce_ring world 1MiB\ncompute " + c));
    EXPECT_EQ(blocking, Time::us(10) + T + C) << c;
  }
}

TEST_F(TextWorkload, IterationsRepeatTheProgram) {
  const ExecGraph g =
      read("ranks 2\niterations 3\ncompute 1us\ncollective allgather_ring world 2KiB\n");
  EXPECT_EQ(g.iterations().size(), 3u);
  EXPECT_EQ(g.spans().size(), 3u);
  // Each iteration: 1 us of compute, then one step of 1 KiB each way.
  EXPECT_EQ(run(g), (Time::us(1) + kAlpha + Time::fs(1024 * 10000)) * 3);
}

TEST_F(TextWorkload, SendRecvPassesAlongTheGroup) {
  // Pipeline stages 0 -> 1 -> 2 -> 3 (one group of 4): three messages at once, one hop each.
  const ExecGraph g = read("ranks 4\ncommunicator pp size 4 stride 1\nsendrecv pp 1000B next\n");
  int sends = 0;
  for (const Node& x : g.nodes())
    if (x.kind == NodeKind::kSend) {
      EXPECT_EQ(x.peer, x.rank + 1);
      ++sends;
    }
  EXPECT_EQ(sends, 3);
  EXPECT_EQ(run(g), kAlpha + Time::fs(1000 * 10000));
}

TEST_F(TextWorkload, OnKeepsAStatementToOnePlaceOfItsGroups) {
  // Two pipelines of two stages ({0, 2}, {1, 3}): stage 0 computes and sends, stage 1 receives
  // and computes after. Each path: 10 us, one hop of 1000 B, 5 us.
  const ExecGraph g = read(
      "ranks 4\ncommunicator pp size 2 stride 2\non pp 0 compute 10us\n"
      "on pp 0 send pp 1000B next async\non pp 1 recv pp 1000B prev\non pp 1 compute 5us\n"
      "on pp 0 wait\n");
  int computes[4] = {}, sends = 0;
  for (const Node& x : g.nodes()) {
    if (x.kind == NodeKind::kCompute) ++computes[x.rank];
    if (x.kind == NodeKind::kSend) {
      EXPECT_EQ(x.peer, x.rank + 2);
      EXPECT_LT(x.rank, 2);
      ++sends;
    }
  }
  EXPECT_EQ(sends, 2);
  EXPECT_EQ(std::vector<int>(computes, computes + 4), (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(run(g), Time::us(10) + kAlpha + Time::fs(1000 * 10000) + Time::us(5));
  // The last stage has no next: its `send ... next` is nothing; a lone half is an error.
  EXPECT_EQ(read("ranks 2\ncommunicator pp size 2 stride 1\non pp 1 send pp 1KiB next\n").size(),
            0u);
  EXPECT_NE(error("ranks 2\ncommunicator pp size 2 stride 1\non pp 0 send pp 1KiB next\n")
                .find("a send no receive matches"),
            std::string::npos);
  EXPECT_NE(error("ranks 4\ncommunicator pp size 2 stride 2\n"
                  "on pp 0 collective allreduce_ring world 1KiB\n")
                .find(":3: group 0 of communicator world has ranks inside and outside `on pp 0`"),
            std::string::npos);
  EXPECT_NE(error("ranks 4\ncommunicator pp size 2 stride 2\non pp 0 ranks 4\n")
                .find(":3: `ranks` cannot follow `on`"),
            std::string::npos);
  EXPECT_NE(error("ranks 4\non tp 0 compute 1us\n").find("communicator 'tp' is not declared"),
            std::string::npos);
}

TEST_F(TextWorkload, TagsSplitTheExposedTimeAndTheCriticalPath) {
  // 10 us of compute, a blocking 1 MiB ring all-reduce (T) on `tp`, 10 us more; an async `dp`
  // all-gather runs beside the second compute (hidden) and its rest after it (exposed).
  const int n = 4;
  const uint64_t S = 1 << 20;
  const Time T = (kAlpha + Time::fs(static_cast<int64_t>(S / n) * 10000)) * (2 * (n - 1));
  const Time G = (kAlpha + Time::fs(static_cast<int64_t>(S / n) * 10000)) * (n - 1);
  const ExecGraph g = read(
      "ranks 4\ncommunicator tp size 4 stride 1 tag tp\ncommunicator dp size 4 stride 1 tag dp\n"
      "compute 10us\ncollective allreduce_ring tp 1MiB\ncollective allgather_ring dp 1MiB async\n"
      "compute 1us\nwait\n");
  ASSERT_EQ(g.classes(), (std::vector<std::string>{"", "tp", "dp"}));
  IdealNetwork net(g.ranks(), kB, kAlpha);
  WorkloadEngine e(g, net);
  const Time end = net.run(e);
  ASSERT_EQ(end, Time::us(10) + T + std::max(G, Time::us(1)));
  const ClassResult c = class_result(g, e);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(c.exposed[1][r], T) << r;
    EXPECT_EQ(c.exposed[2][r], G - Time::us(1)) << r;
    EXPECT_EQ(c.exposed[0][r], Time()) << r;
    EXPECT_EQ(c.sent[1][r], 2 * (n - 1) * S / n);
    EXPECT_EQ(c.sent[2][r], (n - 1) * S / n);
  }
  // The path: the first compute, the all-reduce, then the all-gather (longer than 1 us).
  EXPECT_EQ(c.path_length, end);
  EXPECT_EQ(c.path_compute, Time::us(10));
  EXPECT_EQ(c.path_comm[1], T);
  EXPECT_EQ(c.path_comm[2], G);
  EXPECT_EQ(c.path_gap, Time());
  // An untagged workload has one class: results leave by_tag out.
  EXPECT_EQ(read("ranks 2\ncompute 1us\n").classes().size(), 1u);
}

TEST_F(TextWorkload, AllToAllVSkewsEachRanksBytes) {
  for (const char* skew : {"0", "1.5"}) {
    const ExecGraph g = read(std::string("ranks 4\nalltoallv world 3000B skew ") + skew + "\n");
    std::vector<uint64_t> row(4, 0), largest(4, 0);
    for (const Node& x : g.nodes())
      if (x.kind == NodeKind::kSend) {
        row[x.rank] += x.bytes;
        largest[x.rank] = std::max(largest[x.rank], x.bytes);
      }
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(row[r], 3000u);  // every byte of the rank's buffer goes out
      if (std::string(skew) == "0")
        EXPECT_EQ(largest[r], 1000u);  // evenly over the 3 others
      else
        EXPECT_GT(largest[r], 1500u);  // the hot expert: 1 / (1 + 2^-1.5 + 3^-1.5) > 1/2
    }
  }
}

TEST_F(TextWorkload, TheShippedExamplesRead) {
  WorkloadConfig cfg = test::loaded<WorkloadConfig>({"format=text", "file=x"});
  for (const char* f : {"dp_8", "tp_8", "moe_8"}) {
    const std::string p = std::string(FABRICSIM_SOURCE_DIR) + "/traces/workloads/" + f + ".txt";
    const ExecGraph g = WorkloadFormats::global().find("text")->read(p, cfg, 8);
    EXPECT_EQ(g.ranks(), 8) << f;
    EXPECT_GE(g.spans().size(), 2u) << f;
    run(g);
  }
}

TEST_F(TextWorkload, MalformedLinesAreNamed) {
  const std::string p = "ranks 4\n";
  auto has = [&](const std::string& text, const std::string& what, int hosts = 64) {
    const std::string e = error(text, hosts);
    EXPECT_NE(e.find(what), std::string::npos) << "got: " << e;
    EXPECT_NE(e.find(path_ + ":"), std::string::npos) << "got: " << e;
  };
  has("compute 1us\n", ":1: the first statement must be `ranks N`");
  has("ranks 9\n", ":1: 9 ranks on 8 hosts", 8);
  has(p + "bogus 1\n", ":2: unknown statement 'bogus'");
  has(p + "collective allreduce_ring tp 1MiB\n", ":2: communicator 'tp' is not declared");
  has(p + "communicator tp size 3 stride 1\n", ":2: groups of 3 ranks 1 apart do not tile 4");
  has(p + "collective allreduce_bogus world 1MiB\n", ":2: unknown collective 'allreduce_bogus'");
  has(p + "collective allreduce_ring world 12XB\n", ":2: '12XB' is not a size in bytes");
  has(p + "compute fast\n", ":2: 'fast' is not a time");
  has(p + "collective allreduce_ring world 1MiB channels 2 lots\n", ":2: unexpected 'lots'");
  has(p + "collective allreduce_halving_doubling world 1MiB\ncommunicator x size 2 stride 1\n"
          "collective allreduce_ring world 2B\n",
      ":4: collective allreduce_ring#1");
  has(p + "collective allreduce_ring world 1MiB name a,b\n", ":2: name 'a,b': letters");
  has(p + "alltoallv world 1MiB skew -1\n", ":2: skew '-1' is not a number in [0, 10]");
  has("", "no `ranks` line");
  const std::string e = [&] {
    try {
      read(p + "collective allreduce_ring world 1MiB channels 2\n", 64, 1);
    } catch (const InputError& x) {
      return std::string(x.what());
    }
    return std::string();
  }();
  EXPECT_NE(e.find(":2: 2 channels need as many QPs between two ranks: nic.qps_per_pair is 1"),
            std::string::npos)
      << e;
}

// Issue #38: every field within its limit (docs/trace-format.md, "Limits of the input files"),
// nothing after the fields a statement takes, and a refused field shown clipped.
TEST_F(TextWorkload, FieldsOutsideTheirLimitsAreRefusedAndShownClipped) {
  const std::string p = "ranks 4\n";
  auto has = [&](const std::string& text, const std::string& what) {
    const std::string e = error(text);
    EXPECT_NE(e.find(path_ + what), std::string::npos) << "got: " << e;
  };
  has("ranks 4 8\n", ":1: unexpected '8' after `ranks N`");
  has(p + "iterations 2 x\n", ":2: unexpected 'x' after `iterations N`");
  has(p + "communicator tp size 2 stride 1 stride 2\n",
      ":2: unexpected 'stride' after `communicator NAME size K stride S`");
  // Sizes: a message (sendrecv, chunk) at most 2 GiB, as a message file's; a call its
  // algorithm cuts (collective, alltoallv) at most 64 GiB, as workload.bytes (each limit taken).
  EXPECT_EQ(read(p + "sendrecv world 2GiB next\n").node(0).bytes, uint64_t{1} << 31);
  const std::string over = "is larger than the largest size, 2147483648 B (2 GiB";
  const std::string call = "is larger than the largest size, 68719476736 B (64 GiB, a call's";
  EXPECT_EQ(read("ranks 64\ncollective allreduce_ring world 64GiB\n").spans()[0].bytes,
            uint64_t{64} << 30);
  has(p + "collective allreduce_ring world 65537MiB\n", ":2: 65537MiB " + call);
  has(p + "alltoallv world 1TiB\n", ":2: 1TiB " + call);
  has(p + "sendrecv world 2049MiB next\n", ":2: 2049MiB " + over);
  has(p + "sendrecv world 18446744073709551615B next\n", ":2: 18446744073709551615B " + over);
  has(p + "collective allreduce_ring world 1MiB chunk 4GiB\n", ":2: 4GiB " + over);
  has(p + "compute 1001s\n", ":2: compute 1001s is longer than 1000s");
  has(p + "communicator " + std::string(65, 'c') + " size 2 stride 1\n",
      ":2: communicator 'cccccccccccccccccccccccccccccccccccccccc... (65 characters)' is longer "
      "than 64 characters");
  has(p + "collective allreduce_ring world 1MiB name " + std::string(65, 'n') + "\n",
      ":2: name 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn... (65 characters)' is longer");
  // A field of 10 MB: the message shows its head, once, not the whole field (twice).
  const std::string big(10 << 20, '7');
  for (const std::string& line :
       {"collective allreduce_ring world " + big + "XB\n", "compute " + big + "zs\n",
        "communicator " + big + "\n", "sendrecv world 1MiB next " + big + "\n",
        // (the parsers quote a unit apart too: a 10 MB unit)
        "compute 1" + std::string(10 << 20, 'z') + "\n",
        "collective allreduce_ring world 1" + std::string(10 << 20, 'B') + "\n"}) {
    const std::string e = error(p + line);
    EXPECT_NE(e.find(path_ + ":2: "), std::string::npos) << e.substr(0, 300);
    EXPECT_LT(e.size(), path_.size() + 300) << e.substr(0, 300);
  }
}

// A FIFO blocked the open for ever, /dev/zero was read until memory ran out, a directory read
// as an empty file; a huge file is refused before it is read.
TEST_F(TextWorkload, OnlyARegularFileOfBoundedSizeIsRead) {
  namespace fs = std::filesystem;
  auto read_error = [&](const std::string& path) {
    return test::within(10, [&] {
      try {
        WorkloadConfig cfg = test::loaded<WorkloadConfig>({"format=text", "file=x"});
        WorkloadFormats::global().find("text")->read(path, cfg, 64);
      } catch (const InputError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    });
  };
  const std::string fifo = path_ + ".fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(read_error(fifo), "workload.file: " + fifo +
                                  ": not a regular file (a pipe, socket or device); a text "
                                  "workload is a file");
  std::remove(fifo.c_str());
  EXPECT_EQ(read_error("/dev/zero"),
            "workload.file: /dev/zero: not a regular file (a pipe, socket or device); a text "
            "workload is a file");
  const std::string dir = path_ + ".d";
  fs::create_directory(dir);
  EXPECT_EQ(read_error(dir), "workload.file: " + dir +
                                 ": not a regular file (a directory); a text workload is a file");
  fs::remove(dir);
  EXPECT_EQ(read_error(path_ + ".none"), "workload.file: cannot open " + path_ + ".none");
  // 16 MiB is the most (a sparse file: its size is what is refused, before a byte is read).
  std::ofstream(path_) << "ranks 4\n";
  fs::resize_file(path_, (16 << 20) + 1);
  EXPECT_EQ(read_error(path_), "workload.file: " + path_ +
                                   ": 16777217 B, larger than a text workload may be (16777216 "
                                   "B, 16 MiB)");
}

// The config's communicators (workload.group_size, group_stride): the collective in every group
// at once, a call each, with the same groups as the text format's communicators. On the ideal
// network the groups share no rank, so each call takes the ring's closed form for its size.
TEST(WorkloadGroups, EveryGroupRunsItsOwnCallAtOnce) {
  for (const auto& [size, stride] : {std::pair{4, 1}, std::pair{4, 4}, std::pair{2, 8}}) {
    WorkloadConfig cfg = test::loaded<WorkloadConfig>(
        {"collective=allreduce_ring", "bytes=1MiB", "iterations=2",
         "group_size=" + std::to_string(size), "group_stride=" + std::to_string(stride)});
    const ExecGraph g = build_workload(cfg, 16);
    ASSERT_EQ(g.spans().size(), 2u * 16 / size);
    const auto groups = communicator_groups(16, size, stride);
    for (size_t i = 0; i < g.spans().size(); ++i) {
      const Span& sp = g.spans()[i];
      EXPECT_EQ(sp.ranks, size);
      EXPECT_EQ(sp.name, "allreduce_ring#" + std::to_string(i / groups.size()) + "@g" +
                             std::to_string(i % groups.size()));
      // Its messages go between the group's ranks only, to the next one in the ring.
      const std::vector<int>& grp = groups[i % groups.size()];
      for (uint32_t x = sp.first; x < sp.last; ++x) {
        const Node& nd = g.nodes()[x];
        if (nd.kind != NodeKind::kSend) continue;
        const auto at = std::find(grp.begin(), grp.end(), nd.rank);
        ASSERT_NE(at, grp.end()) << sp.name;
        EXPECT_EQ(nd.peer, grp[(at - grp.begin() + 1) % size]) << sp.name;
      }
    }
    IdealNetwork net(16, kB, kAlpha);
    WorkloadEngine e(g, net);
    net.run(e);
    ASSERT_TRUE(e.finished());
    const uint64_t S = 1 << 20;
    const Time one = kAlpha * (2 * (size - 1)) +
                     Time::fs(static_cast<int64_t>(S / size) * 10000) * (2 * (size - 1));
    for (const CollectiveResult& r : collective_results(g, e)) EXPECT_EQ(r.time(), one) << r.name;
  }
  // Groups that do not tile the ranks are refused naming the key.
  WorkloadConfig bad = test::loaded<WorkloadConfig>({"group_size=4", "group_stride=3"});
  try {
    build_workload(bad, 16);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& x) {
    EXPECT_NE(
        std::string(x.what()).find(
            "workload.group_size, workload.group_stride: groups of 4 ranks 3 apart do not tile 16"),
        std::string::npos)
        << x.what();
  }
}

// `iterations 1000000` or `chunk 1B` on a 64 MiB all-reduce filled 6 GB in seconds: the nodes
// are counted before they are built, and refused naming the line (in a child capped at 2 GiB and
// a few seconds, so that a regression fails here rather than exhausting the machine).
TEST_F(TextWorkload, GraphsPastTheLimitAreRefusedBeforeTheyAreBuilt) {
  const std::string p = "ranks 8\n";
  auto bounded_error = [&](const std::string& text) {
    std::ofstream(path_) << text;
    return test::within(20, [&] {
      try {
        WorkloadConfig cfg = test::loaded<WorkloadConfig>({"format=text", "file=x"});
        WorkloadFormats::global().find("text")->read(path_, cfg, 64);
      } catch (const InputError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    });
  };
  const std::string chunk = bounded_error(p + "collective allreduce_ring world 64MiB chunk 1B\n");
  EXPECT_NE(chunk.find(path_ + ":2: collective allreduce_ring#0 (allreduce_ring): 14 steps x 8 "
                               "ranks x 1 channels x 8388608 slices needs 1879048192 nodes"),
            std::string::npos)
      << chunk;
  const std::string iterations =
      bounded_error(p + "iterations 1000000\ncollective allreduce_ring world 64MiB chunk 1MiB\n");
  EXPECT_NE(iterations.find(path_ + ":2: iterations 1000000: 999999 more of 1792 nodes needs "),
            std::string::npos)
      << iterations;
  EXPECT_NE(iterations.find("more than a workload's graph may hold (67108864 nodes"),
            std::string::npos)
      << iterations;
  const std::string a2av = bounded_error("ranks 64\nalltoallv world 2GiB channels 64\n");
  EXPECT_EQ(a2av, "no error");  // 64 x 63 x 64 x 2 = 516,096 nodes: within the limit
}

// A cycle cannot be written in the text format (every call is the same program on every rank),
// so every workload it reads runs to its end; messages are at most 2 GiB whatever the call.
TEST_F(TextWorkload, MessagesOfACallAreAtMostTwoGiB) {
  // 2 GiB on 2 ranks' reduce-scatter: blocks of 1 GiB; a 2 GiB sendrecv; both run.
  run(read("ranks 2\ncollective reducescatter_ring world 2GiB\nsendrecv world 2GiB next\n"));
}

}  // namespace
}  // namespace fabricsim::workload
