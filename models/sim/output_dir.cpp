#include "models/sim/output_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

namespace fabricsim::sim {

namespace fs = std::filesystem;

namespace {

std::string errno_text(int e) {
  return std::strerror(e);
}

// The pid a lock holder wrote into its lock file ("" if it has not written it yet).
std::string holder_pid(int fd) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    char buf[32] = {};
    const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    std::string s(buf, n > 0 ? static_cast<size_t>(n) : 0);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    if (!s.empty()) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // it writes it right after locking
  }
  return "";
}

// Whether `inner` is `outer` or lies inside it (paths absolute and normalised).
bool inside(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // a trailing separator
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

}  // namespace

bool is_result_file(const std::string& name) {
  static const char* const kNames[] = {"summary.json", "perf.json",     "ports.csv",
                                       "links.csv",    "occupancy.csv", "flow_events.csv",
                                       "fct.csv",      "qp_rates.csv",  "collectives.csv",
                                       "ranks.csv",    "steps.csv",     "energy.csv",
                                       ".fabricsim-write-test"};
  for (const char* n : kNames)
    if (name == n) return true;
  // Left by a run that was killed while it wrote in place (before result sets were published).
  return name.size() > 5 && name.compare(name.size() - 5, 5, ".part") == 0;
}

OutputDir::OutputDir(const std::string& dir) : dir_(dir) {
  if (dir.empty()) throw std::runtime_error("no output directory given (the path is empty)");
  std::error_code ec;
  fs::path t = fs::absolute(dir, ec).lexically_normal();
  if (ec) throw std::runtime_error("cannot use output directory " + dir + ": " + ec.message());
  if (!t.has_filename()) t = t.parent_path();  // "out/x/"
  // A symbolic link to a folder: the run replaces the folder it names, not the link.
  const fs::file_status link = fs::symlink_status(t, ec);
  ec.clear();  // (set when nothing is there yet)
  if (fs::is_symlink(link)) t = fs::canonical(t, ec);
  if (ec || t == t.root_path() || t.filename() == "..")
    throw std::runtime_error("cannot use output directory " + dir +
                             ": give a folder of its own (its result files are replaced as a set)");
  const fs::path cwd = fs::current_path(ec);
  if (!ec && inside(fs::weakly_canonical(cwd, ec), fs::weakly_canonical(t, ec)))
    throw std::runtime_error("cannot use output directory " + dir +
                             ": it is the current directory or one above it, and a run replaces "
                             "its output folder as a whole; give a folder of its own");
  target_ = t.string();
  const fs::path parent = t.parent_path();
  const std::string name = t.filename().string();
  fs::create_directories(parent, ec);
  if (ec)
    throw std::runtime_error("cannot create output directory " + dir + ": " + ec.message() + " (" +
                             parent.string() + ")");
  const auto st = fs::status(t, ec);
  ec.clear();
  had_previous_ = fs::exists(st);
  if (had_previous_ && !fs::is_directory(st))
    throw std::runtime_error("cannot create output directory " + dir +
                             ": it exists and is not a directory");

  // The lock: a file beside the folder (the folder itself is replaced when the run publishes).
  // It is removed when the run ends, while still held; a run that took it as it was removed finds
  // the path gone or another file there, and takes the new one.
  lock_ = (parent / ("." + name + ".lock")).string();
  for (;;) {
    const int fd = open(lock_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      throw std::runtime_error("cannot create output directory " + dir + ": cannot create " +
                               lock_ + ": " + errno_text(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      const std::string pid = e == EWOULDBLOCK ? holder_pid(fd) : "";
      close(fd);
      if (e == EWOULDBLOCK)
        throw std::runtime_error(dir + " is in use by another run (" +
                                 (pid.empty() ? std::string("a process") : "pid " + pid) +
                                 " holds " + lock_ +
                                 "); wait for it to end or choose another --out");
      throw std::runtime_error("cannot lock " + lock_ + ": " + errno_text(e));
    }
    struct stat held {
    }, now{};
    if (fstat(fd, &held) == 0 && stat(lock_.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
        held.st_ino == now.st_ino) {
      lock_fd_ = fd;
      break;
    }
    close(fd);
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(lock_fd_, 0) != 0 ||
      pwrite(lock_fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // Only the message of a second run loses the pid; the lock holds.
  }

  // The private folder (a killed run may have left one: this run holds the lock now).
  staging_ = (parent / ("." + name + ".new")).string();
  fs::remove_all(staging_, ec);
  if (!fs::create_directory(staging_, ec) || ec) {
    const std::string why = ec ? ec.message() : "it exists";
    unlink(lock_.c_str());
    close(lock_fd_);
    throw std::runtime_error("cannot write into " + parent.string() + " (beside output directory " +
                             dir + "): " + why);
  }
  // A folder that exists may still refuse changes (permissions, a read-only file system): the
  // files of its own that are not results are moved out of it when the run publishes.
  if (had_previous_) {
    const fs::path probe = t / ".fabricsim-write-test";
    const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int e = errno;
      fs::remove_all(staging_, ec);
      unlink(lock_.c_str());
      close(lock_fd_);
      throw std::runtime_error("cannot write into output directory " + dir + ": " + errno_text(e));
    }
    close(fd);
    unlink(probe.c_str());
  }
}

OutputDir::~OutputDir() {
  std::error_code ec;
  if (!published_) fs::remove_all(staging_, ec);
  unlink(lock_.c_str());  // while held (see the constructor)
  close(lock_fd_);
}

uint64_t OutputDir::free_bytes() const {
  // Test-only: the free space a test cannot make (a small file system needs root).
  if (const char* f = std::getenv("FABRICSIM_TEST_FREE_BYTES"))
    return std::strtoull(f, nullptr, 10);
  struct statvfs s {};
  if (statvfs(staging_.c_str(), &s) != 0) return UINT64_MAX;  // unknown: the writes will tell
  return static_cast<uint64_t>(s.f_bavail) * static_cast<uint64_t>(s.f_frsize);
}

void OutputDir::publish() {
  if (published_) throw std::logic_error("OutputDir::publish called twice");
  std::error_code ec;
  if (!fs::exists(target_, ec)) {
    if (rename(staging_.c_str(), target_.c_str()) != 0)
      throw std::runtime_error("cannot create " + dir_ + ": " + errno_text(errno));
    published_ = true;
    return;
  }
  // What else the folder holds stays in it: moved into the new set's folder first.
  std::vector<std::string> moved;
  const auto put_back = [&] {
    for (const auto& n : moved)
      rename((fs::path(staging_) / n).c_str(), (fs::path(target_) / n).c_str());
  };
  for (const auto& e : fs::directory_iterator(target_, ec)) {
    const std::string n = e.path().filename().string();
    // A result file, or a file the new set has too (it supersedes the old one, whatever it is).
    std::error_code there;
    if (is_result_file(n) || fs::exists(fs::path(staging_) / n, there)) continue;
    if (rename(e.path().c_str(), (fs::path(staging_) / n).c_str()) != 0) {
      const int err = errno;
      put_back();
      throw std::runtime_error("cannot move " + e.path().string() +
                               " into the new result set: " + errno_text(err));
    }
    moved.push_back(n);
  }
  if (ec) {
    put_back();
    throw std::runtime_error("cannot list " + dir_ + ": " + ec.message());
  }
  std::string old = staging_;  // where the previous set ends up
  if (renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) != 0) {
    const int err = errno;
    if (err != EINVAL && err != ENOSYS && err != ENOTSUP) {
      put_back();
      throw std::runtime_error("cannot replace " + dir_ + ": " + errno_text(err));
    }
    // No atomic exchange on this file system: the old set goes aside, then the new one in.
    old = staging_ + ".old";
    fs::remove_all(old, ec);
    if (rename(target_.c_str(), old.c_str()) != 0) {
      const int e2 = errno;
      put_back();
      throw std::runtime_error("cannot replace " + dir_ + ": " + errno_text(e2));
    }
    if (rename(staging_.c_str(), target_.c_str()) != 0) {
      const int e2 = errno;
      rename(old.c_str(), target_.c_str());
      put_back();
      throw std::runtime_error("cannot replace " + dir_ + ": " + errno_text(e2));
    }
  }
  published_ = true;
  fs::remove_all(old, ec);  // the previous set (its result files only)
}

}  // namespace fabricsim::sim
