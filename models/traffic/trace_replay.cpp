#include "models/traffic/trace_replay.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "models/common/error.h"
#include "models/traffic/synthetic.h"
#include "models/traffic/text_fields.h"

namespace fabricsim::traffic {

TraceReader::TraceReader(const std::string& path, int endpoints, int tc_count, PacketLimit limit)
    : path_(path), endpoints_(endpoints), tc_count_(tc_count), limit_(std::move(limit)) {
  // Replay reads the file twice (checked whole first, then streamed), so a pipe would replay as
  // empty: only a regular file will do.
  std::error_code ec;
  if (std::filesystem::exists(path_, ec) && !std::filesystem::is_regular_file(path_, ec))
    throw InputError(fmt::format(
        "{}: not a regular file (a trace is read twice, checked and then replayed, so it cannot be "
        "a directory, pipe or device; save it to a file first)",
        path_));
  in_.open(path_);
  if (!in_)
    throw InputError(fmt::format("{}: cannot open trace file: {}", path_, std::strerror(errno)));
}

void TraceReader::fail(const std::string& problem) const {
  throw InputError(fmt::format("{}:{}: {}", path_, line_no_, problem));
}

bool TraceReader::read_line() {
  if (!std::getline(in_, line_)) {
    if (in_.bad()) fail("read error");
    return false;
  }
  ++line_no_;
  return true;
}

bool TraceReader::next(Record& r) {
  while (read_line())
    if (parse(r)) return true;
  return false;
}

bool TraceReader::parse(Record& r) {
  std::vector<std::string>& f = fields_;
  {
    const size_t hash = line_.find('#');
    if (hash != std::string::npos) line_.resize(hash);
    f.clear();
    size_t i = 0;
    while (i < line_.size()) {  // whitespace-separated fields; \r covers CRLF files
      while (i < line_.size() && std::isspace(static_cast<unsigned char>(line_[i]))) ++i;
      const size_t b = i;
      while (i < line_.size() && !std::isspace(static_cast<unsigned char>(line_[i]))) ++i;
      if (i > b) f.emplace_back(line_, b, i - b);
    }
    if (f.empty()) return false;
    if (f.size() != 4 && f.size() != 5)
      fail(fmt::format("expected 4 or 5 fields `time src dst bytes [tc]`, got {}", f.size()));

    // The unit is mandatory (a bare "250" is ambiguous); only zero may omit it.
    if (f[0] == "0") {
      r.time = Time();
    } else {
      std::string err;
      if (!std::isalpha(static_cast<unsigned char>(f[0].back())))
        fail(fmt::format("time '{}' needs a unit (e.g. 250ns, 1.5us)", shown(f[0])));
      if (!parse_time(f[0], r.time, err)) fail(fmt::format("bad time '{}': {}", shown(f[0]), err));
      if (r.time < Time()) fail(fmt::format("time '{}' is negative", shown(f[0])));
    }
    if (r.time < prev_time_)
      fail(
          fmt::format("time {} is earlier than the previous line's {} (lines must be in "
                      "non-decreasing time order)",
                      shown(f[0]), prev_time_.str()));
    prev_time_ = r.time;

    int64_t v = 0;
    const auto endpoint = [&](const std::string& s, const char* what) {
      if (!parse_int(s, v)) fail(fmt::format("{} '{}' is not an integer", what, shown(s)));
      if (v < 0 || v >= endpoints_)
        fail(fmt::format("{} {} is out of range [0, {})", what, v, endpoints_));
      return static_cast<int32_t>(v);
    };
    r.src = endpoint(f[1], "src");
    r.dst = endpoint(f[2], "dst");
    if (!parse_int(f[3], v)) fail(fmt::format("bytes '{}' is not an integer", shown(f[3])));
    if (v < 1 || v > kMaxPacketBytes)
      fail(fmt::format("bytes {} is out of range [1, {}]", v, kMaxPacketBytes));
    if (v > limit_.bytes)
      fail(fmt::format("a {} B packet is larger than the {} B that {} can hold", v, limit_.bytes,
                       limit_.key));
    r.size = Bytes(static_cast<uint64_t>(v));
    r.tc = 0;
    if (f.size() == 5) {
      if (!parse_int(f[4], v)) fail(fmt::format("tc '{}' is not an integer", shown(f[4])));
      if (v < 0 || v >= tc_count_) fail(fmt::format("tc {} is out of range [0, {})", v, tc_count_));
      r.tc = static_cast<int32_t>(v);
    }
    return true;
  }
}

TraceReplay::TraceReplay(const std::string& path, int endpoints, int tc_count,
                         const PacketLimit& limit)
    : reader_(path, endpoints, tc_count, limit) {
  // Validation pass: every error surfaces here, before the simulation starts.
  TraceReader check(path, endpoints, tc_count, limit);
  TraceReader::Record r;
  while (check.next(r)) ++packet_count_;
  // A run that replays nothing is almost always the wrong file (or a truncated one).
  if (packet_count_ == 0)
    throw InputError(fmt::format("{}: no packet lines (only comments and blank lines)", path));
}

bool TraceReplay::next(Packet& p) {
  // Lines are in time order; a packet due while its host is still sending waits in the host's
  // FIFO (models/host/host.h), which reports the wait.
  TraceReader::Record r;
  if (!reader_.next(r)) return false;
  p.id = next_id_++;
  p.src = r.src;
  p.dst = r.dst;
  p.tc = r.tc;
  p.size = r.size;
  p.inject_time = r.time;
  return true;
}

}  // namespace fabricsim::traffic
