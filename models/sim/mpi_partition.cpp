#include "models/sim/mpi_partition.h"

#include <mpi.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>

#include <systemc>

#include "models/common/error.h"
#include "models/sim/fabric.h"
#include "models/sim/mpi_wire.h"
#include "models/sim/occupancy_writer.h"

namespace fabricsim::sim {

namespace {

using mpi::Buf;

// Commands from rank 0; each rank answers those that need an answer, in order.
enum Cmd : uint8_t {
  kWindow = 1,
  kDeliver,
  kCounts,
  kSample,
  kOpen,
  kOccupancy,
  kOccStop,
  kFinish
};
constexpr int kTagCmd = 1, kTagReply = 2;
bool g_started = false, g_finished = false;

void send(const Buf& b, int to, int tag) {
  MPI_Send(b.d.data(), static_cast<int>(b.d.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD);
}

void recv(Buf& b, int from, int tag) {
  // Polls, and after kSpin sleeps between polls (up to kNap), rather than MPI_Probe's busy wait:
  // a window holds milliseconds of work (12 ms of CPU on a k = 16 fat tree), so a wake-up's
  // tens of microseconds cost little, while a waiting rank that spins takes a CPU from the rank
  // it waits for wherever they share one (performance.md, "MPI ranks").
  constexpr auto kSpin = std::chrono::microseconds(50);
  constexpr long kNapMaxNs = 200000;
  MPI_Status st;
  int ready = 0;
  const auto t0 = std::chrono::steady_clock::now();
  long nap = 5000;
  for (;;) {
    MPI_Iprobe(from, tag, MPI_COMM_WORLD, &ready, &st);
    if (ready) break;
    if (std::chrono::steady_clock::now() - t0 < kSpin) continue;
    const timespec ts{0, nap};
    nanosleep(&ts, nullptr);
    nap = std::min(nap * 2, kNapMaxNs);
  }
  int n = 0;
  MPI_Get_count(&st, MPI_BYTE, &n);
  b.d.resize(static_cast<size_t>(n));
  b.at = 0;
  MPI_Recv(b.d.data(), n, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

mpi::SwitchIndex switch_index(Fabric& f) {
  mpi::SwitchIndex x;
  for (int s = 0; s < f.switch_count(); ++s) {
    x.modules.push_back(&f.switch_module(s));
    x.index[x.modules.back()] = s;
  }
  return x;
}

// What a rank's side did in a window or a delivery: its calls to every other side, its
// schedule() requests, its spans, and the oldest frame on its watched wires.
void put_side_result(Buf& b, Fabric& f, const mpi::SwitchIndex& x) {
  DeviceScheduler& d = f.switch_scheduler();
  const int me = f.my_side();
  for (int t = 0; t < f.sides(); ++t) {
    if (t == me) continue;
    mpi::put_box(b, d.mail_box(t, me), x);
    d.mail_box(t, me).clear();
  }
  b.put_vec(d.asked(me));
  d.asked(me).clear();
  if (f.config().stats.flow_events > 0) {
    b.put_vec(f.side_spans(me).records());
    f.side_spans(me).clear();
  } else {
    b.put<uint64_t>(0);
  }
  Time oldest = Time::max();
  for (int s = 0; s < f.switch_count(); ++s)
    if (f.switch_here(s))
      oldest = std::min(oldest, f.switch_module(s).core().oldest_watched_frame());
  b.put(oldest);
}

class MpiRemote;

// Switch s's occupancy samples on rank 0, as its rank sent them.
class RemoteOccupancy : public OccupancySource {
 public:
  RemoteOccupancy(MpiRemote* owner, const sw::SwitchCore& copy)
      : owner_(owner),
        name_(copy.name()),
        cell_bytes_(copy.occupancy_cell_bytes()),
        row_size_(copy.occupancy_row_size()) {}
  const std::string& name() const override { return name_; }
  void set_occupancy_interval(Time interval) override;
  void take_occupancy_samples_before(Time t) override;
  int64_t occupancy_first() const override { return first_; }
  int64_t occupancy_cell_bytes() const override { return cell_bytes_; }
  size_t occupancy_pending() const override { return rows_.size() / row_size_; }
  size_t occupancy_row_size() const override { return row_size_; }
  const int64_t* occupancy_row(size_t k) const override { return rows_.data() + k * row_size_; }
  void release_occupancy(size_t count) override {
    rows_.erase(rows_.begin(), rows_.begin() + static_cast<std::ptrdiff_t>(count * row_size_));
    first_ += static_cast<int64_t>(count);
  }
  // Rows its rank took from sample `first` on.
  void append(int64_t first, const std::vector<int64_t>& values) {
    if (first != first_ + static_cast<int64_t>(occupancy_pending()))
      throw std::logic_error("mpi: " + name_ + "'s occupancy samples arrived out of order");
    rows_.insert(rows_.end(), values.begin(), values.end());
  }

 private:
  MpiRemote* owner_;
  std::string name_;
  int64_t cell_bytes_;
  size_t row_size_;
  int64_t first_ = 0;
  std::vector<int64_t> rows_;
};

// Rank 0's stand-in for ranks 1 .. N - 1.
class MpiRemote : public RemoteFabric {
 public:
  explicit MpiRemote(Fabric& f) : f_(f), x_(switch_index(f)) {
    for (int r = 0; r < f.sides(); ++r) sides_.push_back(std::make_unique<Side>(this, r));
    oldest_.assign(static_cast<size_t>(f.sides()), Time::max());
    occ_.resize(static_cast<size_t>(f.switch_count()));
    reports_.resize(occ_.size());
    violations_.resize(occ_.size());
    for (int s = 0; s < f.switch_count(); ++s)
      if (!f.switch_here(s))
        occ_[s] = std::make_unique<RemoteOccupancy>(this, f.switch_module(s).core());
    final_spans_.resize(static_cast<size_t>(f.sides()));
  }

  RemoteSide* side(int s) override { return sides_[static_cast<size_t>(s)].get(); }
  Time oldest_watched_frame() const override {
    return *std::min_element(oldest_.begin(), oldest_.end());
  }
  OccupancySource* occupancy(int s) override { return occ_[static_cast<size_t>(s)].get(); }

  SwitchCounts counts() override {
    if (finished_) return final_counts_;
    SwitchCounts c;
    command_all(kCounts);
    for (int r = 1; r < f_.sides(); ++r) {
      receive(r);
      c.add(in_.get<SwitchCounts>());
    }
    return c;
  }
  void sample_progress(Time now) override {
    out_.reset();
    out_.put<uint8_t>(kSample);
    out_.put(now);
    send_all();
  }
  void open_window() override { command_all(kOpen); }

  void pull_occupancy(Time t) {
    if (t == occ_at_) return;
    occ_at_ = t;
    out_.reset();
    out_.put<uint8_t>(kOccupancy);
    out_.put(t);
    send_all();
    for (int r = 1; r < f_.sides(); ++r) {
      receive(r);
      for (auto n = in_.get<uint64_t>(); n > 0; --n) {
        const auto s = in_.get<int32_t>();
        const auto first = in_.get<int64_t>();
        occ_.at(static_cast<size_t>(s))->append(first, in_.get_vec<int64_t>());
      }
    }
  }
  void stop_occupancy() {
    if (!occ_stopped_) command_all(kOccStop);
    occ_stopped_ = true;
  }

  void finish(Time end, double window_s) override {
    out_.reset();
    out_.put<uint8_t>(kFinish);
    out_.put(end);
    out_.put(window_s);
    send_all();
    for (int r = 1; r < f_.sides(); ++r) {
      receive(r);
      for (auto n = in_.get<uint64_t>(); n > 0; --n) {
        const auto s = static_cast<size_t>(in_.get<int32_t>());
        reports_.at(s) = mpi::get_switch(in_);
        for (auto& v : violations_[s]) v = mpi::get_strings(in_);
      }
      const std::string cbor = in_.get_str();
      counters_.push_back(nlohmann::json::from_cbor(cbor.begin(), cbor.end()));
      final_spans_[static_cast<size_t>(r)] = in_.get_vec<stats::SpanRecord>();
      final_counts_.add(in_.get<SwitchCounts>());
      cpu_s_ += in_.get<double>();
      busy_s_ = std::max(busy_s_, in_.get<double>());
      for (auto n = in_.get<uint64_t>(); n > 0; --n) {
        const auto wire = in_.get<int32_t>();
        const auto dir = in_.get<int32_t>();
        auto& c = links_[{wire, dir}] = in_.get<link::LinkModule::Counters>();
        c.llr = nullptr;  // (the sender's pointer: its LLR counters come with its registry)
      }
    }
    finished_ = true;
    g_finished = true;
  }
  const SwitchReport& switch_report(int s) const override { return reports_.at(s); }
  const link::LinkModule::Counters* link_counters(int wire, int dir) const override {
    const auto it = links_.find({wire, dir});
    return it == links_.end() ? nullptr : &it->second;
  }
  const std::vector<std::string>& violations(int s, int which) const override {
    return violations_.at(static_cast<size_t>(s)).at(static_cast<size_t>(which));
  }
  void merge_counters(nlohmann::json& counters) const override {
    for (const auto& c : counters_) counters.merge_patch(c);
  }
  void take_spans(std::vector<stats::SpanLog>& per_side) override {
    for (size_t s = 1; s < final_spans_.size() && s < per_side.size(); ++s)
      for (const auto& x : final_spans_[s])
        per_side[s].add(x.kind, x.device, x.port, x.cls, x.start, x.end);
  }
  uint64_t exchanges() const override { return exchanges_; }
  uint64_t bytes() const override { return bytes_; }
  double cpu_s() const override { return cpu_s_; }
  double wait_s() const override { return wait_s_; }
  double busy_s() const override { return busy_s_; }

 private:
  class Side : public RemoteSide {
   public:
    Side(MpiRemote* o, int rank) : o_(o), rank_(rank) {}
    void start_window(int64_t now, int64_t end,
                      const std::vector<ScheduledDevice>& devices) override {
      Buf& b = o_->out_;
      b.reset();
      b.put<uint8_t>(kWindow);
      b.put(now);
      b.put(end);
      b.put_vec(devices);
      o_->send_to(rank_);
    }
    void start_delivery(int64_t now, int64_t window_end,
                        const std::vector<PortMailbox*>& boxes) override {
      Buf& b = o_->out_;
      b.reset();
      b.put<uint8_t>(kDeliver);
      b.put(now);
      b.put(window_end);
      for (const PortMailbox* box : boxes) mpi::put_box(b, *box, o_->x_);
      o_->send_to(rank_);
    }
    void wait(const std::vector<PortMailbox*>& out, std::vector<ScheduledDevice>& asked) override {
      o_->receive(rank_);
      Buf& b = o_->in_;
      for (size_t t = 0; t < out.size(); ++t)
        if (static_cast<int>(t) != rank_) mpi::get_box(b, *out[t], o_->x_);
      for (const ScheduledDevice& d : b.get_vec<ScheduledDevice>()) asked.push_back(d);
      const auto spans = b.get_vec<stats::SpanRecord>();
      if (!spans.empty()) {
        stats::SpanLog& log = o_->f_.side_spans(rank_);
        for (const auto& x : spans) log.add(x.kind, x.device, x.port, x.cls, x.start, x.end);
      }
      o_->oldest_[static_cast<size_t>(rank_)] = b.get<Time>();
    }

   private:
    MpiRemote* o_;
    int rank_;
  };

  void send_to(int r) {
    send(out_, r, kTagCmd);
    ++exchanges_;
    bytes_ += out_.d.size();
  }
  void send_all() {
    for (int r = 1; r < f_.sides(); ++r) send_to(r);
  }
  void command_all(Cmd c) {
    out_.reset();
    out_.put<uint8_t>(c);
    send_all();
  }
  void receive(int r) {
    const auto t0 = std::chrono::steady_clock::now();
    recv(in_, r, kTagReply);
    wait_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++exchanges_;
    bytes_ += in_.d.size();
  }

  Fabric& f_;
  mpi::SwitchIndex x_;
  std::vector<std::unique_ptr<Side>> sides_;
  std::vector<Time> oldest_;  // per side, as it last said
  Buf out_, in_;
  uint64_t exchanges_ = 0, bytes_ = 0;
  std::vector<std::unique_ptr<RemoteOccupancy>> occ_;  // per switch (null: here)
  Time occ_at_ = Time::max();
  bool occ_stopped_ = false;
  bool finished_ = false;
  SwitchCounts final_counts_;
  double cpu_s_ = 0, wait_s_ = 0, busy_s_ = 0;
  std::vector<SwitchReport> reports_;
  std::vector<std::array<std::vector<std::string>, 3>> violations_;
  std::vector<nlohmann::json> counters_;
  std::vector<std::vector<stats::SpanRecord>> final_spans_;
  std::map<std::pair<int, int>, link::LinkModule::Counters> links_;  // (wire, dir): elsewhere
};

void RemoteOccupancy::set_occupancy_interval(Time interval) {
  if (interval == Time()) owner_->stop_occupancy();  // the writer's cap (else: set by its rank)
}

void RemoteOccupancy::take_occupancy_samples_before(Time t) {
  owner_->pull_occupancy(t);
}

// A rank other than 0, after each command of rank 0.
class Server {
 public:
  explicit Server(Fabric& f) : f_(f), d_(f.switch_scheduler()), x_(switch_index(f)) {}

  void wait_sent() { MPI_Wait(&sent_, MPI_STATUS_IGNORE); }
  // Serves one command; false after the last (kFinish).
  bool serve() {
    recv(in_, 0, kTagCmd);
    // (The previous answer was received: rank 0 answers it before any command that wants one.)
    MPI_Wait(&sent_, MPI_STATUS_IGNORE);
    const auto t0 = std::chrono::steady_clock::now();
    const bool more = serve_command();
    busy_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return more;
  }

 private:
  bool serve_command() {
    out_.reset();
    const int me = f_.my_side();
    switch (in_.get<uint8_t>()) {
      case kWindow: {
        // Test-only: this rank fails in its 10th window (a model error), as tests/mpi checks
        // that one rank's failure ends the job.
        if (++windows_ == 10 && fail_here())
          throw std::logic_error("test hook FABRICSIM_MPI_FAIL_RANK: a failure in a window");
        const auto now = in_.get<int64_t>();
        const auto end = in_.get<int64_t>();
        d_.serve_window(me, now, end, in_.get_vec<ScheduledDevice>());
        return reply_side();
      }
      case kDeliver: {
        const auto now = in_.get<int64_t>();
        const auto window_end = in_.get<int64_t>();
        for (int from = 0; from < f_.sides(); ++from) mpi::get_box(in_, d_.mail_box(me, from), x_);
        d_.serve_delivery(me, now, window_end);
        return reply_side();
      }
      case kCounts:
        out_.put(f_.local_counts());
        reply();
        return true;
      case kSample:
        f_.sample_progress(in_.get<Time>());
        return true;
      case kOpen:
        f_.open_window();
        return true;
      case kOccupancy:
        occupancy(in_.get<Time>());
        return true;
      case kOccStop:
        for (int s = 0; s < f_.switch_count(); ++s)
          if (f_.switch_here(s)) {
            auto& c = f_.switch_module(s).core();
            c.set_occupancy_interval(Time());
            c.release_occupancy(c.occupancy_pending());
          }
        return true;
      case kFinish: {
        const Time end = in_.get<Time>();
        finish(end, in_.get<double>());
        return false;
      }
      default:
        throw std::runtime_error("mpi: an unknown command from rank 0");
    }
  }

  // Sends the answer without waiting for rank 0 to take it: a large one would hold this rank in
  // MPI_Send, spinning, until rank 0 reaches its join.
  void reply() {
    MPI_Isend(out_.d.data(), static_cast<int>(out_.d.size()), MPI_BYTE, 0, kTagReply,
              MPI_COMM_WORLD, &sent_);
  }
  bool fail_here() const {
    const char* r = std::getenv("FABRICSIM_MPI_FAIL_RANK");
    return r && std::atoi(r) == f_.my_side();
  }
  bool reply_side() {
    put_side_result(out_, f_, x_);
    reply();
    return true;
  }

  void occupancy(Time t) {
    uint64_t n = 0;
    for (int s = 0; s < f_.switch_count(); ++s) n += f_.switch_here(s);
    out_.put(n);
    std::vector<int64_t> v;
    for (int s = 0; s < f_.switch_count(); ++s) {
      if (!f_.switch_here(s)) continue;
      auto& c = f_.switch_module(s).core();
      c.take_occupancy_samples_before(t);
      const size_t rows = c.occupancy_pending();
      v.assign(c.occupancy_row(0), c.occupancy_row(0) + rows * c.occupancy_row_size());
      out_.put<int32_t>(s);
      out_.put<int64_t>(c.occupancy_first());
      out_.put_vec(v);
      c.release_occupancy(rows);
    }
    reply();
  }

  // In make_report's order: the switches' reports (which close their windows), their spans,
  // counters and checks.
  void finish(Time end, double window_s) {
    std::vector<int> mine;
    for (int s = 0; s < f_.switch_count(); ++s)
      if (f_.switch_here(s)) mine.push_back(s);
    std::vector<SwitchReport> reports;
    for (int s : mine) reports.push_back(switch_report(f_, s, end, window_s));
    f_.flush_local_spans(end);
    const nlohmann::json counters = f_.local_counters(end);
    out_.put<uint64_t>(mine.size());
    for (size_t i = 0; i < mine.size(); ++i) {
      out_.put<int32_t>(mine[i]);
      mpi::put_switch(out_, reports[i]);
      for (int which = 0; which < 3; ++which)
        mpi::put_strings(out_, f_.switch_violations(mine[i], which));
    }
    const std::vector<uint8_t> cbor = nlohmann::json::to_cbor(counters);
    out_.put_str(std::string(cbor.begin(), cbor.end()));
    if (f_.config().stats.flow_events > 0)
      out_.put_vec(f_.side_spans(f_.my_side()).records());
    else
      out_.put<uint64_t>(0);
    out_.put(f_.local_counts());
    out_.put(process_cpu_s());
    out_.put(busy_s_);
    // The switch-to-switch directions this rank's switches send on (links.csv's losses).
    std::vector<std::pair<int, int>> dirs;
    for (size_t i = 0; i < f_.wires().size(); ++i) {
      const FabricWire& w = f_.wires()[i];
      if (!w.module || w.a.kind != WireEnd::Kind::kSwitch || w.b.kind != WireEnd::Kind::kSwitch)
        continue;
      for (int dir = 0; dir < 2; ++dir)
        if (f_.switch_here(dir == 0 ? w.a.index : w.b.index))
          dirs.emplace_back(static_cast<int>(i), dir);
    }
    out_.put<uint64_t>(dirs.size());
    for (const auto& [i, dir] : dirs) {
      out_.put<int32_t>(i);
      out_.put<int32_t>(dir);
      out_.put(f_.wire_counters(i, dir));
    }
    reply();
  }

  Fabric& f_;
  DeviceScheduler& d_;
  mpi::SwitchIndex x_;
  Buf in_, out_;
  uint64_t windows_ = 0;
  double busy_s_ = 0;
  MPI_Request sent_ =
      MPI_REQUEST_NULL;  // the last answer  // serving commands (not waiting for them)
};

}  // namespace

void mpi_start(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  g_started = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_mpi_world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_mpi_world.size);
  g_make_remote_fabric = [](Fabric& f) -> std::unique_ptr<RemoteFabric> {
    return std::make_unique<MpiRemote>(f);
  };
}

void mpi_end() {
  if (g_started) MPI_Finalize();
  g_started = false;
}

void mpi_abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

bool mpi_finished() {
  return g_finished;
}

int mpi_serve(const RunConfig& given) {
  try {
    // A stop signal (mpirun passes Ctrl-C on as SIGTERM to every rank) is rank 0's to act on:
    // it stops at its next step and ends the run, which ends this rank's too, with the results
    // so far written. (mpirun kills what is left after its grace time.)
    std::signal(SIGINT, SIG_IGN);
    std::signal(SIGTERM, SIG_IGN);
    std::signal(SIGHUP, SIG_IGN);
    // The hosts do not run here: no helper thread for their traffic.
    RunConfig cfg = given;
    cfg.sim.traffic_thread = false;
    sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
    Fabric& f = *new Fabric("fabric", cfg);  // (not destroyed: see run_simulation)
    // Ends the elaboration (ports bound, start_of_simulation: each switch's first request) without
    // running any process: the kernel runs on rank 0 alone.
    sc_core::sc_get_curr_simcontext()->initialize(true);
    for (int s = 0; s < f.switch_count(); ++s)
      if (f.switch_here(s))
        f.switch_module(s).core().set_occupancy_interval(cfg.stats.occupancy_interval);
    Server server(f);
    while (server.serve()) {
    }
    server.wait_sent();
    return 0;
  } catch (const InputError&) {
    // Rank 0 finds the same error in the same input and reports it; it ends the job.
    sleep(5);
    mpi_abort(2);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fabricsim: rank %d of %d: %s; ending every rank\n", g_mpi_world.rank,
                 g_mpi_world.size, e.what());
    mpi_abort(1);
  }
}

}  // namespace fabricsim::sim
