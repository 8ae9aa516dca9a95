#include "models/sim/occupancy_writer.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

namespace fabricsim::sim {

namespace {

constexpr size_t kFileBlock = size_t{1} << 20;  // bytes handed to the file at once
constexpr size_t kMaxValueChars = 21;           // ",-9223372036854775808"

inline char* put_int(char* p, int64_t v) {
  if (v == 0) {  // most cells of a lightly loaded switch
    *p = '0';
    return p + 1;
  }
  return std::to_chars(p, p + 20, v).ptr;
}

// ",bytes" for each of the n cell counts at v. A lightly loaded switch's rows are mostly zeros
// (an empty egress port): four at a time are one 8-byte store, the others multiplied and
// formatted with to_chars.
inline char* put_values(char* p, const int64_t* v, size_t n, int64_t cell_bytes) {
  for (size_t j = 0; j < n;) {
    if (j + 4 <= n && (v[j] | v[j + 1] | v[j + 2] | v[j + 3]) == 0) {
      std::memcpy(p, ",0,0,0,0", 8);
      p += 8;
      j += 4;
    } else if (v[j] == 0) {
      std::memcpy(p, ",0", 2);
      p += 2;
      ++j;
    } else {
      *p++ = ',';
      p = std::to_chars(p, p + 20, v[j] * cell_bytes).ptr;
      ++j;
    }
  }
  return p;
}

}  // namespace

std::vector<std::string> occupancy_columns(const std::vector<std::string>& switch_names,
                                           const std::vector<int>& ports) {
  std::vector<std::string> c;
  const bool one = switch_names.size() == 1;
  for (size_t s = 0; s < switch_names.size(); ++s)
    for (int p = 0; p < ports[s]; ++p)
      c.push_back(one ? fmt::format("port{}_bytes", p)
                      : fmt::format("{}.port{}_bytes", switch_names[s], p));
  return c;
}

std::vector<std::string> occupancy_columns(const std::vector<std::string>& switch_names,
                                           int ports) {
  return occupancy_columns(switch_names, std::vector<int>(switch_names.size(), ports));
}

char* format_time_ns(char* out, Time t) {
  const int64_t fs = t.as_fs();
  // A whole number of picoseconds below 2^53 fs: the double fs * 1e-6 is within 1e-15 relative of
  // the decimal k.xyz, far from a rounding tie at the third decimal, so "{:.3f}" prints exactly
  // these digits.
  if (fs >= 0 && fs < (int64_t{1} << 53) && fs % 1000 == 0) {
    const int64_t ps = fs / 1000;
    out = std::to_chars(out, out + 20, ps / 1000).ptr;
    const auto frac = static_cast<int>(ps % 1000);
    out[0] = '.';
    out[1] = static_cast<char>('0' + frac / 100);
    out[2] = static_cast<char>('0' + frac / 10 % 10);
    out[3] = static_cast<char>('0' + frac % 10);
    return out + 4;
  }
  return fmt::format_to_n(out, 32, "{:.3f}", t.as_ns()).out;
}

namespace {
std::vector<std::unique_ptr<OccupancySource>> adapt(const std::vector<sw::SwitchCore*>& cores) {
  std::vector<std::unique_ptr<OccupancySource>> v;
  for (sw::SwitchCore* c : cores) v.push_back(std::make_unique<CoreOccupancy>(c));
  return v;
}
std::vector<OccupancySource*> pointers(const std::vector<std::unique_ptr<OccupancySource>>& v) {
  std::vector<OccupancySource*> p;
  for (const auto& s : v) p.push_back(s.get());
  return p;
}
}  // namespace

OccupancyWriter::OccupancyWriter(std::vector<sw::SwitchCore*> cores,
                                 const std::vector<std::string>& columns, Time interval,
                                 std::string path, size_t batch_values, double max_values)
    : OccupancyWriter(std::vector<OccupancySource*>{}, columns, interval, std::move(path),
                      batch_values, max_values, adapt(cores)) {}

OccupancyWriter::OccupancyWriter(std::vector<OccupancySource*> sources,
                                 const std::vector<std::string>& columns, Time interval,
                                 std::string path, size_t batch_values, double max_values)
    : OccupancyWriter(std::move(sources), columns, interval, std::move(path), batch_values,
                      max_values, {}) {}

OccupancyWriter::OccupancyWriter(std::vector<OccupancySource*> sources,
                                 const std::vector<std::string>& columns, Time interval,
                                 std::string path, size_t batch_values, double max_values,
                                 std::vector<std::unique_ptr<OccupancySource>> owned)
    : owned_(std::move(owned)),
      cores_(owned_.empty() ? std::move(sources) : pointers(owned_)),
      interval_(interval),
      path_(std::move(path)),
      part_(path_ + ".part") {
  size_t values = 0;  // per row, over all cores
  for (auto* c : cores_) {
    c->set_occupancy_interval(interval_);
    values += c->occupancy_row_size();
  }
  if (values != columns.size() + cores_.size())
    throw std::logic_error(
        fmt::format("occupancy.csv: {} columns for {} values per row", columns.size(), values));
  max_rows_ = static_cast<int64_t>(max_values / static_cast<double>(std::max<size_t>(values, 1)));
  if (interval_ > Time()) {
    // Each core takes at most ceil(step / interval) samples between two advance() calls.
    const int64_t batch = std::max<int64_t>(16, static_cast<int64_t>(batch_values / values));
    max_step_ = interval_.as_fs() > Time::max().as_fs() / batch ? Time::max() : interval_ * batch;
  }
  std::string header = "time_ns,total_bytes";
  for (const auto& c : columns) header += "," + c;
  header += "\n";
  row_chars_ = 32 + kMaxValueChars * (columns.size() + 1) + 1;
  buf_.resize(std::max(kFileBlock, header.size()) + row_chars_);
  std::memcpy(buf_.data(), header.data(), header.size());
  used_ = header.size();
  file_ = std::fopen(part_.c_str(), "wb");
  if (!file_) {
    const int err = errno;
    throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(err));
  }
  std::setvbuf(file_, nullptr, _IONBF, 0);  // the blocks are large already
}

OccupancyWriter::~OccupancyWriter() {
  if (file_) close_and_remove();
}

void OccupancyWriter::close_and_remove() {
  std::fclose(file_);
  file_ = nullptr;
  std::error_code ec;
  std::filesystem::remove(part_, ec);
}

void OccupancyWriter::fail() {
  const int err = errno;  // of the write that failed (No space left on device, ...)
  close_and_remove();
  throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(err));
}

void OccupancyWriter::advance(Time now) {
  if (!file_ || interval_ == Time() || capped_) return;
  size_t rows = SIZE_MAX;
  for (auto* c : cores_) {
    c->take_occupancy_samples_before(now);
    if (c->occupancy_first() != next_)  // someone else released samples: rows would shift
      throw std::logic_error(
          fmt::format("occupancy.csv: {} released samples before row {}", c->name(), next_));
    rows = std::min(rows, c->occupancy_pending());
  }
  if (next_ + static_cast<int64_t>(rows) < max_rows_) return write_rows(rows);
  // The cap: the rows up to it, then no more samples (the ones taken beyond it are dropped).
  write_rows(static_cast<size_t>(max_rows_ - next_));
  capped_ = true;
  for (auto* c : cores_) {
    c->set_occupancy_interval(Time());
    c->release_occupancy(c->occupancy_pending());
  }
}

void OccupancyWriter::finish(Time end) {
  if (!file_) throw std::logic_error("OccupancyWriter::finish called twice");
  advance(end + Time::fs(1));  // the sample at `end` too
  flush();
  if (std::fclose(file_) != 0) {
    const int err = errno;
    file_ = nullptr;
    std::error_code ec;
    std::filesystem::remove(part_, ec);
    throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(err));
  }
  file_ = nullptr;
  std::error_code ec;
  std::filesystem::rename(part_, path_, ec);
  if (ec) throw std::runtime_error("cannot write " + path_ + ": " + ec.message());
}

void OccupancyWriter::write_rows(size_t rows) {
  // All cores sample the same instants from 0, so the k-th pending sample of each is instant
  // next_ + k (they all released the same rows before).
  for (size_t k = 0; k < rows; ++k) {
    if (buf_.size() - used_ < row_chars_) flush();
    char* p = buf_.data() + used_;
    p = format_time_ns(p, interval_ * (next_ + static_cast<int64_t>(k)));
    int64_t total = 0;
    for (auto* c : cores_) total += c->occupancy_row(k)[0] * c->occupancy_cell_bytes();
    *p++ = ',';
    p = put_int(p, total);
    for (auto* c : cores_)
      p = put_values(p, c->occupancy_row(k) + 1, c->occupancy_row_size() - 1,
                     c->occupancy_cell_bytes());
    *p++ = '\n';
    used_ = static_cast<size_t>(p - buf_.data());
  }
  for (auto* c : cores_) c->release_occupancy(rows);
  next_ += static_cast<int64_t>(rows);
}

void OccupancyWriter::flush() {
  if (used_ > 0 && std::fwrite(buf_.data(), 1, used_, file_) != used_) fail();
  used_ = 0;
}

}  // namespace fabricsim::sim
