// The text workload format (workload.format: text; docs/trace-format.md, "Text workloads"): a
// program every rank runs in order, in the spirit of ASTRA-sim's and SimAI's text workloads but
// with named communicators, so that data-, tensor-, pipeline- and expert-parallel jobs can be
// written by hand or generated (scripts/make_workload.py):
//
//   ranks 16                                  # the job (at most the hosts; rank r on host r)
//   communicator tp size 4 stride 1           # groups of 4 consecutive ranks
//   communicator dp size 4 stride 4           # groups of 4 ranks, 4 apart
//   iterations 2                              # the statements below, this many times
//   compute 120us                             # every rank's GPU, this long
//   collective allreduce_ring tp 8MiB         # in every tp group; the rank waits for its part
//   collective allreduce_ring dp 64MiB async  # ... or goes on at once (overlaps what follows)
//   sendrecv pp 4MiB next                     # in every pp group: rank j sends to j + 1
//   alltoallv ep 16MiB skew 1.2               # uneven all-to-all (MoE): see below
//   wait                                      # until every async collective has finished
//   on pp 1 recv pp 4MiB prev                 # pipeline stage 1 only: from stage 0 (1F1B)
//
// `on COMM J` before a statement keeps it to the ranks at place J of their COMM group (a pipeline
// stage's own program: scripts/make_training.py writes 1F1B schedules so); `send`/`recv` are the
// two halves of a point-to-point message, each where its rank's program has it. A communicator's
// `tag LABEL` (tp, dp, pp, ep, ...) names the parallelism its traffic serves: summary.json then
// splits the ranks' exposed communication and the critical path by it.
//
// Options after a collective: async, channels N, chunk BYTES, name LABEL. `alltoallv` sends each
// rank's BYTES split over the group by Zipf weights 1/k^skew over a per-call pseudo-random order
// of the other ranks (deterministic; skew 0: even), as MoE token routing skews it. Every
// statement is checked as it is read: the error names the file, the line and the problem.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include <fmt/format.h>

#include "models/common/error.h"
#include "models/common/rng.h"
#include "models/common/stop_signal.h"
#include "models/traffic/text_fields.h"
#include "models/workload/collective.h"
#include "models/workload/workload_config.h"

namespace fabricsim::workload {

namespace {

// The largest text workload file: a program of statements, which iterations repeat, is KBs
// (scripts/make_workload.py writes a few lines a layer); this bounds what reading it holds (a
// statement per line) before a graph is built. docs/trace-format.md, "Limits of the input files".
constexpr uint64_t kMaxFileBytes = uint64_t{16} << 20;
// The longest compute statement: workload.compute's and a Chakra COMP_NODE's limit (1000 s).
const Time kMaxCompute = Time::us(1000000000);
// The longest communicator name and call label: each call's name holds them (collectives.csv),
// and error messages name the call.
constexpr size_t kMaxNameChars = 64;

using traffic::shown_in;  // a units parser's error, the field it quotes clipped

const std::string kAllToAllV = "alltoallv_direct";

struct Communicator {
  int size = 0, stride = 0;
  std::string tag;  // the parallelism it serves (`tag LABEL`), "" if not given
  // Rank r's place in its group.
  int place(int r) const { return (r % (size * stride)) / stride; }
  // Its groups, each in group order (the ring order of its collectives).
  std::vector<std::vector<int>> groups(int ranks) const {
    return communicator_groups(ranks, size, stride);
  }
};

// Point-to-point halves (`send`, `recv`) match among themselves, never a collective's messages
// between the same two ranks: their own tag.
constexpr uint32_t kPointToPointTag = 1;

// One statement of the program, kept small (72 B): a 16 MiB file holds millions. Its
// names point into tables that outlive it (the registry's names, the communicators' keys, the
// reader's labels).
struct Statement {
  static constexpr uint32_t kNoLabel = UINT32_MAX;
  enum Kind { kCompute, kCollective, kSendRecv, kAllToAllV, kWait, kSend, kRecv } kind;
  int line = 0;
  Time duration;
  const std::string* algorithm = nullptr;
  const std::string* comm = nullptr;
  uint32_t label = kNoLabel;  // an index into the reader's labels
  int channels = 1;
  uint64_t bytes = 0;
  uint64_t chunk = 0;
  double skew = 0;
  bool async = false, next = true;
  int16_t on = -1;  // `on COMM J`: an index into the reader's on_ (-1: every rank)
  int32_t on_place = 0;
};
static_assert(sizeof(Statement) <= 72, "a statement's size bounds what a text workload holds");

class Reader {
 public:
  Reader(const std::string& path, const WorkloadConfig& cfg, int hosts)
      : path_(path), cfg_(cfg), hosts_(hosts) {}

  ExecGraph read() {
    // Only a regular file, and not a huge one: a FIFO would block the open for ever, /dev/zero
    // would be read until memory runs out, and a directory opens but reads as nothing.
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path_, ec);
    if (fs::exists(st) && !fs::is_regular_file(st))
      throw InputError(
          fmt::format("workload.file: {}: not a regular file ({}); a text workload is a file",
                      path_, fs::is_directory(st) ? "a directory" : "a pipe, socket or device"));
    const uintmax_t size = fs::exists(st) ? fs::file_size(path_, ec) : 0;
    if (!ec && size > kMaxFileBytes) too_large(size);
    std::ifstream in(path_);
    if (!in) throw InputError(fmt::format("workload.file: cannot open {}", path_));
    std::string text;
    int line = 0;
    uint64_t bytes_read = 0;
    while (std::getline(in, text)) {
      if ((++line & 0xffff) == 0) check_stop("reading the text workload");
      if ((bytes_read += text.size() + 1) > kMaxFileBytes + 1) too_large(bytes_read);  // it grew
      if (const auto hash = text.find('#'); hash != std::string::npos) text.resize(hash);
      std::istringstream ss(text);
      std::vector<std::string> f;
      for (std::string w; ss >> w;) f.push_back(w);
      if (!f.empty()) statement(f, line);
    }
    if (ranks_ == 0) fail(line, "no `ranks` line: the job's size is not stated");
    return build();
  }

 private:
  [[noreturn]] void fail(int line, const std::string& why) const {
    throw InputError(fmt::format("{}:{}: {}", path_, line, why));
  }
  [[noreturn]] void too_large(uint64_t size) const {
    throw InputError(
        fmt::format("workload.file: {}: {} B, larger than a text workload may be ({} B, 16 MiB)",
                    path_, size, kMaxFileBytes));
  }
  // A size: at least a byte, at most `max`: kMaxWorkloadBytes for a message (sendrecv, chunk),
  // kMaxCallBytes for a call its algorithm cuts (collective, alltoallv).
  uint64_t bytes(const std::string& s, int line, uint64_t max = kMaxWorkloadBytes) const {
    Bytes b;
    std::string err;
    if (!parse_bytes(s, b, err) || b.count() == 0)
      fail(line, fmt::format("'{}' is not a size in bytes (e.g. 8MiB): {}", traffic::shown(s),
                             err.empty() ? "zero" : shown_in(err, s)));
    if (b.count() > max)
      fail(line,
           fmt::format("{} is larger than the largest size, {} B ({})", traffic::shown(s), max,
                       max == kMaxWorkloadBytes ? "2 GiB, IBA's largest message"
                                                : "64 GiB, a call's largest"));
    return b.count();
  }
  // A communicator's name or a call's label.
  const std::string& name(const std::string& s, const char* what, int line) const {
    if (s.size() > kMaxNameChars)
      fail(line, fmt::format("{} '{}' is longer than {} characters", what, traffic::shown(s),
                             kMaxNameChars));
    return s;
  }
  // A statement of `n` fields and no more (`ranks N`, `iterations N`, ...).
  void no_more(const std::vector<std::string>& f, size_t n, const char* usage, int line) const {
    if (f.size() > n)
      fail(line, fmt::format("unexpected '{}' after `{}`", traffic::shown(f[n]), usage));
  }
  int64_t integer(const std::string& s, int line, int64_t lo, int64_t hi) const {
    int64_t v = 0;
    if (!traffic::parse_int(s, v) || v < lo || v > hi)
      fail(line, fmt::format("'{}' is not a whole number in [{}, {}]", traffic::shown(s), lo, hi));
    return v;
  }
  const Communicator& comm(const std::string& name, int line) const {
    const auto it = comms_.find(name);
    if (it == comms_.end())
      fail(line, fmt::format("communicator '{}' is not declared (a `communicator` line; `world` is "
                             "every rank)",
                             traffic::shown(name)));
    return it->second;
  }

  // A declared communicator's name as the table holds it (statements point at it).
  const std::string& comm_name(const std::string& name, int line) const {
    comm(name, line);  // refuses an undeclared one
    return comms_.find(name)->first;
  }

  // `on COMM J STATEMENT`: the statement for the ranks at place J of their COMM group only.
  void on_statement(const std::vector<std::string>& f, int line) {
    if (!ranks_) fail(line, "the first statement must be `ranks N`");
    if (f.size() < 4) fail(line, "`on`: expected on COMMUNICATOR PLACE STATEMENT");
    const std::string* c = &comm_name(f[1], line);
    const auto place = static_cast<int32_t>(integer(f[2], line, 0, comms_.at(*c).size - 1));
    const std::string& w = f[3];
    if (w == "ranks" || w == "communicator" || w == "iterations" || w == "on" || w == "sendrecv")
      fail(line, fmt::format("`{}` cannot follow `on` (compute, collective, alltoallv, send, "
                             "recv and wait can)",
                             traffic::shown(w)));
    auto it = std::find(on_.begin(), on_.end(), c);
    if (it == on_.end()) it = on_.insert(on_.end(), c);
    statement(std::vector<std::string>(f.begin() + 3, f.end()), line);
    body_.back().on = static_cast<int16_t>(it - on_.begin());
    body_.back().on_place = place;
  }

  void statement(const std::vector<std::string>& f, int line) {
    if (f[0] == "on") return on_statement(f, line);
    const std::string& w = f[0];
    auto need = [&](size_t n, const char* usage) {
      if (f.size() < n) fail(line, fmt::format("`{}`: expected {}", w, usage));
    };
    if (w == "ranks") {
      need(2, "ranks N");
      no_more(f, 2, "ranks N", line);
      if (ranks_) fail(line, "`ranks` given twice");
      if (!body_.empty()) fail(line, "`ranks` must come before the program");
      ranks_ = static_cast<int>(integer(f[1], line, 2, 1 << 20));
      if (ranks_ > hosts_)
        fail(line, fmt::format("{} ranks on {} hosts (a rank per host)", ranks_, hosts_));
      comms_["world"] = Communicator{ranks_, 1, ""};
      return;
    }
    if (!ranks_) fail(line, "the first statement must be `ranks N`");
    if (w == "communicator") {
      const char* usage = "communicator NAME size K stride S [tag LABEL]";
      need(6, usage);
      if (f[2] != "size" || f[4] != "stride") fail(line, fmt::format("expected {}", usage));
      if (f.size() > 6 && f[6] != "tag") no_more(f, 6, "communicator NAME size K stride S", line);
      if (f.size() == 7) fail(line, "`tag` needs a value");
      no_more(f, 8, usage, line);
      name(f[1], "communicator", line);
      if (comms_.count(f[1]))
        fail(line, fmt::format("communicator '{}' declared twice", traffic::shown(f[1])));
      Communicator c;
      c.size = static_cast<int>(integer(f[3], line, 2, ranks_));
      c.stride = static_cast<int>(integer(f[5], line, 1, ranks_));
      if (f.size() == 8) c.tag = label(f[7], "tag", line);
      try {
        c.groups(ranks_);  // refuses groups that do not tile the ranks
      } catch (const std::invalid_argument& e) {
        fail(line, e.what());
      }
      comms_[f[1]] = c;
      return;
    }
    if (w == "iterations") {
      need(2, "iterations N");
      no_more(f, 2, "iterations N", line);
      if (!body_.empty()) fail(line, "`iterations` must come before the program");
      iterations_ = static_cast<int>(integer(f[1], line, 1, 1000000));
      iterations_line_ = line;
      return;
    }
    Statement s;
    s.line = line;
    size_t opt = 0;
    if (w == "compute") {
      need(2, "compute TIME");
      s.kind = Statement::kCompute;
      std::string err;
      if (!parse_time(f[1], s.duration, err))
        fail(line, fmt::format("'{}' is not a time (e.g. 120us): {}", traffic::shown(f[1]),
                               shown_in(err, f[1])));
      if (s.duration > kMaxCompute)
        fail(line, fmt::format("compute {} is longer than {} (workload.compute's and a Chakra "
                               "node's limit)",
                               traffic::shown(f[1]), kMaxCompute.str()));
      opt = 2;
    } else if (w == "collective") {
      need(4, "collective ALGORITHM COMMUNICATOR BYTES [options]");
      s.kind = Statement::kCollective;
      if (!CollectiveRegistry::global().find(f[1]) || f[1] == "alltoallv_direct")
        fail(line,
             fmt::format("unknown collective '{}' (valid: {}; alltoallv: its own statement)",
                         traffic::shown(f[1]), join_names(CollectiveRegistry::global().names())));
      const auto& names = CollectiveRegistry::global().names();
      s.algorithm = &*std::find(names.begin(), names.end(), f[1]);
      s.comm = &comm_name(f[2], line);
      s.bytes = bytes(f[3], line, kMaxCallBytes);
      opt = 4;
    } else if (w == "alltoallv") {
      need(3, "alltoallv COMMUNICATOR BYTES [skew S] [options]");
      s.kind = Statement::kAllToAllV;
      s.algorithm = &kAllToAllV;
      s.comm = &comm_name(f[1], line);
      s.bytes = bytes(f[2], line, kMaxCallBytes);
      opt = 3;
    } else if (w == "sendrecv") {
      need(4, "sendrecv COMMUNICATOR BYTES next|prev");
      s.kind = Statement::kSendRecv;
      s.comm = &comm_name(f[1], line);
      s.bytes = bytes(f[2], line);
      if (f[3] != "next" && f[3] != "prev") fail(line, "sendrecv: expected next or prev");
      s.next = f[3] == "next";
      opt = 4;
    } else if (w == "send" || w == "recv") {
      need(4, "send|recv COMMUNICATOR BYTES next|prev");
      s.kind = w == "send" ? Statement::kSend : Statement::kRecv;
      s.comm = &comm_name(f[1], line);
      s.bytes = bytes(f[2], line);
      if (f[3] != "next" && f[3] != "prev") fail(line, fmt::format("{}: expected next or prev", w));
      s.next = f[3] == "next";
      opt = 4;
    } else if (w == "wait") {
      s.kind = Statement::kWait;
      opt = 1;
    } else {
      fail(line, fmt::format("unknown statement '{}' (ranks, communicator, iterations, compute, "
                             "collective, alltoallv, sendrecv, send, recv, wait, on)",
                             traffic::shown(w)));
    }
    for (size_t i = opt; i < f.size(); ++i) {
      const std::string& o = f[i];
      const bool comm_op = s.kind == Statement::kCollective || s.kind == Statement::kAllToAllV ||
                           s.kind == Statement::kSendRecv || s.kind == Statement::kSend ||
                           s.kind == Statement::kRecv;
      auto value = [&]() -> const std::string& {
        if (i + 1 >= f.size()) fail(line, fmt::format("`{}` needs a value", o));
        return f[++i];
      };
      if (comm_op && o == "async") {
        s.async = true;
      } else if (comm_op && o == "channels") {
        s.channels = static_cast<int>(integer(value(), line, 1, 64));
        if (s.channels > cfg_.max_channels)
          fail(line, fmt::format("{} channels need as many QPs between two ranks: "
                                 "nic.qps_per_pair is {}",
                                 s.channels, cfg_.max_channels));
      } else if (comm_op && o == "chunk") {
        s.chunk = bytes(value(), line);
      } else if (comm_op && o == "name") {
        s.label = static_cast<uint32_t>(labels_.size());
        labels_.push_back(label(value(), "name", line));
      } else if (s.kind == Statement::kAllToAllV && o == "skew") {
        const std::string& v = value();
        char* end = nullptr;
        s.skew = std::strtod(v.c_str(), &end);
        if (end != v.c_str() + v.size() || !(s.skew >= 0 && s.skew <= 10))
          fail(line, fmt::format("skew '{}' is not a number in [0, 10]", traffic::shown(v)));
      } else {
        fail(line, fmt::format("unexpected '{}' after `{}`", traffic::shown(o), w));
      }
    }
    body_.push_back(s);
  }

  // A call's label or a communicator's tag: a name of letters, digits, _ - and . only.
  const std::string& label(const std::string& v, const char* what, int line) const {
    const std::string& l = name(v, what, line);
    for (const char ch : l)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-' && ch != '.')
        fail(line,
             fmt::format("{} '{}': letters, digits, _ - and . only", what, traffic::shown(l)));
    return l;
  }

  // Whether rank r runs statement s (`on`).
  bool runs(const Statement& s, int r) const {
    return s.on < 0 || comms_.at(*on_[static_cast<size_t>(s.on)]).place(r) == s.on_place;
  }

  // Each rank's share of BYTES to every other member of its group, Zipf-weighted.
  std::vector<uint64_t> skewed(const Statement& s, size_t n, uint64_t seed) const {
    std::vector<uint64_t> sizes(n * n, 0);
    Rng rng(seed);
    for (size_t i = 0; i < n; ++i) {
      std::vector<size_t> order;
      for (size_t j = 0; j < n; ++j)
        if (j != i) order.push_back(j);
      for (size_t k = order.size(); k > 1; --k) std::swap(order[k - 1], order[rng.below(k)]);
      std::vector<double> w(order.size());
      double sum = 0;
      for (size_t k = 0; k < order.size(); ++k) sum += w[k] = 1.0 / std::pow(k + 1.0, s.skew);
      uint64_t given = 0;
      for (size_t k = 0; k < order.size(); ++k) {
        const uint64_t b = k + 1 == order.size()
                               ? s.bytes - given
                               : static_cast<uint64_t>(static_cast<double>(s.bytes) * w[k] / sum);
        sizes[i * n + order[k]] = b;
        given += b;
      }
    }
    return sizes;
  }

  // One statement of the program, for every rank: `after` holds each rank's nodes its next
  // statement waits for, `pending` its async communication not yet waited for.
  void add_statement(ExecGraph& g, const Statement& s, RankNodes& after, RankNodes& pending,
                     uint64_t& call) const {
    auto finish = [&](int r, const std::vector<uint32_t>& done) {
      if (s.async)
        pending[r].insert(pending[r].end(), done.begin(), done.end());
      else
        after[r] = done;
    };
    g.set_class(s.comm ? comms_.at(*s.comm).tag : std::string());
    switch (s.kind) {
      case Statement::kCompute:
        for (int r = 0; r < ranks_; ++r)
          if (runs(s, r)) after[r] = {g.add_compute(r, s.duration, after[r])};
        return;
      case Statement::kWait:
        for (int r = 0; r < ranks_; ++r) {
          if (!runs(s, r)) continue;
          after[r].insert(after[r].end(), pending[r].begin(), pending[r].end());
          pending[r].clear();
        }
        return;
      case Statement::kSendRecv: {
        RankNodes done(static_cast<size_t>(ranks_));
        for (const auto& grp : comms_.at(*s.comm).groups(ranks_))
          for (size_t j = 0; j + 1 < grp.size(); ++j) {
            const int a = s.next ? grp[j] : grp[j + 1], b = s.next ? grp[j + 1] : grp[j];
            for (int x = 0; x < s.channels; ++x) {
              const uint64_t part = piece(s.bytes, s.channels, x);
              done[a].push_back(g.add_send(a, b, part, x, after[a]));
              done[b].push_back(g.add_recv(b, a, part, x, after[b]));
            }
          }
        for (int r = 0; r < ranks_; ++r)
          if (!done[r].empty()) finish(r, done[r]);
        return;
      }
      case Statement::kSend:
      case Statement::kRecv: {
        const Communicator& c = comms_.at(*s.comm);
        for (int r = 0; r < ranks_; ++r) {
          const int j = c.place(r) + (s.next ? 1 : -1);
          if (!runs(s, r) || j < 0 || j >= c.size) continue;  // no such neighbour: nothing
          const int peer = r + (j - c.place(r)) * c.stride;
          std::vector<uint32_t> done;
          for (int x = 0; x < s.channels; ++x) {
            const uint64_t part = piece(s.bytes, s.channels, x);
            done.push_back(s.kind == Statement::kSend
                               ? g.add_send(r, peer, part, x, after[r], kPointToPointTag)
                               : g.add_recv(r, peer, part, x, after[r], kPointToPointTag));
          }
          finish(r, done);
        }
        return;
      }
      case Statement::kCollective:
      case Statement::kAllToAllV: {
        const auto groups = comms_.at(*s.comm).groups(ranks_);
        for (size_t gi = 0; gi < groups.size(); ++gi) {
          // Under `on`, a group runs the call when all its ranks do (none: it has no part).
          const auto in = std::count_if(groups[gi].begin(), groups[gi].end(),
                                        [&](int r) { return runs(s, r); });
          if (in == 0) continue;
          if (static_cast<size_t>(in) != groups[gi].size())
            throw std::invalid_argument(
                fmt::format("group {} of communicator {} has ranks inside and outside `on {} {}`",
                            gi, *s.comm, *on_[static_cast<size_t>(s.on)], s.on_place));
          CollectiveCall c;
          c.ranks = groups[gi];
          c.bytes = s.bytes;
          c.channels = s.channels;
          c.chunk_bytes = s.chunk;
          if (!cfg_.rank_domain.empty()) c.domain = &cfg_.rank_domain;
          c.scale_up_reduce = cfg_.scale_up_reduce;
          c.name = fmt::format(
              "{}#{}", s.label == Statement::kNoLabel ? *s.algorithm : labels_[s.label], call);
          if (groups.size() > 1) c.name += fmt::format("@{}{}", *s.comm, gi);
          const auto n = static_cast<uint64_t>(c.ranks.size());
          if (s.kind == Statement::kAllToAllV) {
            // Its n x n sizes are as many as its messages: counted before they are drawn.
            g.require(count_product({2, n, n - 1, static_cast<uint64_t>(s.channels)}),
                      fmt::format("alltoallv of {} ranks", n));
            c.sizes = skewed(s, c.ranks.size(), call * 1000003 + gi + 1);
          }
          RankNodes start;
          for (int r : c.ranks) start.push_back(after[r]);
          const RankNodes done = add_collective(g, *s.algorithm, c, start);
          for (size_t k = 0; k < c.ranks.size(); ++k) finish(c.ranks[k], done[k]);
        }
        ++call;
        return;
      }
    }
  }

  ExecGraph build() {
    ExecGraph g(ranks_);
    RankNodes after(static_cast<size_t>(ranks_)), pending(static_cast<size_t>(ranks_));
    uint64_t call = 0;
    for (int it = 0; it < iterations_; ++it) {
      // Every iteration adds what the first did: the rest counted before they are built.
      if (it == 1) try {
          g.require(count_product({g.size(), static_cast<uint64_t>(iterations_ - 1)}),
                    fmt::format("iterations {}: {} more of {} nodes", iterations_, iterations_ - 1,
                                g.size()));
        } catch (const std::invalid_argument& e) {
          fail(iterations_line_, e.what());
        }
      g.begin_iteration();
      for (const Statement& s : body_) {
        try {
          add_statement(g, s, after, pending, call);
        } catch (const std::invalid_argument& e) {  // a call refused, a limit reached
          fail(s.line, e.what());
        }
      }
    }
    try {
      g.finalize();
    } catch (const std::invalid_argument& e) {
      throw InputError(fmt::format("{}: {}", path_, e.what()));
    }
    return g;
  }

  std::string path_;
  const WorkloadConfig& cfg_;
  int hosts_;
  int ranks_ = 0, iterations_ = 1, iterations_line_ = 0;
  std::map<std::string, Communicator> comms_;
  std::vector<Statement> body_;
  std::vector<std::string> labels_;     // the `name` options' labels
  std::vector<const std::string*> on_;  // the communicators `on` names (keys of comms_)
};

}  // namespace

ExecGraph read_text_workload(const std::string& path, const WorkloadConfig& cfg, int hosts) {
  return Reader(path, cfg, hosts).read();
}

FABRICSIM_REGISTER_WORKLOAD_FORMAT(text) {
  registry.add("text", {"the text workload format: ranks, communicators, compute, collectives",
                        &read_text_workload});
}

}  // namespace fabricsim::workload
