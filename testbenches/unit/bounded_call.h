// For tests of inputs that once hung a reader or exhausted memory: the call runs in a child
// process under a deadline and a memory cap, so that a regression fails the test at once instead
// of hanging the suite or the machine.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FABRICSIM_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FABRICSIM_TEST_ASAN 1
#endif

namespace fabricsim::test {

// f() run in a child process: what it returned, "(threw)" if it threw (std::bad_alloc at the memory
// cap included), or "(hung)" when it had not returned within `seconds` (the child is then killed).
inline std::string within(int seconds, const std::function<std::string()>& f) {
  int fds[2];
  if (pipe(fds) != 0) return "(pipe failed)";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
#ifndef FABRICSIM_TEST_ASAN  // (ASan reserves terabytes of address space up front)
    // A runaway loop allocates as it goes (yaml-cpp's LoadAll a GB a second): stop it at 2 GiB,
    // not at the machine's memory.
    const rlimit as{rlim_t{2} << 30, rlim_t{2} << 30};
    setrlimit(RLIMIT_AS, &as);
#endif
    std::string out;
    try {
      out = f();
    } catch (...) {
      out = "(threw)";
    }
    for (size_t done = 0; done < out.size();) {
      const ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fds[0], POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      kill(pid, SIGKILL);
      out = "(hung)";
      break;
    }
    char buf[4096];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;  // the child is done
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  return out;
}

}  // namespace fabricsim::test
