// Shared plumbing of the parser fuzz targets (testbenches/fuzz/, docs/fuzzing.md).
//
// The loaders under test take a path, as the simulator gives them one: the fuzz input is written to
// an anonymous in-memory file (memfd) and handed over as /proc/self/fd/N, so every iteration reads
// a real file through the same code as a run, without touching the disk.
//
// Every target is also built, without libFuzzer, into a replay program (replay_main.cpp) that runs
// the target once per file it is given: the seed corpus and every input that once crashed run as
// ordinary CTest tests in every build tree, the sanitizer one included.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fabricsim::fuzz {

// One in-memory file, rewritten with each input.
class MemFile {
 public:
  MemFile() : fd_(memfd_create("fabricsim-fuzz", 0)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  ~MemFile() { close(fd_); }

  // Replaces the file's contents by `size` bytes at `data`; returns its path.
  const std::string& write(const char* data, size_t size) {
    if (ftruncate(fd_, 0) != 0) fail("ftruncate");
    size_t done = 0;
    while (done < size) {
      const ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) fail("pwrite");
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  [[noreturn]] static void fail(const char* what) {
    std::perror(what);
    std::abort();
  }
  int fd_;
  std::string path_;
};

}  // namespace fabricsim::fuzz
