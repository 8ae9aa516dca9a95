// Where a trace's packets wait while their host class's queue is full: a file, per class in order.
//
// Hardware: none of the switch's. It stands for the trace itself, which a real host would still
// hold in its own memory: a trace's packets must all be sent (none refused), but a host class
// queue holds at most host.queue_limit of them, so the packets that come due while it is full wait
// here, in the order they came, and go into the queue as it drains (HostsModule::refill). The
// trace file is read once, in order, by one reader; a class reads back only its own packets.
//
// Each class (a "stream", numbered by its owner) appends compactly encoded packets to a 4 KiB
// write buffer (id, time, destination and size as variable-length deltas: 5 B for a 200 B packet
// of an interleaved trace at time zero); a full buffer goes to a chunk slot of one temporary file
// (created on first use in the temporary folder, TMPDIR, and removed from the folder at once, so
// it disappears with the process), and slots that were read back are reused. Memory: two 4 KiB
// buffers per class that ever waited plus 8 B per chunk on disk (~0.01 B per packet); the file
// holds the packets waiting at its fullest moment. A class whose waiting packets fit in its
// buffers never touches the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "models/common/packet.h"

namespace fabricsim::host {

class SpillStore {
 public:
  static constexpr size_t kChunk = 4096;  // bytes per chunk (a page: one read or write each)

  // `dir`: the folder for the file (empty: the temporary folder, TMPDIR or /tmp).
  explicit SpillStore(std::string dir = "");
  ~SpillStore();
  SpillStore(const SpillStore&) = delete;
  SpillStore& operator=(const SpillStore&) = delete;

  // Appends p to stream s. A stream's packets share src and tc (one host class). Throws
  // std::runtime_error naming the folder if the file cannot be made or written (a full disk).
  void push(size_t s, const Packet& p);
  // Stream s's oldest packet into p (a fresh packet: the fields a source sets), or false when it
  // has none.
  bool pop(size_t s, Packet& p);
  bool empty(size_t s) const;

  // What it costs (tests, benchmark): the file's size (its most chunks in use at once), the
  // chunks written and read, and how many of them stream s read (only its own).
  uint64_t file_bytes() const { return uint64_t{slots_} * kChunk; }
  uint64_t chunks_written() const { return chunks_written_; }
  uint64_t chunks_read() const { return chunks_read_; }
  uint64_t chunks_read(size_t s) const;

 private:
  struct Chunk {
    uint32_t slot, bytes;
  };
  struct Stream {
    int32_t src = 0, tc = 0;
    std::vector<uint8_t> wbuf, rbuf;  // kChunk each once the stream is used
    size_t wlen = 0, rpos = 0, rlen = 0;
    std::deque<Chunk> chunks;  // on disk, oldest first (all older than wbuf, newer than rbuf)
    // The previous packet written and read: what the deltas are from (equal when it is empty).
    uint64_t w_id = 0, r_id = 0, w_fs = 0, r_fs = 0;
    uint64_t chunks_read = 0;
  };
  Stream& stream(size_t s);
  void flush(Stream& st);  // its write buffer into a chunk
  uint32_t take_slot();
  void open_file();

  std::string dir_;
  int fd_ = -1;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<uint32_t> free_;  // slots read back, reused before the file grows
  uint32_t slots_ = 0;
  uint64_t chunks_written_ = 0, chunks_read_ = 0;
};

}  // namespace fabricsim::host
