// The retention self-metrics the pack's VigilStorageNearRetention alert
// divides by: prometheus_tsdb_retention_limit_bytes (0 without a size
// limit) and prometheus_tsdb_retention_limit_seconds, as Prometheus
// exports them, next to prometheus_tsdb_storage_blocks_bytes.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::testutil::FreePort;
using vigil::testutil::Process;
using vigil::testutil::ReadFile;
using vigil::testutil::Run;
using vigil::testutil::TempDir;

// The value of the unlabelled series `name`, or -1 when absent.
double SloValueOf(const std::string& page, const std::string& name) {
  std::istringstream in(page);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + " ", 0) == 0) {
      return std::strtod(line.c_str() + name.size() + 1, nullptr);
    }
  }
  return -1;
}

// /metrics of a Vigil started with `flags`.
std::string MetricsWith(const std::vector<std::string>& flags) {
  TempDir dir;
  std::ofstream(dir.Sub("prometheus.yml")) << "scrape_configs: []\n";
  const std::string self = "127.0.0.1:" + std::to_string(FreePort());
  std::vector<std::string> argv = {
      VIGIL_BINARY, "--config.file=" + dir.Sub("prometheus.yml"),
      "--storage.tsdb.path=" + dir.Sub("data"), "--web.listen-address=" + self};
  argv.insert(argv.end(), flags.begin(), flags.end());
  Process p(argv, dir.Sub("vigil.log"));
  REQUIRE(p.started());
  // /metrics answers before the storage metrics are registered: wait
  // for the server to be ready.
  for (int i = 0; i < 200; ++i) {
    if (ReadFile(dir.Sub("vigil.log")).find("Server is ready") !=
        std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string page = Run("curl -sf http://" + self + "/metrics").out;
  INFO(ReadFile(dir.Sub("vigil.log")));
  REQUIRE_FALSE(page.empty());
  return page;
}

}  // namespace

TEST_CASE("/metrics exports the retention limits", "[slo][server]") {
  const std::string sized = MetricsWith({"--storage.tsdb.retention.size=512MB",
                                         "--storage.tsdb.retention.time=30d"});
  INFO(sized);
  CHECK(SloValueOf(sized, "prometheus_tsdb_retention_limit_bytes") ==
        512.0 * 1024 * 1024);
  CHECK(SloValueOf(sized, "prometheus_tsdb_retention_limit_seconds") ==
        30.0 * 24 * 3600);
  CHECK(SloValueOf(sized, "prometheus_tsdb_storage_blocks_bytes") >= 0);
  CHECK(sized.find("# TYPE prometheus_tsdb_retention_limit_bytes gauge") !=
        std::string::npos);
  const std::string unlimited = MetricsWith({});
  CHECK(SloValueOf(unlimited, "prometheus_tsdb_retention_limit_bytes") == 0);
  CHECK(SloValueOf(unlimited, "prometheus_tsdb_retention_limit_seconds") ==
        15.0 * 24 * 3600);
}
