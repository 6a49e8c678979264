// The notifier's self-monitoring as Prometheus 2.42 exposes it:
// prometheus_notifications_latency_seconds, a summary by alertmanager, and
// prometheus_sd_discovered_targets{name="notify",config="config-N"}.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <fstream>
#include <string>
#include <thread>

#include "core/metrics.h"
#include "server/metrics_collectors.h"
#include "server/notifier/notifier.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil::notifier {
namespace {

// Answers every post at once, reporting `ms` as the transfer time; posts
// to a URL containing "dead" fail.
Fetcher FixedLatency(int64_t ms) {
  return
      [ms](net::FetchRequest req, std::function<void(net::FetchResult)> done) {
        net::FetchResult r;
        r.duration_ms = ms;
        if (req.url.find("dead") != std::string::npos) {
          r.error = "Post \"" + req.url + "\": connection refused";
        } else {
          r.status = 200;
        }
        done(std::move(r));
      };
}

Alert MetricsAlert(const std::string& name) {
  Alert a;
  a.labels = Labels{{"alertname", name}};
  a.starts_at = 1767225600000;
  return a;
}

TEST_CASE("notification latency is a summary per Alertmanager",
          "[notifier][metrics]") {
  NotifierOptions o;
  AlertmanagerSet s;
  s.static_configs.push_back({{"am:9093", "dead:9093"}, Labels()});
  o.alertmanagers = {s};
  auto n = Notifier::Create(o, FixedLatency(250), nullptr);
  REQUIRE(n.ok());
  (*n)->Start();
  (*n)->Send({MetricsAlert("A")});
  for (int i = 0; i < 200; ++i) {
    NotifierStats st = (*n)->Stats();
    if (st.alertmanagers.size() == 2 && st.alertmanagers[0].latency_count > 0 &&
        st.alertmanagers[1].latency_count > 0) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  (*n)->Stop();
  std::vector<metrics::FamilySnapshot> fams;
  server::NotifierCollector(n->get()).Collect(&fams);
  std::string text;
  metrics::WriteTextFormat(fams, &text);
  // Failed posts are timed too, as in Prometheus's sendAll.
  for (const char* am :
       {"http://am:9093/api/v2/alerts", "http://dead:9093/api/v2/alerts"}) {
    const std::string l = std::string("{alertmanager=\"") + am + "\"";
    INFO(text);
    CHECK(text.find("prometheus_notifications_latency_seconds" + l +
                    ",quantile=\"0.5\"} 0.25\n") != std::string::npos);
    CHECK(text.find("prometheus_notifications_latency_seconds" + l +
                    ",quantile=\"0.99\"} 0.25\n") != std::string::npos);
    CHECK(text.find("prometheus_notifications_latency_seconds_sum" + l +
                    "} 0.25\n") != std::string::npos);
    CHECK(text.find("prometheus_notifications_latency_seconds_count" + l +
                    "} 1\n") != std::string::npos);
  }
  CHECK(text.find("# HELP prometheus_notifications_latency_seconds Latency "
                  "quantiles for sending alert notifications.\n# TYPE "
                  "prometheus_notifications_latency_seconds summary\n") !=
        std::string::npos);
}

TEST_CASE("discovered Alertmanager targets are counted per set",
          "[notifier][metrics]") {
  NotifierOptions o;
  AlertmanagerSet a, b;
  a.static_configs.push_back({{"a1:9093", "a2:9093"}, Labels()});
  b.static_configs.push_back({{"b1:9093"}, Labels()});
  o.alertmanagers = {a, b};
  auto n = Notifier::Create(o, FixedLatency(1), nullptr);
  REQUIRE(n.ok());
  REQUIRE(
      (*n)->SyncTargets("config-1", {{{"b2:9093", "b3:9093"}, Labels()}}).ok());
  NotifierStats st = (*n)->Stats();
  CHECK(st.discovered_targets == std::vector<std::pair<std::string, int64_t>>{
                                     {"config-0", 2}, {"config-1", 3}});
}

TEST_CASE("vigil's /metrics shows the notify discovery and latency summary",
          "[notifier][metrics][server]") {
  if (!testutil::HaveCommand("curl")) {
    WARN("curl missing: test skipped");
    return;
  }
  testutil::TempDir dir;
  const std::string self = "127.0.0.1:" + std::to_string(testutil::FreePort());
  const std::string dead = "127.0.0.1:" + std::to_string(testutil::FreePort());
  std::ofstream(dir.Sub("rules.yml"))
      << "groups:\n- name: g\n  interval: 1s\n  rules:\n"
         "  - alert: Always\n    expr: vector(1)\n";
  std::ofstream(dir.Sub("prometheus.yml"))
      << "global: {evaluation_interval: 1s}\n"
         "rule_files: [rules.yml]\n"
         "alerting:\n  alertmanagers:\n  - timeout: 1s\n"
         "    static_configs:\n    - targets: ['"
      << dead << "', 'other.invalid:9093']\n";
  testutil::Process vigil(
      {VIGIL_BINARY, "--config.file=" + dir.Sub("prometheus.yml"),
       "--storage.tsdb.path=" + dir.Sub("data"),
       "--web.listen-address=" + self},
      dir.Sub("vigil.log"));
  const std::string count_line =
      "prometheus_notifications_latency_seconds_count{alertmanager=\"http://" +
      dead + "/api/v2/alerts\"} ";
  std::string text;
  for (int i = 0; i < 100; ++i) {
    text = testutil::Run("curl -s 'http://" + self + "/metrics'").out;
    if (text.find(count_line) != std::string::npos &&
        text.find(count_line + "0\n") == std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  INFO(testutil::ReadFile(dir.Sub("vigil.log")));
  INFO(text);
  CHECK(text.find("prometheus_sd_discovered_targets{config=\"config-0\","
                  "name=\"notify\"} 2\n") != std::string::npos);
  CHECK(text.find("# TYPE prometheus_notifications_latency_seconds "
                  "summary\n") != std::string::npos);
  CHECK(text.find("prometheus_notifications_latency_seconds{alertmanager="
                  "\"http://" +
                  dead + "/api/v2/alerts\",quantile=\"0.9\"} ") !=
        std::string::npos);
  CHECK(text.find(count_line) != std::string::npos);
  CHECK(text.find(count_line + "0\n") == std::string::npos);
}

}  // namespace
}  // namespace vigil::notifier
