// The server's self-monitoring at /metrics: the scrape, rule and notifier
// families under Prometheus's names, with values that follow what the
// server did, on a page `promtool check metrics` accepts.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

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

using vigil::testutil::Process;
using vigil::testutil::ReadFile;
using vigil::testutil::TempDir;
using vigil::testutil::WaitForLog;

using vigil::testutil::FreePort;

// The value of the series written exactly as `series` ("name{labels}"), or
// -1 when the page has no such line.
double ValueOf(const std::string& page, const std::string& series) {
  std::istringstream in(page);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > series.size() &&
        line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::strtod(line.c_str() + series.size() + 1, nullptr);
    }
  }
  return -1;
}

TEST_CASE("/metrics shows scrape, rule and notifier self-monitoring",
          "[server][metrics]") {
  TempDir dir;
  const std::string cfg = dir.Sub("prometheus.yml");
  const std::string log = dir.Sub("vigil.log");
  const int port = FreePort();
  const int dead = FreePort();  // an Alertmanager nothing listens on
  const std::string self = "127.0.0.1:" + std::to_string(port);
  std::ofstream(cfg)
      << "global: {evaluation_interval: 1s, scrape_interval: 1s}\n"
         "rule_files: [rules.yml]\n"
         "alerting:\n  alertmanagers:\n"
         "  - static_configs: [{targets: ['127.0.0.1:"
      << dead
      << "']}]\n"
         "scrape_configs:\n"
         "- job_name: self\n  static_configs: [{targets: ['"
      << self
      << "']}]\n"
         "- job_name: none\n  static_configs: [{targets: ['"
      << self
      << "']}]\n  relabel_configs: [{action: drop, regex: '.*',"
         " source_labels: [__address__]}]\n";
  // The second rule fails once the self-scrape has written `up` and
  // `scrape_duration_seconds` (same labels once renamed).
  std::ofstream(dir.Sub("rules.yml"))
      << "groups:\n- name: g\n  rules:\n"
         "  - record: vigil_test:one\n    expr: vector(1)\n"
         "  - record: vigil_test:dup\n"
         "    expr: '{__name__=~\"up|scrape_duration_seconds\"}'\n"
         "  - alert: Always\n    expr: vector(1)\n";
  Process p({VIGIL_BINARY, "--config.file=" + cfg,
             "--storage.tsdb.path=" + dir.Sub("data"),
             "--web.listen-address=" + self},
            log);
  REQUIRE(p.started());
  REQUIRE(WaitForLog(log, "Server is ready", 10000));

  CHECK(vigil::testutil::Run("curl -s 'http://" + self +
                             "/api/v1/query?query=vector(1)'")
            .out.find("success") != std::string::npos);

  // Wait for a few scrapes, rule evaluations and a failed notification.
  std::string page;
  const std::string group = "{rule_group=\"" + dir.Sub("rules.yml") + ";g\"}";
  const std::string am =
      "{alertmanager=\"http://127.0.0.1:" + std::to_string(dead) +
      "/api/v2/alerts\"}";
  for (int i = 0; i < 100; ++i) {
    page = vigil::testutil::Run("curl -s http://" + self + "/metrics").out;
    if (ValueOf(page,
                "prometheus_target_interval_length_seconds_count"
                "{interval=\"1s\"}") >= 2 &&
        ValueOf(page, "prometheus_rule_evaluation_failures_total" + group) >=
            1 &&
        ValueOf(page, "prometheus_notifications_errors_total" + am) >= 1) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  INFO(page);

  // Scrape.
  CHECK(ValueOf(page,
                "prometheus_target_interval_length_seconds_count"
                "{interval=\"1s\"}") >= 2);
  CHECK(ValueOf(page,
                "prometheus_target_interval_length_seconds_bucket"
                "{interval=\"1s\",le=\"+Inf\"}") >= 2);
  CHECK(ValueOf(page, "prometheus_target_scrapes_sample_out_of_order_total") ==
        0);
  CHECK(ValueOf(page,
                "prometheus_target_scrapes_exceeded_sample_limit_total") == 0);
  CHECK(ValueOf(page, "prometheus_target_scrape_pools_total") == 2);
  CHECK(ValueOf(page,
                "prometheus_target_scrape_pool_targets"
                "{scrape_job=\"self\"}") == 1);
  CHECK(ValueOf(page,
                "prometheus_target_scrape_pool_targets"
                "{scrape_job=\"none\"}") == 0);
  CHECK(ValueOf(page,
                "prometheus_sd_discovered_targets"
                "{config=\"self\",name=\"scrape\"}") == 1);
  CHECK(ValueOf(page,
                "prometheus_sd_discovered_targets"
                "{config=\"none\",name=\"scrape\"}") == 1);
  CHECK(page.find("# TYPE prometheus_target_interval_length_seconds "
                  "histogram\n") != std::string::npos);

  // Rules.
  const double evals =
      ValueOf(page, "prometheus_rule_evaluations_total" + group);
  const double fails =
      ValueOf(page, "prometheus_rule_evaluation_failures_total" + group);
  CHECK(evals >= 3);
  CHECK(fails >= 1);
  CHECK(fails < evals);
  CHECK(ValueOf(page,
                "prometheus_rule_group_iterations_missed_total" + group) == 0);
  CHECK(ValueOf(page, "prometheus_rule_group_interval_seconds" + group) == 1);
  CHECK(ValueOf(page, "prometheus_rule_group_rules" + group) == 3);
  const double last =
      ValueOf(page, "prometheus_rule_group_last_duration_seconds" + group);
  CHECK(last >= 0);
  CHECK(last < 1);

  // Notifier.
  CHECK(ValueOf(page, "prometheus_notifications_sent_total" + am) >= 1);
  CHECK(ValueOf(page, "prometheus_notifications_errors_total" + am) >= 1);
  CHECK(ValueOf(page, "prometheus_notifications_dropped_total") >= 1);
  CHECK(ValueOf(page, "prometheus_notifications_queue_length") >= 0);
  CHECK(ValueOf(page, "prometheus_notifications_queue_capacity") == 10000);
  CHECK(ValueOf(page, "prometheus_notifications_alertmanagers_discovered") ==
        1);

  // Engine: the query above (one, finished).
  CHECK(ValueOf(page,
                "prometheus_engine_query_duration_seconds_count"
                "{slice=\"inner_eval\"}") >= 1);
  CHECK(ValueOf(page, "prometheus_engine_queries") == 0);

  // The whole page passes promtool's lint.
  if (std::system("command -v promtool >/dev/null 2>&1") == 0) {
    const std::string file = dir.Sub("metrics.txt");
    std::ofstream(file, std::ios::binary) << page;
    auto r = vigil::testutil::Run("promtool check metrics < " + file + " 2>&1");
    INFO(r.out);
    CHECK(r.code == 0);
  }
  p.Signal(SIGTERM);
  CHECK(p.Wait(10000) == 0);
}

}  // namespace
