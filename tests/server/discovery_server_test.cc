// The server's file_sd: a target file that gains a target while the server
// runs (its own /metrics) gets that target scraped; a broken file at
// start-up is logged and does not stop the server (as Prometheus).
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

std::string DiscoveryQuery(const std::string& url, const std::string& q) {
  return Run("curl -s -G '" + url +
             "/api/v1/query' --data-urlencode 'query=" + q + "'")
      .out;
}

}  // namespace

TEST_CASE("a file_sd target added while the server runs is scraped",
          "[server][discovery]") {
  if (!vigil::testutil::HaveCommand("curl")) {
    WARN("curl not installed: test skipped");
    return;
  }
  TempDir dir;
  const int port = FreePort();
  const std::string self = "127.0.0.1:" + std::to_string(port);
  std::ofstream(dir.Sub("targets.json")) << "[]";
  std::ofstream(dir.Sub("broken.json")) << "[{";
  std::ofstream(dir.Sub("prometheus.yml"))
      << "global:\n  scrape_interval: 1s\n"
         "scrape_configs:\n"
         "- job_name: sd\n  file_sd_configs:\n  - files: [targets.json]\n"
         "- job_name: broken\n  file_sd_configs:\n  - files: [broken.json]\n";
  Process vigil({VIGIL_BINARY, "--config.file=" + dir.Sub("prometheus.yml"),
                 "--storage.tsdb.path=" + dir.Sub("data"),
                 "--web.listen-address=" + self},
                dir.Sub("vigil.log"));
  const std::string url = "http://" + self;
  bool ready = false;
  for (int i = 0; i < 100 && !ready; ++i) {
    ready = Run("curl -sf '" + url + "/-/ready'").code == 0;
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO(ReadFile(dir.Sub("vigil.log")));
  REQUIRE(ready);
  CHECK(DiscoveryQuery(url, "up{job=\"sd\"}").find("\"job\":\"sd\"") ==
        std::string::npos);

  std::ofstream(dir.Sub("targets.json"))
      << "[{\"targets\": [\"" << self << "\"], \"labels\": {\"env\": \"t\"}}]";
  std::string up;
  for (int i = 0; i < 100; ++i) {
    up = DiscoveryQuery(url, "up{job=\"sd\"}");
    if (up.find("\"job\":\"sd\"") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  INFO(up);
  CHECK(up.find("{\"__name__\":\"up\",\"env\":\"t\",\"instance\":\"" + self +
                "\",\"job\":\"sd\"},\"value\":[") != std::string::npos);
  CHECK(up.find(",\"1\"]") != std::string::npos);
  CHECK(ReadFile(dir.Sub("vigil.log")).find("broken.json") !=
        std::string::npos);
  vigil.Signal(SIGTERM);
  CHECK(vigil.Wait(15000) == 0);
}
