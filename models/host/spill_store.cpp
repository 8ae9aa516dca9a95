#include "models/host/spill_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace fabricsim::host {

namespace {

// A record's most bytes: id and time deltas (10 each as 64-bit varints), dst (5), size (10).
constexpr size_t kMaxRecord = 35;

// LEB128: 7 bits a byte, low first, the top bit set on all but the last.
inline uint8_t* put(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

inline const uint8_t* get(const uint8_t* p, uint64_t& v) {
  v = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t b = *p++;
    v |= uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) return p;
  }
}

}  // namespace

SpillStore::SpillStore(std::string dir) : dir_(std::move(dir)) {}

SpillStore::~SpillStore() {
  if (fd_ >= 0) close(fd_);
}

SpillStore::Stream& SpillStore::stream(size_t s) {
  if (s >= streams_.size()) streams_.resize(s + 1);
  if (!streams_[s]) streams_[s] = std::make_unique<Stream>();
  return *streams_[s];
}

bool SpillStore::empty(size_t s) const {
  if (s >= streams_.size() || !streams_[s]) return true;
  const Stream& st = *streams_[s];
  return st.rpos == st.rlen && st.chunks.empty() && st.wlen == 0;
}

uint64_t SpillStore::chunks_read(size_t s) const {
  return s < streams_.size() && streams_[s] ? streams_[s]->chunks_read : 0;
}

void SpillStore::open_file() {
  if (dir_.empty()) {  // TMPDIR as set (a bad one is reported, not silently replaced), else /tmp
    const char* tmp = std::getenv("TMPDIR");
    dir_ = tmp && *tmp ? tmp : "/tmp";
  }
  std::string name = (std::filesystem::path(dir_) / "fabricsim-spill-XXXXXX").string();
  fd_ = mkstemp(name.data());
  if (fd_ < 0)
    throw std::runtime_error(fmt::format(
        "host queues: cannot make a file in {} for the trace packets that wait while their host "
        "queue is full: {} (set TMPDIR to a writable folder, or raise host.queue_limit)",
        dir_, std::strerror(errno)));
  unlink(name.c_str());  // private to this process, and gone with it however it ends
}

uint32_t SpillStore::take_slot() {
  if (!free_.empty()) {
    const uint32_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  if (fd_ < 0) open_file();
  return slots_++;
}

void SpillStore::flush(Stream& st) {
  if (st.chunks.empty() && st.rpos == st.rlen) {
    // Nothing older waits on disk and the read buffer is used up: the chunk is read next, so it
    // becomes the read buffer instead.
    std::swap(st.wbuf, st.rbuf);
    st.rpos = 0;
    st.rlen = std::exchange(st.wlen, 0);
    return;
  }
  const uint32_t slot = take_slot();
  const auto at = static_cast<off_t>(uint64_t{slot} * kChunk);
  size_t done = 0;
  while (done < st.wlen) {
    const ssize_t n = pwrite(fd_, st.wbuf.data() + done, st.wlen - done, at + done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error(fmt::format(
          "host queues: cannot write the trace packets that wait while their host queue is full "
          "to a file in {} ({} B of it in use): {} (set TMPDIR to a folder with room, or raise "
          "host.queue_limit)",
          dir_, file_bytes(), n < 0 ? std::strerror(errno) : "no progress"));
    done += static_cast<size_t>(n);
  }
  st.chunks.push_back({slot, static_cast<uint32_t>(st.wlen)});
  st.wlen = 0;
  ++chunks_written_;
}

void SpillStore::push(size_t s, const Packet& p) {
  Stream& st = stream(s);
  if (st.wbuf.empty()) {
    st.wbuf.resize(kChunk);
    st.rbuf.resize(kChunk);
    st.src = p.src;
    st.tc = p.tc;
  }
  if (p.src != st.src || p.tc != st.tc)
    throw std::logic_error(
        fmt::format("spill stream {} holds host {} class {}, not host {} class {}", s, st.src,
                    st.tc, p.src, p.tc));
  if (kChunk - st.wlen < kMaxRecord) flush(st);
  // Deltas modulo 2^64 (ids rise within a class and trace times never fall, so they are small).
  const auto fs = static_cast<uint64_t>(p.inject_time.as_fs());
  uint8_t* w = st.wbuf.data() + st.wlen;
  w = put(w, p.id - st.w_id);
  w = put(w, fs - st.w_fs);
  w = put(w, static_cast<uint32_t>(p.dst));
  w = put(w, p.size.count());
  st.wlen = static_cast<size_t>(w - st.wbuf.data());
  st.w_id = p.id;
  st.w_fs = fs;
}

bool SpillStore::pop(size_t s, Packet& p) {
  if (s >= streams_.size() || !streams_[s]) return false;
  Stream& st = *streams_[s];
  if (st.rpos == st.rlen) {
    if (!st.chunks.empty()) {
      const Chunk c = st.chunks.front();
      const auto at = static_cast<off_t>(uint64_t{c.slot} * kChunk);
      size_t done = 0;
      while (done < c.bytes) {
        const ssize_t n = pread(fd_, st.rbuf.data() + done, c.bytes - done, at + done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
          throw std::runtime_error(fmt::format(
              "host queues: cannot read back the waiting trace packets from the file in {}: {}",
              dir_, n < 0 ? std::strerror(errno) : "file shorter than written"));
        done += static_cast<size_t>(n);
      }
      st.chunks.pop_front();
      free_.push_back(c.slot);
      st.rpos = 0;
      st.rlen = c.bytes;
      ++st.chunks_read;
      ++chunks_read_;
    } else if (st.wlen) {
      std::swap(st.wbuf, st.rbuf);
      st.rpos = 0;
      st.rlen = std::exchange(st.wlen, 0);
    } else {
      return false;
    }
  }
  const uint8_t* r = st.rbuf.data() + st.rpos;
  uint64_t id = 0, fs = 0, dst = 0, size = 0;
  r = get(r, id);
  r = get(r, fs);
  r = get(r, dst);
  r = get(r, size);
  st.rpos = static_cast<size_t>(r - st.rbuf.data());
  st.r_id += id;
  st.r_fs += fs;
  p = Packet();
  p.id = st.r_id;
  p.src = st.src;
  p.dst = static_cast<int32_t>(dst);
  p.tc = st.tc;
  p.size = Bytes(size);
  p.inject_time = Time::fs(static_cast<int64_t>(st.r_fs));
  return true;
}

}  // namespace fabricsim::host
