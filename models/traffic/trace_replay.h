// Trace replay: packets from a text file (format: traces/README.md).
//
// One packet per line, `time src dst bytes [tc]`, `#` comments, lines in non-decreasing time.
// The constructor validates the whole file in one streaming pass, so a bad line fails the run
// before it starts, with InputError "FILE:LINE: problem"; it keeps nothing but the packet count.
// Replay then streams the file a second time, once, in order. A host class whose queue is full
// (host.queue_limit) keeps its later packets in the hosts' spill file until the queue drains
// (models/host/spill_store.h). Memory is bounded by the hosts' queues, not by the trace's length.
//
// Source queueing: a source's packet starts at max(its time, end of that source's previous packet),
// i.e. an endpoint never exceeds line rate; packets a trace sends faster than line rate wait in the
// host. Because delays reorder packets across sources, delayed packets are held in a min-heap keyed
// (start, src) and released once the next unread line's time is later than their start.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "models/traffic/traffic_source.h"

namespace fabricsim::traffic {

// One trace line. Reads and checks lines one at a time.
class TraceReader {
 public:
  struct Record {
    Time time;
    int32_t src = 0;
    int32_t dst = 0;
    int32_t tc = 0;
    Bytes size;
  };

  // Throws InputError "PATH: cannot open trace file" if the file cannot be read. Packets larger
  // than `limit` are errors.
  TraceReader(const std::string& path, int endpoints, int tc_count, PacketLimit limit = {});
  // The next packet line, or false at end of file. Throws InputError "PATH:LINE: problem".
  bool next(Record& r);
  // The current line as a packet (throws on a bad one); false for a blank or comment line.
  bool parse(Record& r);

 private:
  [[noreturn]] void fail(const std::string& problem) const;
  bool read_line();  // the next line into line_, false at end of file

  std::string path_;
  int endpoints_;
  int tc_count_;
  PacketLimit limit_;
  std::ifstream in_;
  std::string line_;
  std::vector<std::string> fields_;  // reused across lines
  uint64_t line_no_ = 0;
  Time prev_time_;
};

class TraceReplay : public TrafficSource {
 public:
  TraceReplay(const std::string& path, int endpoints, int tc_count, const PacketLimit& limit = {});
  bool next(Packet& p) override;

  uint64_t packet_count() const { return packet_count_; }  // packet lines in the file
  uint64_t workload_packets() const override { return packet_count_; }

 private:
  TraceReader reader_;
  uint64_t packet_count_ = 0;
  uint64_t next_id_ = 0;
};

}  // namespace fabricsim::traffic
