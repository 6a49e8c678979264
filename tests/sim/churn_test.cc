// vigil-sim's churn mode (bench/soak_churn.sh drives it for hours): engine
// pods restart with new `pod`/`instance` labels every --churn seconds and
// the file_sd file follows; --explode adds a per-request label to the
// engine pages inside its windows. A short smoke, on free loopback ports.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::testutil::Process;
using vigil::testutil::ReadFile;
using vigil::testutil::Run;
using vigil::testutil::TempDir;

constexpr int64_t kStart = 1767268800;  // 2026-01-01 12:00 UTC

// Starts vigil-sim with `flags`; returns its control address ("" if it
// did not come up).
std::string StartSim(Process** out, TempDir* dir, const std::string& flags) {
  const std::string log = dir->Sub("log");
  std::vector<std::string> argv = {VIGIL_SIM_BINARY, "--listen=127.0.0.1:0",
                                   "--sd-file=" + dir->Sub("sd.json")};
  std::istringstream in(flags);
  for (std::string f; in >> f;) argv.push_back(f);
  *out = new Process(argv, log);
  for (int i = 0; i < 200; ++i) {
    std::smatch m;
    std::string text = ReadFile(log);
    if (std::regex_search(text, m, std::regex("control on ([0-9.:]+)")))
      return m[1];
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "";
}

void Stop(Process* p) {
  p->Signal(SIGTERM);
  if (p->Wait(3000) < 0) p->Signal(SIGKILL);
  delete p;
}

// The `pod` label of every engine group of a file_sd JSON, with its
// instance and address: "addr instance pod".
std::set<std::string> EnginePods(const std::string& json) {
  std::set<std::string> out;
  std::regex group(R"re(\{"targets":\["([^"]+)"\],"labels":\{([^}]*)\}\})re");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), group);
       it != std::sregex_iterator(); ++it) {
    std::string labels = (*it)[2];
    std::smatch pod, inst;
    if (!std::regex_search(labels, pod, std::regex(R"re("pod":"([^"]+)")re")))
      continue;
    REQUIRE(std::regex_search(labels, inst,
                              std::regex(R"re("instance":"([^"]+)")re")));
    out.insert(std::string((*it)[1]) + " " + std::string(inst[1]) + " " +
               std::string(pod[1]));
  }
  return out;
}

std::string Page(const std::string& control, int64_t t) {
  auto r = Run("curl -sf 'http://" + control +
               "/hosts/0/engine/metrics?t=" + std::to_string(t) + "'");
  REQUIRE(r.code == 0);
  return r.out;
}

std::set<std::string> RequestIds(const std::string& page) {
  std::set<std::string> ids;
  std::regex re(R"re(vllm:request_debug_tokens\{[^}]*request_id="([^"]+)")re");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), re);
       it != std::sregex_iterator(); ++it) {
    ids.insert((*it)[1]);
  }
  return ids;
}

}  // namespace

TEST_CASE("churn restarts engine pods with new pod and instance labels",
          "[sim][soak]") {
  TempDir dir;
  Process* sim = nullptr;
  // Wall clock: the file_sd file must change by itself.
  std::string control = StartSim(&sim, &dir, "--hosts=2 --churn=1s");
  REQUIRE(!control.empty());
  const std::string sd = dir.Sub("sd.json");
  const auto first = EnginePods(ReadFile(sd));
  REQUIRE(first.size() == 2);  // one engine group per host
  std::set<std::string> later;
  for (int i = 0; i < 60; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    later = EnginePods(ReadFile(sd));
    if (later.size() == 2 && later != first) break;
  }
  REQUIRE(later.size() == 2);
  CHECK(later != first);
  // Same listeners (the addresses scraped), new pod names and pod IPs.
  auto field = [](const std::string& s, int n) {
    std::istringstream in(s);
    std::string f;
    for (int i = 0; i <= n; ++i) in >> f;
    return f;
  };
  std::set<std::string> addr1, addr2, pods1, pods2;
  for (const auto& s : first)
    addr1.insert(field(s, 0)), pods1.insert(field(s, 2));
  for (const auto& s : later)
    addr2.insert(field(s, 0)), pods2.insert(field(s, 2));
  CHECK(addr1 == addr2);
  for (const auto& p : pods2) CHECK(pods1.count(p) == 0);
  // Exporters of the host (DaemonSets) keep their labels: no pod label.
  const std::string json = ReadFile(sd);
  CHECK(std::regex_search(
      json, std::regex(
                R"re("job":"dcgm-exporter","node":"gpu-node-0","variant")re")));
  Stop(sim);
}

TEST_CASE("churn generations are staggered per host and follow the clock",
          "[sim][soak]") {
  TempDir dir;
  Process* sim = nullptr;
  // At start+24 with --churn=10s: host 0 restarted at +10 and +20
  // (generation 2); host 1 of 2 is offset by 5 s: at +15 (generation 1),
  // its next restart is at +25.
  std::string control =
      StartSim(&sim, &dir,
               "--hosts=2 --churn=10s --start=" + std::to_string(kStart) +
                   " --fixed-time=" + std::to_string(kStart + 24));
  REQUIRE(!control.empty());
  auto pods = EnginePods(ReadFile(dir.Sub("sd.json")));
  REQUIRE(pods.size() == 2);
  std::string all;
  for (const auto& p : pods) all += p + "\n";
  CHECK(all.find("10.0.0.3:8000 vllm-v1-gpu-node-0-00002") !=
        std::string::npos);
  CHECK(all.find("10.0.1.2:8000 vllm-v1-gpu-node-1-00001") !=
        std::string::npos);
  Stop(sim);
}

TEST_CASE("explode adds a per-request label inside its windows only",
          "[sim][soak]") {
  TempDir dir;
  Process* sim = nullptr;
  std::string control = StartSim(
      &sim, &dir,
      "--hosts=1 --explode=50 --explode-every=60s --explode-for=20s --start=" +
          std::to_string(kStart) +
          " --fixed-time=" + std::to_string(kStart + 100));
  REQUIRE(!control.empty());
  const std::string in1 = Page(control, kStart + 1);
  const auto ids1 = RequestIds(in1);
  CHECK(ids1.size() == 50);
  // Outside the window: none; the next batch of requests: other ids.
  CHECK(RequestIds(Page(control, kStart + 30)).empty());
  const auto ids2 = RequestIds(Page(control, kStart + 61));
  CHECK(ids2.size() == 50);
  for (const auto& id : ids2) CHECK(ids1.count(id) == 0);
  // The page stays a valid exposition (lint findings only, exit 3).
  const std::string f = dir.Sub("page.txt");
  { std::ofstream(f) << in1; }
  auto r =
      Run(std::string("'") + VIGIL_BINARY + "' check metrics < '" + f + "'");
  CHECK((r.code == 0 || r.code == 3));
  Stop(sim);
}

TEST_CASE("churn flags that cannot work are refused", "[sim][soak]") {
  auto r =
      Run(std::string("'") + VIGIL_SIM_BINARY + "' --churn=10s --backfill=1h");
  CHECK(r.code == 2);
  CHECK(r.err.find("not supported with --backfill") != std::string::npos);
  r = Run(std::string("'") + VIGIL_SIM_BINARY +
          "' --explode=5 --explode-every=1m --explode-for=2m");
  CHECK(r.code == 2);
  CHECK(r.err.find("--explode-for") != std::string::npos);
  r = Run(std::string("'") + VIGIL_SIM_BINARY + "' --churn=1.5s");
  CHECK(r.code == 2);
  CHECK(r.err.find("--churn") != std::string::npos);
}
