#include "models/nic/message_workload.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "models/common/error.h"
#include "models/common/rng.h"
#include "models/common/stop_signal.h"
#include "models/traffic/synthetic.h"
#include "models/traffic/text_fields.h"

namespace fabricsim::nic {

namespace {

using traffic::parse_int;
using traffic::shown;

constexpr const char* kVerbList = "send, write, write_imm or read";

// One line of a message workload file at a time, checked.
class MessageReader {
 public:
  MessageReader(const std::string& path, const MessageLimits& lim) : path_(path), lim_(lim) {
    // The file is read twice (checked and counted, then streamed): a pipe would stream as empty.
    std::error_code ec;
    if (std::filesystem::exists(path_, ec) && !std::filesystem::is_regular_file(path_, ec))
      throw InputError(
          fmt::format("{}: not a regular file (a message workload is read twice, checked and then "
                      "streamed, so it cannot be a directory, pipe or device)",
                      path_));
    in_.open(path_);
    if (!in_)
      throw InputError(
          fmt::format("{}: cannot open message workload file: {}", path_, std::strerror(errno)));
  }

  // The next message line (id not set), or false at end of file.
  bool next(Message& m) {
    while (std::getline(in_, line_)) {
      ++line_no_;
      if (parse(m)) return true;
    }
    if (in_.bad()) fail("read error");
    return false;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw InputError(fmt::format("{}:{}: {}", path_, line_no_, problem));
  }

  // The current line as a message; false for a blank or comment line.
  bool parse(Message& m) {
    const size_t hash = line_.find('#');
    if (hash != std::string::npos) line_.resize(hash);
    std::vector<std::string>& f = fields_;
    f.clear();
    size_t i = 0;
    while (i < line_.size()) {  // whitespace-separated fields; \r covers CRLF files
      while (i < line_.size() && std::isspace(static_cast<unsigned char>(line_[i]))) ++i;
      const size_t b = i;
      while (i < line_.size() && !std::isspace(static_cast<unsigned char>(line_[i]))) ++i;
      if (i > b) f.emplace_back(line_, b, i - b);
    }
    if (f.empty()) return false;
    if (f.size() < 5 || f.size() > 7)
      fail(fmt::format("expected 5 to 7 fields `start src dst bytes verb [qp=N] [tc=N]`, got {}",
                       f.size()));

    // start: a unit is mandatory (a bare "250" is ambiguous); only zero may omit it.
    if (f[0].front() == '-') fail(fmt::format("start '{}' is negative", shown(f[0])));
    if (f[0] == "0") {
      m.start = Time();
    } else {
      std::string err;
      if (!std::isalpha(static_cast<unsigned char>(f[0].back())))
        fail(fmt::format("start '{}' needs a unit (e.g. 250ns, 1.5us)", shown(f[0])));
      if (!parse_time(f[0], m.start, err))
        fail(fmt::format("bad start '{}': {}", shown(f[0]), traffic::shown_in(err, f[0])));
    }
    if (m.start < prev_start_)
      fail(
          fmt::format("start {} is earlier than the previous message's {} (the file must be in "
                      "time order: non-decreasing start)",
                      shown(f[0]), prev_start_.str()));
    prev_start_ = m.start;

    int64_t v = 0;
    const auto host = [&](const std::string& s, const char* what) {
      if (!parse_int(s, v)) fail(fmt::format("{} '{}' is not an integer", what, shown(s)));
      if (v < 0 || v >= lim_.hosts)
        fail(fmt::format("{} {} is out of range [0, {}) (no such host: the run has {})", what, v,
                         lim_.hosts, lim_.hosts));
      return static_cast<int32_t>(v);
    };
    m.src = host(f[1], "src");
    m.dst = host(f[2], "dst");
    if (m.src == m.dst)
      fail(fmt::format("src and dst are both {} (a message goes to another host)", m.src));

    // bytes: a plain integer, or a size with a unit (4KiB, 1MB).
    const std::string& b = f[3];
    if (!b.empty() &&
        std::all_of(b.begin(), b.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      const auto [ptr, ec] = std::from_chars(b.data(), b.data() + b.size(), m.bytes);
      if (ec != std::errc() || ptr != b.data() + b.size())
        fail(fmt::format("bytes {} is too large", shown(b)));
    } else {
      Bytes parsed;
      std::string err;
      if (!parse_bytes(b, parsed, err))
        fail(fmt::format("bytes '{}' is not a size (an integer, or with a unit such as 4KiB): {}",
                         shown(b), traffic::shown_in(err, b)));
      m.bytes = parsed.count();
    }
    if (m.bytes == 0) fail("bytes 0: a message carries at least 1 byte");
    if (m.bytes > lim_.max_bytes)
      fail(fmt::format("bytes {} is larger than the largest message, {} B", m.bytes,
                       lim_.max_bytes));

    if (!parse_verb(f[4], m.verb))
      fail(fmt::format("unknown verb '{}' (expected {})", shown(f[4]), kVerbList));

    m.qp = 0;
    m.tc = 0;
    bool have_qp = false, have_tc = false;
    for (size_t k = 5; k < f.size(); ++k) {
      const std::string& o = f[k];
      const size_t eq = o.find('=');
      const std::string name = eq == std::string::npos ? o : o.substr(0, eq);
      const bool is_qp = name == "qp";
      if (eq == std::string::npos || (!is_qp && name != "tc"))
        fail(fmt::format("unknown option '{}' (expected qp=<n> or tc=<n>)", shown(o)));
      bool& seen = is_qp ? have_qp : have_tc;
      if (seen) fail(fmt::format("{} given twice", name));
      seen = true;
      const std::string value = o.substr(eq + 1);
      if (!parse_int(value, v)) fail(fmt::format("{} '{}' is not an integer", name, shown(value)));
      const int64_t limit = is_qp ? lim_.qps_per_pair : lim_.traffic_classes;
      if (v < 0 || v >= limit)
        fail(fmt::format("{} {} is out of range [0, {}) ({})", name, v, limit,
                         is_qp ? "the QPs per host pair" : "the traffic classes"));
      (is_qp ? m.qp : m.tc) = static_cast<int32_t>(v);
    }
    return true;
  }

  std::string path_;
  MessageLimits lim_;
  std::ifstream in_;
  std::string line_;
  std::vector<std::string> fields_;  // reused across lines
  uint64_t line_no_ = 0;
  Time prev_start_;
};

// Pattern messages: the file's lines, checked whole on open, then streamed.
class MessageFile : public MessageSource {
 public:
  MessageFile(const std::string& path, const MessageLimits& lim, Time until)
      : reader_(path, lim), until_(until) {
    MessageReader check(path, lim);
    Message m;
    uint64_t lines = 0;
    while (check.next(m)) {
      // (a file has no size limit: its check must end at a Ctrl-C, not after the last line)
      if ((++lines & 0xffff) == 0) check_stop("checking the message file");
      // until_ Time::max() is no horizon: a line at the clock's last femtosecond is counted too
      // (the run then reports it never posted, rather than leaving it out silently).
      total_ += until_ == Time::max() || m.start < until_;
    }
    // A workload of nothing is almost always the wrong (or a truncated) file.
    if (lines == 0)
      throw InputError(fmt::format("{}: no message lines (only comments and blank lines)", path));
  }

  bool next(Message& m) override {
    if (returned_ == total_ || !reader_.next(m)) return false;
    m.id = returned_++;
    return true;
  }
  uint64_t total() const override { return total_; }

 private:
  MessageReader reader_;
  Time until_;
  uint64_t total_ = 0;
  uint64_t returned_ = 0;
};

// What the generators share: the message's fixed fields and the class draw.
struct MessageShape {
  uint64_t bytes = 0;
  Verb verb = Verb::kWrite;
  int32_t qps = 1;
  bool draw_tc = false;
  traffic::WeightedChoice tc_choice;

  MessageShape(const traffic::TrafficConfig& cfg, const MessageLimits& lim)
      : bytes(cfg.message_size.count()), qps(lim.qps_per_pair), draw_tc(cfg.tc_weights.size() > 1) {
    parse_verb(cfg.message_verb, verb);  // checked by check_traffic_config
    if (draw_tc) tc_choice = traffic::WeightedChoice(cfg.tc_weights);
  }
  int32_t tc(Rng& rng) const { return draw_tc ? static_cast<int32_t>(tc_choice.draw(rng)) : 0; }
};

Rng host_stream(uint64_t seed, int32_t e) {
  return Rng::derive(seed, "messages.src" + std::to_string(e));
}

// uniform, permutation, hotspot, incast: a Poisson stream per sending host, merged.
class PoissonMessages : public MessageSource {
 public:
  enum class Pattern { kUniform, kPermutation, kHotspot, kIncast };

  PoissonMessages(const traffic::TrafficConfig& cfg, const MessageLimits& lim, BitRate rate,
                  uint64_t seed, Time until)
      : shape_(cfg, lim),
        hosts_(lim.hosts),
        self_(cfg.self),
        hot_(static_cast<int32_t>(cfg.hotspot_port)),
        hot_fraction_(cfg.hotspot_fraction),
        target_(static_cast<int32_t>(cfg.incast_target)),
        until_(until) {
    if (cfg.pattern == "permutation") {
      pattern_ = Pattern::kPermutation;
      perm_ = traffic::random_derangement(hosts_, seed);
    } else if (cfg.pattern == "hotspot") {
      pattern_ = Pattern::kHotspot;
    } else if (cfg.pattern == "incast") {
      pattern_ = Pattern::kIncast;
    }
    if (!(cfg.load > 0)) return;
    // In femtoseconds: bits * 1e15 / (load * bps).
    mean_gap_fs_ =
        static_cast<double>(shape_.bytes) * 8e15 / (cfg.load * static_cast<double>(rate.as_bps()));
    const int64_t incast_count = cfg.incast_sources == 0 ? hosts_ - 1 : cfg.incast_sources;
    state_.resize(static_cast<size_t>(hosts_));
    for (int32_t e = 0; e < hosts_; ++e) {
      if (pattern_ == Pattern::kIncast) {
        const int64_t rank = e < target_ ? e : e - 1;
        if (e == target_ || rank >= incast_count) continue;
      }
      Host& h = state_[static_cast<size_t>(e)];
      h.rng = host_stream(seed, e);
      if (schedule(h, e, Time())) heap_.push({h.start.as_fs(), e});
    }
  }

  bool next(Message& m) override {
    if (heap_.empty()) return false;
    const int32_t src = heap_.top().second;
    heap_.pop();
    Host& h = state_[static_cast<size_t>(src)];
    m.id = next_id_++;
    m.start = h.start;
    m.src = src;
    m.dst = h.dst;
    m.bytes = shape_.bytes;
    m.verb = shape_.verb;
    m.qp = static_cast<int32_t>(h.sent++ % static_cast<uint64_t>(shape_.qps));
    m.tc = h.tc;
    if (schedule(h, src, h.start)) heap_.push({h.start.as_fs(), src});
    return true;
  }

 private:
  struct Host {
    Rng rng;
    Time start;  // of the pending message
    int32_t dst = 0;
    int32_t tc = 0;
    uint64_t sent = 0;
  };

  // Draws the host's next message, an exponential gap after `from`; false if it would start at
  // or after until_ (the host is done).
  bool schedule(Host& h, int32_t src, Time from) {
    const double gap = -std::log(1.0 - h.rng.uniform()) * mean_gap_fs_;  // 1 - u in (0, 1]
    // Compared as doubles first: a gap beyond the horizon must not overflow the conversion.
    if (!(gap < static_cast<double>((until_ - from).as_fs()))) return false;
    h.start = from + Time::fs(std::llround(gap));
    if (h.start >= until_) return false;
    h.tc = shape_.tc(h.rng);
    h.dst = destination(h, src);
    return true;
  }

  int32_t uniform(Host& h, int32_t src) {
    if (self_) return static_cast<int32_t>(h.rng.below(static_cast<uint64_t>(hosts_)));
    const auto d = static_cast<int32_t>(h.rng.below(static_cast<uint64_t>(hosts_ - 1)));
    return d + static_cast<int32_t>(d >= src);
  }

  int32_t destination(Host& h, int32_t src) {
    switch (pattern_) {
      case Pattern::kUniform:
        return uniform(h, src);
      case Pattern::kPermutation:
        return perm_[static_cast<size_t>(src)];
      case Pattern::kHotspot:
        // Always drawn, so that the stream does not depend on which branch a host takes.
        if (h.rng.bernoulli(hot_fraction_) && (self_ || src != hot_)) return hot_;
        return uniform(h, src);
      case Pattern::kIncast:
        return target_;
    }
    return 0;
  }

  MessageShape shape_;
  Pattern pattern_ = Pattern::kUniform;
  int32_t hosts_;
  bool self_;
  int32_t hot_;
  double hot_fraction_;
  int32_t target_;
  Time until_;
  double mean_gap_fs_ = 0;
  std::vector<int32_t> perm_;
  std::vector<Host> state_;
  // Pending starts of the sending hosts, smallest (start, src) on top.
  using Entry = std::pair<int64_t, int32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  uint64_t next_id_ = 0;
};

// all_to_all: rounds of hosts * (hosts - 1) messages, every ordered pair once.
class AllToAllMessages : public MessageSource {
 public:
  AllToAllMessages(const traffic::TrafficConfig& cfg, const MessageLimits& lim, BitRate rate,
                   uint64_t seed, Time until)
      : shape_(cfg, lim), hosts_(lim.hosts), until_(until) {
    if (!(cfg.load > 0) || hosts_ < 2) return;
    period_fs_ = static_cast<double>(hosts_ - 1) * static_cast<double>(shape_.bytes) * 8e15 /
                 (cfg.load * static_cast<double>(rate.as_bps()));
    for (int32_t e = 0; e < hosts_; ++e) rngs_.push_back(host_stream(seed, e));
    active_ = round_start(0, start_);
    if (until_ == Time::max() || !active_) return;  // endless, or nothing at all
    // Rounds that start before until_: the first r with round_start(r) >= until_, from the
    // estimate until_ / P corrected for rounding.
    auto rounds = static_cast<uint64_t>(
        std::max(0.0, std::floor(static_cast<double>(until_.as_fs()) / period_fs_) - 1));
    Time t;
    while (round_start(rounds, t)) ++rounds;
    const uint64_t per_round = static_cast<uint64_t>(hosts_) * static_cast<uint64_t>(hosts_ - 1);
    total_ = rounds > UINT64_MAX / per_round ? UINT64_MAX : rounds * per_round;
  }

  bool next(Message& m) override {
    if (!active_) return false;
    m.id = next_id_++;
    m.start = start_;
    m.src = src_;
    m.dst = (src_ + k_) % hosts_;
    m.bytes = shape_.bytes;
    m.verb = shape_.verb;
    m.qp = static_cast<int32_t>(round_ % static_cast<uint64_t>(shape_.qps));
    m.tc = shape_.tc(rngs_[static_cast<size_t>(src_)]);
    if (++k_ == hosts_) {  // this host's round is posted: the next host, or the next round
      k_ = 1;
      if (++src_ == hosts_) {
        src_ = 0;
        ++round_;
        active_ = round_start(round_, start_);
      }
    }
    return true;
  }
  uint64_t total() const override { return total_; }

 private:
  // Round r's start, rounded to the fs (not accumulated, so it does not drift); false if it is
  // at or after until_.
  bool round_start(uint64_t r, Time& t) const {
    const double fs = std::round(static_cast<double>(r) * period_fs_);
    if (!(fs < static_cast<double>(until_.as_fs()))) return false;
    t = Time::fs(static_cast<int64_t>(fs));
    return t < until_;
  }

  MessageShape shape_;
  int32_t hosts_;
  Time until_;
  double period_fs_ = 0;
  std::vector<Rng> rngs_;  // per host, for the tc draws
  bool active_ = false;
  uint64_t round_ = 0;
  Time start_;
  int32_t src_ = 0;
  int32_t k_ = 1;  // the pending message goes to (src_ + k_) mod hosts_
  uint64_t total_ = 0;
  uint64_t next_id_ = 0;
};

}  // namespace

const char* verb_name(Verb v) {
  switch (v) {
    case Verb::kSend:
      return "send";
    case Verb::kWrite:
      return "write";
    case Verb::kWriteImm:
      return "write_imm";
    case Verb::kRead:
      return "read";
  }
  return "?";
}

bool parse_verb(const std::string& s, Verb& v) {
  for (Verb c : {Verb::kSend, Verb::kWrite, Verb::kWriteImm, Verb::kRead}) {
    if (s == verb_name(c)) {
      v = c;
      return true;
    }
  }
  return false;
}

std::unique_ptr<MessageSource> make_messages(const traffic::TrafficConfig& cfg,
                                             const MessageLimits& lim, BitRate line_rate,
                                             uint64_t seed, const std::string& base_dir,
                                             Time until) {
  const auto fail = [](const std::string& key, const std::string& message) {
    throw InputError(fmt::format("{}: {}", key, message));
  };
  // Repeated here because a TrafficConfig may be built in code, without config::load.
  traffic::check_traffic_config(cfg, fail);
  if (lim.hosts < 1) fail("traffic", fmt::format("need at least 1 host, got {}", lim.hosts));
  if (lim.qps_per_pair < 1)
    fail("traffic", fmt::format("need at least 1 QP per host pair, got {}", lim.qps_per_pair));
  if (lim.max_bytes < 1) fail("traffic", "the largest message must be at least 1 byte");
  traffic::check_traffic_endpoints(cfg, lim.hosts, lim.traffic_classes, fail);
  if (cfg.pattern == "trace")
    fail("traffic.pattern",
         "trace replays a packet trace, which cannot drive NICs (NIC runs take pattern "
         "messages: docs/trace-format.md)");
  if (cfg.pattern == "messages") {
    std::string path = cfg.messages_file;
    if (!base_dir.empty() && path.front() != '/') path = base_dir + "/" + path;
    return std::make_unique<MessageFile>(path, lim, until);
  }
  if (cfg.message_size.count() > lim.max_bytes)
    fail("traffic.message_size", fmt::format("{} is larger than the largest message, {} B",
                                             cfg.message_size.str(), lim.max_bytes));
  if (line_rate.as_bps() == 0) fail("traffic", "line rate must be > 0");
  if (cfg.pattern == "all_to_all")
    return std::make_unique<AllToAllMessages>(cfg, lim, line_rate, seed, until);
  return std::make_unique<PoissonMessages>(cfg, lim, line_rate, seed, until);
}

}  // namespace fabricsim::nic
