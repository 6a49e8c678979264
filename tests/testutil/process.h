// A child process running in the background (a server under test, or a
// real peer such as prometheus or alertmanager), killed at scope exit so a
// failing test never leaves it behind.
#ifndef VIGIL_TESTS_TESTUTIL_PROCESS_H_
#define VIGIL_TESTS_TESTUTIL_PROCESS_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace vigil::testutil {

// VmRSS of process `pid` in KiB, or -1 if it is gone.
inline long RssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

class Process {
 public:
  // Starts argv[0] (looked up in PATH) with its output appended to `log`.
  Process(const std::vector<std::string>& argv, const std::string& log) {
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execvp(args[0], args.data());
      _exit(127);
    }
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // VmRSS in KiB, or -1 once it has exited.
  long RssKb() const { return exited_ ? -1 : testutil::RssKb(pid_); }
  void Signal(int sig) {
    if (pid_ > 0 && !exited_) kill(pid_, sig);
  }
  // Waits up to `timeout_ms` for the process to exit; returns its exit code
  // (128+signal if killed), or -1 if it is still running.
  int Wait(int timeout_ms) {
    if (exited_) return code_;
    auto end = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(timeout_ms);
    while (true) {
      int st = 0;
      pid_t r = waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        exited_ = true;
        code_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return code_;
      }
      if (std::chrono::steady_clock::now() >= end) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int code_ = -1;
};

}  // namespace vigil::testutil

#endif  // VIGIL_TESTS_TESTUTIL_PROCESS_H_
