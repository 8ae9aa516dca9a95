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

namespace fabricsim::traffic {

namespace {

bool parse_int(const std::string& s, int64_t& out) {
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end;
}

// A field as an error message shows it: at most 40 characters, anything unprintable escaped (a
// binary file's NUL would otherwise cut the message short).
std::string shown(const std::string& field) {
  constexpr size_t kMax = 40;
  std::string out;
  for (size_t i = 0; i < field.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(field[i]);
    out += std::isprint(c) ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  }
  if (field.size() > kMax) out += fmt::format("... ({} characters)", field.size());
  return out;
}

}  // namespace

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
  line_offset_ = next_offset_;
  next_offset_ += line_.size() + 1;
  return true;
}

bool TraceReader::next(Record& r) {
  while (read_line())
    if (parse(r)) return true;
  return false;
}

bool TraceReader::next_quick(int32_t& src, int32_t& tc) {
  // Fields by hand, no copies: `time src dst bytes [tc]`, whitespace-separated, `#` ends them.
  const auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };  // isspace
  while (read_line()) {
    const char* p = line_.data();
    const char* const end = p + line_.size();
    int32_t v[5] = {0, 0, 0, 0, 0};
    int n = 0;
    while (n < 5) {
      while (p < end && space(*p)) ++p;
      if (p == end || *p == '#') break;
      const char* const b = p;
      while (p < end && !space(*p) && *p != '#') ++p;
      // Only src and tc are read, as parse() reads them (from_chars: "-0" is 0); the other fields,
      // the time's digits among them, are not numbers a digit loop may multiply up (the fuzzer
      // found an int overflow in a long time field, and a src "-0" that read as -30).
      if (n == 1 || n == 4) std::from_chars(b, p, v[n]);
      ++n;
    }
    if (n == 0) continue;  // blank or comment
    src = v[1];
    tc = n == 5 ? v[4] : 0;
    return true;
  }
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

void TraceReader::seek(uint64_t offset, uint64_t line_no) {
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(offset));
  if (!in_) fail(fmt::format("cannot seek to byte {}", offset));
  next_offset_ = line_offset_ = offset;
  line_no_ = line_no - 1;  // next() counts the line it reads
  prev_time_ = Time();     // (the order was checked by the validation pass)
}

namespace {

// The packets of one (src, tc) from a packet id on, read with a reader of their own.
class TraceCursor : public SourceCursor {
 public:
  TraceCursor(TraceReader reader, uint64_t first_id, uint64_t from_id, int32_t src, int32_t tc)
      : reader_(std::move(reader)), next_id_(first_id), from_(from_id), src_(src), tc_(tc) {}

  bool next(Packet& p, uint64_t until) override {
    if (!have_) {
      // Other classes' lines are only looked at (src and tc), not parsed: a cursor may pass most
      // of the file.
      int32_t src = 0, tc = 0;
      do {
        if (!reader_.next_quick(src, tc)) return false;  // (the end: nothing of the class is left)
      } while (next_id_++ < from_ || src != src_ || tc != tc_);
      TraceReader::Record r;
      reader_.parse(r);  // (a packet line: the validation pass checked it)
      pending_.id = next_id_ - 1;
      pending_.src = r.src;
      pending_.dst = r.dst;
      pending_.tc = r.tc;
      pending_.size = r.size;
      pending_.inject_time = r.time;
      have_ = true;
    }
    if (pending_.id >= until) return false;  // the merged stream has not reached it
    p = pending_;
    have_ = false;
    return true;
  }

 private:
  TraceReader reader_;
  uint64_t next_id_;  // of the next packet line the reader returns
  uint64_t from_;
  int32_t src_, tc_;
  bool have_ = false;
  Packet pending_;  // the class's next packet, read ahead
};

}  // namespace

std::unique_ptr<SourceCursor> TraceReplay::resume(int32_t src, int32_t tc, uint64_t from_id) const {
  TraceReader reader(path_, endpoints_, tc_count_, limit_);
  const uint64_t k = std::min<uint64_t>(from_id / kCheckpoint, checkpoints_.size() - 1);
  reader.seek(checkpoints_[k].offset, checkpoints_[k].line);
  return std::make_unique<TraceCursor>(std::move(reader), k * kCheckpoint, from_id, src, tc);
}

TraceReplay::TraceReplay(const std::string& path, int endpoints, int tc_count,
                         const PacketLimit& limit)
    : path_(path),
      endpoints_(endpoints),
      tc_count_(tc_count),
      limit_(limit),
      reader_(path, endpoints, tc_count, limit) {
  // Validation pass: every error surfaces here, before the simulation starts.
  TraceReader check(path, endpoints, tc_count, limit);
  TraceReader::Record r;
  while (check.next(r)) {
    if (packet_count_ % kCheckpoint == 0)
      checkpoints_.push_back({check.line_offset(), check.line_number()});
    ++packet_count_;
  }
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
