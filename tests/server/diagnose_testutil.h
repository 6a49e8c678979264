// Simulated fleets for the diagnose tests: vigil-sim writes a backfill of
// a scenario, `vigil tsdb import openmetrics` loads it into a database. The
// database is built once and kept in the temp directory, keyed by the two
// binaries and the scenario, so every test process (ctest runs each case
// as its own) shares it; a lock file serialises the first build.
#ifndef VIGIL_TESTS_SERVER_DIAGNOSE_TESTUTIL_H_
#define VIGIL_TESTS_SERVER_DIAGNOSE_TESTUTIL_H_

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "tests/testutil/subprocess.h"

namespace vigil::testutil {

struct SimFleet {
  std::string data;   // the database directory (do not write to it)
  std::string om;     // the OpenMetrics backfill, if kept
  int64_t start = 0;  // unix seconds of the first sample
  int64_t end = 0;    // of the last: the time to diagnose at
  std::string error;  // non-empty when the build failed
};

// Runs `vigil-sim <flags> --start=START --backfill=DURATION` (scenario text
// `scenario`, may be empty) and imports it; `keep_om` keeps the backfill
// file too (for other importers).
inline SimFleet BuildSimFleet(const std::string& flags,
                              const std::string& scenario, int64_t start,
                              int64_t seconds, bool keep_om = false) {
  namespace fs = std::filesystem;
  auto stamp = [](const char* p) {
    std::error_code ec;
    auto t = fs::last_write_time(p, ec);
    return std::to_string(t.time_since_epoch().count()) + ":" +
           std::to_string(fs::file_size(p, ec));
  };
  const std::string key = std::to_string(std::hash<std::string>{}(
      stamp(VIGIL_SIM_BINARY) + stamp(VIGIL_BINARY) + flags + scenario +
      std::to_string(start) + ":" + std::to_string(seconds) +
      (keep_om ? ":om" : "")));
  const fs::path dir = fs::temp_directory_path() / ("vigil-diagnose-" + key);
  SimFleet f{(dir / "data").string(), keep_om ? (dir / "h.om").string() : "",
             start, start + seconds, ""};
  const std::string lock_path = dir.string() + ".lock";
  int lock = open(lock_path.c_str(), O_CREAT | O_RDWR, 0644);
  if (lock >= 0) flock(lock, LOCK_EX);
  if (!fs::exists(dir / "ok")) {
    // Fleets of older builds: gone after a day.
    std::error_code ec;
    for (const auto& e :
         fs::directory_iterator(fs::temp_directory_path(), ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("vigil-diagnose-", 0) != 0 || e.path() == dir) continue;
      auto age = fs::file_time_type::clock::now() - e.last_write_time(ec);
      if (!ec && age > std::chrono::hours(24)) fs::remove_all(e.path(), ec);
    }
    fs::remove_all(dir, ec);
    fs::create_directories(dir);
    std::ofstream(dir / "scenario.yml") << scenario;
    const std::string om = (dir / "h.om").string();
    std::string cmd = std::string(VIGIL_SIM_BINARY) + " " + flags +
                      " --listen=127.0.0.1:0 --start=" + std::to_string(start) +
                      " --backfill=" + std::to_string(seconds) +
                      "s --backfill-file=" + om;
    if (!scenario.empty())
      cmd += " --scenario=" + (dir / "scenario.yml").string();
    RunResult r = Run(cmd);
    if (r.code == 0) {
      r = Run(std::string(VIGIL_BINARY) + " tsdb import openmetrics " + om +
              " " + f.data);
    }
    if (!keep_om) fs::remove(om, ec);
    if (r.code != 0) {
      f.error = cmd + ": " + r.err;
    } else {
      std::ofstream(dir / "ok") << "ok\n";
    }
  }
  if (lock >= 0) {
    flock(lock, LOCK_UN);
    close(lock);
  }
  return f;
}

}  // namespace vigil::testutil

#endif  // VIGIL_TESTS_SERVER_DIAGNOSE_TESTUTIL_H_
