// Runs a shell command and captures its exit code, stdout and stderr.
#ifndef VIGIL_TESTS_TESTUTIL_SUBPROCESS_H_
#define VIGIL_TESTS_TESTUTIL_SUBPROCESS_H_

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace vigil::testutil {

struct RunResult {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline RunResult Run(const std::string& cmd) {
  static int counter = 0;
  auto base = std::filesystem::temp_directory_path() /
              ("vigil-run-" + std::to_string(getpid()) + "-" +
               std::to_string(counter++));
  std::string out = base.string() + ".out", err = base.string() + ".err";
  int st = std::system((cmd + " >'" + out + "' 2>'" + err + "'").c_str());
  RunResult r;
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

// Polls `url` with curl until it answers 2xx; false after `tries` * 100 ms.
inline bool WaitHttp(const std::string& url, int tries = 100) {
  for (int i = 0; i < tries; ++i) {
    if (Run("curl -sf -o /dev/null '" + url + "'").code == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

inline bool HaveCommand(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

// `s` single-quoted for a shell command line.
inline std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Polls the file `log` every 50 ms until it contains `needle`; false after
// `timeout_ms`.
inline bool WaitForLog(const std::string& log, const std::string& needle,
                       int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 50) {
    if (ReadFile(log).find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

#ifdef VIGIL_BINARY
// The vigil binary under test, single-quoted for a shell command line.
inline const std::string kVigil = std::string("'") + VIGIL_BINARY + "'";
#endif

}  // namespace vigil::testutil

#endif  // VIGIL_TESTS_TESTUTIL_SUBPROCESS_H_
