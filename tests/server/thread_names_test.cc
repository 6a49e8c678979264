// Every long-lived thread of a running vigil names itself for its component
// (core/thread_name.h), as `top -H` and `perf` show them.
#include <dirent.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil {
namespace {

using testutil::ReadFile;
using testutil::TempDir;

// The names of the threads of process `pid`.
std::multiset<std::string> ThreadNames(pid_t pid) {
  std::multiset<std::string> names;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(dir + "/" + e->d_name + "/comm");
    std::string name;
    if (std::getline(in, name)) names.insert(name);
  }
  closedir(d);
  return names;
}

TEST_CASE("A running vigil's threads are named for their components",
          "[server][thread_name]") {
  TempDir dir;
  const int port = testutil::FreePort();
  std::ofstream(dir.Sub("rules.yml"))
      << "groups:\n- name: g\n  interval: 1s\n  rules:\n"
         "  - record: job:up:sum\n    expr: sum by (job) (up)\n";
  std::ofstream(dir.Sub("prometheus.yml"))
      << "global:\n  scrape_interval: 1s\n"
         "rule_files: ['rules.yml']\n"
         "scrape_configs:\n- job_name: self\n  static_configs:\n"
         "  - targets: ['127.0.0.1:"
      << port << "']\n";
  const std::string log = dir.Sub("vigil.log");
  testutil::Process vigil(
      {VIGIL_BINARY, "--config.file=" + dir.Sub("prometheus.yml"),
       "--storage.tsdb.path=" + dir.Sub("data"),
       "--web.listen-address=127.0.0.1:" + std::to_string(port)},
      log);
  REQUIRE(vigil.started());
  const std::set<std::string> want = {
      "vigil-http",      "vigil-accept", "vigil-http-poll", "vigil-scrape",
      "vigil-scrape-at", "vigil-curl",   "vigil-rules"};
  std::multiset<std::string> names;
  bool all = false;
  for (int waited = 0; waited < 15000 && !all; waited += 100) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    names = ThreadNames(vigil.pid());
    all = true;
    for (const std::string& n : want) all &= names.count(n) > 0;
  }
  std::string seen;
  for (const std::string& n : names) seen += n + " ";
  INFO("threads: " << seen);
  INFO("log: " << ReadFile(log));
  CHECK(all);
  // The HTTP server runs several workers, all under one name.
  CHECK(names.count("vigil-http") >= 2);
}

}  // namespace
}  // namespace vigil
