#include "models/sim/fct_writer.h"

#include <cerrno>
#include <cstring>
#include <iterator>
#include <stdexcept>

#include <fmt/compile.h>
#include <fmt/format.h>

namespace fabricsim::sim {

FctWriter::FctWriter(std::unique_ptr<IdleFabric> idle, const std::string& path)
    : idle_(std::move(idle)), path_(path) {
  if (!path_.empty()) {
    f_ = std::fopen(path_.c_str(), "wb");
    if (!f_) fail(errno);
  }
  text_ =
      "id,src,dst,bytes,verb,qp,tc,start_ns,first_byte_out_ns,last_byte_delivered_ns,"
      "completion_ns,fct_ns,ideal_fct_ns,slowdown,state\n";
}

FctWriter::~FctWriter() {
  if (f_) std::fclose(f_);
}

void FctWriter::row(const nic::NicArray::Fct& r) {
  auto ns = [](Time x) {
    return x == Time::max() ? std::string() : fmt::format(FMT_COMPILE("{:.3f}"), x.as_ns());
  };
  const nic::SentMessage& s = *r.sent;
  const bool done = s.state == nic::SentMessage::State::kDone;
  Time ideal = Time::max();
  std::string slowdown;
  if (done) {
    const Time took = s.completion - s.m.start;
    fct_.record(static_cast<uint64_t>(took.as_fs()));
    ideal = idle_->fct(s.m);
    if (ideal != Time::max()) {
      slowdowns_.push_back(static_cast<double>(took.as_fs()) / static_cast<double>(ideal.as_fs()));
      slowdown = fmt::format(FMT_COMPILE("{:.6f}"), slowdowns_.back());
    }
  }
  fmt::format_to(std::back_inserter(text_),
                 FMT_COMPILE("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n"), s.m.id, s.m.src,
                 s.m.dst, s.m.bytes, nic::verb_name(s.m.verb), s.m.qp, s.m.tc, ns(s.m.start),
                 ns(s.first_out), r.received ? ns(r.received->delivered) : "", ns(s.completion),
                 done ? ns(s.completion - s.m.start) : "", ns(ideal), slowdown,
                 done                                          ? "completed"
                 : s.state == nic::SentMessage::State::kFailed ? "failed"
                                                               : "in_flight");
  flush(false);
}

void FctWriter::finish() {
  flush(true);
}

void FctWriter::flush(bool last) {
  if (path_.empty() || !f_ || (!last && text_.size() < (size_t{1} << 20))) return;
  if (std::fwrite(text_.data(), 1, text_.size(), f_) != text_.size()) fail(errno);
  text_.clear();
  if (!last) return;
  const int rc = std::fclose(f_);
  f_ = nullptr;
  if (rc != 0) fail(errno);
}

void FctWriter::fail(int err) const {
  throw std::runtime_error("cannot write fct.csv: " + std::string(std::strerror(err)));
}

}  // namespace fabricsim::sim
