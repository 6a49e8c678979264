// The server scrapes: a real prometheus-node-exporter and its own /metrics,
// with Prometheus's target labels, reported in /api/v1/targets; a target
// that is down is reported down without disturbing the others.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::testutil::Process;
using vigil::testutil::ReadFile;
using vigil::testutil::Run;
using vigil::testutil::TempDir;

using vigil::testutil::FreePort;

std::string ScrapeQuery(const std::string& url, const std::string& q) {
  return Run("curl -s -G '" + url +
             "/api/v1/query' --data-urlencode 'query=" + q + "'")
      .out;
}

TEST_CASE("the server scrapes a real node_exporter and itself",
          "[server][scrape]") {
  if (!vigil::testutil::HaveCommand("prometheus-node-exporter") ||
      !vigil::testutil::HaveCommand("curl")) {
    WARN("prometheus-node-exporter or curl not installed: test skipped");
    return;
  }
  TempDir dir;
  const int ne_port = FreePort(), port = FreePort(), dead = FreePort();
  Process exporter(
      {"prometheus-node-exporter",
       "--web.listen-address=127.0.0.1:" + std::to_string(ne_port)},
      dir.Sub("ne.log"));
  const std::string ne = "127.0.0.1:" + std::to_string(ne_port);
  const std::string self = "127.0.0.1:" + std::to_string(port);
  std::ofstream(dir.Sub("prometheus.yml"))
      << "global:\n  scrape_interval: 1s\n  external_labels: {site: t}\n"
         "scrape_configs:\n"
         "- job_name: node\n  static_configs:\n  - targets: ['"
      << ne << "']\n    labels: {rack: r1}\n"
      << "- job_name: vigil\n  static_configs:\n  - targets: ['" << self
      << "']\n"
      << "- job_name: dead\n  static_configs:\n  - targets: ['127.0.0.1:"
      << dead << "']\n";
  Process vigil({VIGIL_BINARY, "--config.file=" + dir.Sub("prometheus.yml"),
                 "--storage.tsdb.path=" + dir.Sub("data"),
                 "--web.listen-address=" + self},
                dir.Sub("vigil.log"));
  const std::string url = "http://" + self;

  std::string up;
  for (int i = 0; i < 100; ++i) {
    up = ScrapeQuery(url, "up");
    if (up.find("\"job\":\"node\"") != std::string::npos &&
        up.find("\"job\":\"vigil\"") != std::string::npos &&
        up.find("\"job\":\"dead\"") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  INFO(ReadFile(dir.Sub("vigil.log")));
  INFO(up);
  CHECK(up.find("{\"__name__\":\"up\",\"instance\":\"" + ne +
                "\",\"job\":\"node\",\"rack\":\"r1\"},\"value\":[") !=
        std::string::npos);
  auto node =
      ScrapeQuery(url, "node_cpu_seconds_total{job=\"node\",mode=\"idle\"}");
  CHECK(node.find("\"instance\":\"" + ne + "\"") != std::string::npos);
  CHECK(node.find("\"rack\":\"r1\"") != std::string::npos);
  auto self_series =
      ScrapeQuery(url, "prometheus_tsdb_head_series{job=\"vigil\"}");
  CHECK(self_series.find("\"instance\":\"" + self + "\"") != std::string::npos);
  auto down = ScrapeQuery(url, "up{job=\"dead\"}");
  CHECK(down.find(",\"0\"]") != std::string::npos);
  auto samples = ScrapeQuery(url, "scrape_samples_scraped{job=\"node\"} > 100");
  CHECK(samples.find("\"job\":\"node\"") != std::string::npos);

  auto targets = Run("curl -s '" + url + "/api/v1/targets'").out;
  INFO(targets);
  CHECK(targets.find("\"scrapeUrl\":\"http://" + ne + "/metrics\"") !=
        std::string::npos);
  CHECK(targets.find("\"health\":\"up\"") != std::string::npos);
  CHECK(targets.find("\"health\":\"down\"") != std::string::npos);
  CHECK(targets.find("connection refused") != std::string::npos);
  vigil.Signal(SIGTERM);
  CHECK(vigil.Wait(15000) == 0);
}

}  // namespace
