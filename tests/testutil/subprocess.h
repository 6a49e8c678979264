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

}  // namespace vigil::testutil

#endif  // VIGIL_TESTS_TESTUTIL_SUBPROCESS_H_
