// The server sends its alerts to a real Alertmanager (Debian's
// prometheus-alertmanager) and they resolve there; a dead Alertmanager
// beside it does not hold up rule evaluation.
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

// Polls `cmd`'s stdout until `pred` holds or `timeout_ms` passes.
template <typename Pred>
std::string WaitForOutput(const std::string& cmd, Pred pred, int timeout_ms) {
  std::string out;
  for (int waited = 0; waited < timeout_ms; waited += 200) {
    out = Run(cmd).out;
    if (pred(out)) return out;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return out;
}

TEST_CASE("the server's alerts reach a real Alertmanager and resolve",
          "[server][alertmanager]") {
  if (!vigil::testutil::HaveCommand("prometheus-alertmanager") ||
      !vigil::testutil::HaveCommand("curl")) {
    WARN("prometheus-alertmanager or curl not installed: test skipped");
    return;
  }
  TempDir dir;
  const int am_port = FreePort(), dead_port = FreePort(), port = FreePort();
  std::ofstream(dir.Sub("am.yml"))
      << "route: {receiver: x, group_wait: 1s}\nreceivers: [{name: x}]\n";
  Process am({"prometheus-alertmanager", "--config.file=" + dir.Sub("am.yml"),
              "--storage.path=" + dir.Sub("am"),
              "--web.listen-address=127.0.0.1:" + std::to_string(am_port),
              "--cluster.listen-address="},
             dir.Sub("am.log"));
  const std::string am_url = "http://127.0.0.1:" + std::to_string(am_port);
  REQUIRE(WaitForOutput(
              "curl -s " + am_url + "/-/ready",
              [](const std::string& o) { return o.find("OK") == 0; }, 15000)
              .find("OK") == 0);

  std::ofstream(dir.Sub("prometheus.yml"))
      << "global:\n  evaluation_interval: 1s\n  external_labels: {site: t}\n"
         "rule_files: [rules.yml]\nalerting:\n  alertmanagers:\n"
         "  - timeout: 5s\n    static_configs:\n"
         "    - targets: ['127.0.0.1:"
      << dead_port << "', '127.0.0.1:" << am_port << "']\n";
  const std::string rules = dir.Sub("rules.yml");
  std::ofstream(rules) << "groups:\n- name: g\n  rules:\n"
                          "  - alert: GpuHot\n    expr: vector(95) > 90\n"
                          "    labels: {severity: page}\n"
                          "    annotations: {summary: 'at {{ $value }}'}\n"
                          "  - record: vigil_test:tick\n    expr: time()\n";
  Process vigil({VIGIL_BINARY, "--config.file=" + dir.Sub("prometheus.yml"),
                 "--storage.tsdb.path=" + dir.Sub("data"),
                 "--web.listen-address=127.0.0.1:" + std::to_string(port),
                 "--web.external-url=http://vigil.example:9090",
                 "--rules.alert.resend-delay=1s", "--web.enable-lifecycle"},
                dir.Sub("vigil.log"));
  const std::string url = "http://127.0.0.1:" + std::to_string(port);

  std::string alerts = WaitForOutput(
      "curl -s " + am_url + "/api/v2/alerts",
      [](const std::string& o) {
        return o.find("\"alertname\":\"GpuHot\"") != std::string::npos;
      },
      20000);
  INFO(ReadFile(dir.Sub("vigil.log")));
  INFO(alerts);
  REQUIRE(alerts.find("\"alertname\":\"GpuHot\"") != std::string::npos);
  CHECK(alerts.find("\"site\":\"t\"") != std::string::npos);
  CHECK(alerts.find("\"severity\":\"page\"") != std::string::npos);
  CHECK(alerts.find("\"summary\":\"at 95\"") != std::string::npos);
  CHECK(alerts.find("http://vigil.example:9090/graph?g0.expr=") !=
        std::string::npos);
  CHECK(Run("curl -s " + url + "/api/v1/alertmanagers")
            .out.find(am_url + "/api/v2/alerts") != std::string::npos);

  // The dead Alertmanager (connection refused, retried every cycle) does
  // not hold up evaluation: the tick keeps advancing every second.
  auto tick = [&] {
    return Run("curl -s '" + url + "/api/v1/query?query=vigil_test:tick'").out;
  };
  std::string t1 = tick();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  std::string t2 = tick();
  CHECK(t1 != t2);

  // The alert stops: it resolves in the Alertmanager.
  std::ofstream(rules) << "groups:\n- name: g\n  rules:\n"
                          "  - alert: GpuHot\n    expr: vector(95) > 99\n"
                          "    labels: {severity: page}\n"
                          "    annotations: {summary: 'at {{ $value }}'}\n";
  REQUIRE(Run("curl -s -X POST " + url + "/-/reload").code == 0);
  std::string after = WaitForOutput(
      "curl -s '" + am_url + "/api/v2/alerts?active=true'",
      [](const std::string& o) {
        return o.find("\"alertname\":\"GpuHot\"") == std::string::npos;
      },
      20000);
  CHECK(after.find("\"alertname\":\"GpuHot\"") == std::string::npos);
  vigil.Signal(SIGTERM);
  CHECK(vigil.Wait(15000) == 0);
}

}  // namespace
