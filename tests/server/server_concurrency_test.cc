// The whole server in one process (server::Run on a thread), so that
// ThreadSanitizer sees every component at once: the scrape loops appending,
// the rule manager evaluating and writing, the HTTP API reading, and
// reloads swapping the configuration of all of them while they run.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/logger.h"
#include "server/flags.h"
#include "server/server.h"
#include "tests/server/net_testutil.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace server_concurrency_test {

using vigil::net::testing::RawExchange;
using vigil::net::testing::StatusOf;

struct Reply {
  int status = 0;
  std::string body;
};

Reply Exchange(int port, const std::string& method, const std::string& path) {
  const std::string raw =
      RawExchange(port,
                  method + " " + path +
                      " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                      "Content-Length: 0\r\n\r\n",
                  30000);
  Reply r;
  r.status = StatusOf(raw);
  const size_t end = raw.find("\r\n\r\n");
  if (end != std::string::npos) r.body = raw.substr(end + 4);
  return r;
}

// Polls `path` until its body contains `want` (or `ms` pass).
bool WaitForBody(int port, const std::string& path, const std::string& want,
                 int ms) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (Exchange(port, "GET", path).body.find(want) != std::string::npos) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::string ConfigText(int port, const std::string& rules) {
  return "global: {scrape_interval: 1s, scrape_timeout: 1s, "
         "evaluation_interval: 1s}\n"
         "rule_files: [" +
         rules +
         "]\n"
         "scrape_configs:\n"
         "- job_name: self\n"
         "  static_configs: [{targets: ['127.0.0.1:" +
         std::to_string(port) + "']}]\n";
}

const char* const kRulesA =
    "groups:\n- name: a\n  interval: 1s\n  rules:\n"
    "  - record: job:up:sum\n    expr: sum by (job) (up)\n"
    "  - alert: SelfUp\n    expr: up == 1\n";
const char* const kRulesB =
    "groups:\n- name: b\n  interval: 1s\n  rules:\n"
    "  - record: job:up:sum\n    expr: sum by (job) (up)\n"
    "  - record: job:scrape_samples:sum\n"
    "    expr: sum by (job) (scrape_samples_scraped)\n";

TEST_CASE(
    "the whole server in one process: scrapes, rules, API and reloads at "
    "once",
    "[server][concurrency]") {
  vigil::testutil::TempDir dir;
  const int port = vigil::testutil::FreePort();
  const std::string cfg = dir.Sub("prometheus.yml");
  vigil::testutil::WriteFile(dir.Sub("a.yml"), kRulesA);
  vigil::testutil::WriteFile(dir.Sub("b.yml"), kRulesB);
  vigil::testutil::WriteFile(cfg, ConfigText(port, "a.yml"));

  vigil::server::ServerFlags flags;
  flags.config_file = cfg;
  flags.storage_path = dir.Sub("data");
  flags.listen_address = "127.0.0.1:" + std::to_string(port);
  flags.enable_lifecycle = true;
  std::FILE* log_file = std::fopen(dir.Sub("vigil.log").c_str(), "w");
  REQUIRE(log_file != nullptr);
  vigil::Logger logger(log_file);
  std::atomic<int> rc{-1};
  std::thread server([&] { rc = vigil::server::Run(flags, &logger); });
  struct Joiner {
    std::thread* t;
    ~Joiner() {
      vigil::server::RequestStop();
      if (t->joinable()) t->join();
    }
  } joiner{&server};

  REQUIRE(WaitForBody(port, "/-/ready", "Ready", 30000));
  // The first scrape and rule evaluation (a sample of job:up:sum).
  REQUIRE(WaitForBody(port, "/api/v1/query?query=job:up:sum",
                      "\"job\":\"self\"", 30000));

  // Readers: every endpoint a dashboard or promtool uses, in a loop, while
  // the configuration changes under them.
  std::atomic<bool> done{false};
  std::vector<std::string> failures;
  std::mutex failures_mu;
  auto reader = [&](std::vector<std::string> paths) {
    while (!done.load()) {
      for (const auto& p : paths) {
        Reply r = Exchange(port, "GET", p);
        if (r.status != 200) {
          std::lock_guard<std::mutex> l(failures_mu);
          failures.push_back(p + " -> " + std::to_string(r.status) + " " +
                             r.body.substr(0, 200));
        }
      }
    }
  };
  std::thread r1(reader,
                 std::vector<std::string>{
                     "/api/v1/query?query=sum%28rate%28up%5B10s%5D%29%29",
                     "/api/v1/query?query=up",
                     "/api/v1/series?match%5B%5D=up",
                     "/api/v1/labels",
                     "/api/v1/label/job/values",
                     "/api/v1/targets",
                     "/api/v1/rules",
                     "/api/v1/alerts",
                 });
  const long long now = static_cast<long long>(std::time(nullptr));
  std::thread r2(reader, std::vector<std::string>{
                             "/api/v1/query_range?query=job:up:sum&start=" +
                                 std::to_string(now - 600) + "&end=" +
                                 std::to_string(now + 600) + "&step=15",
                             "/metrics",
                             "/api/v1/status/tsdb",
                             "/api/v1/status/config",
                             "/api/v1/metadata",
                             "/federate?match%5B%5D=up",
                         });

  // Reloads: the rule files swap back and forth (by /-/reload and by the
  // signal path), each left running for a few evaluations; one broken file
  // in between is refused and changes nothing.
  int posted_ok = 0;
  for (int i = 0; i < 6; ++i) {
    vigil::testutil::WriteFile(
        cfg, ConfigText(port, i % 2 == 0 ? "b.yml" : "a.yml"));
    if (i % 3 == 2) {
      vigil::server::RequestReload();
    } else {
      Reply r = Exchange(port, "POST", "/-/reload");
      INFO(r.body);
      CHECK(r.status == 200);
      if (r.status == 200) ++posted_ok;
    }
    if (i == 3) {
      vigil::testutil::WriteFile(cfg, "global: {scrape_interval: nonsense}\n");
      Reply r = Exchange(port, "POST", "/-/reload");
      CHECK(r.status == 500);
      CHECK(r.body.find("failed to reload config") != std::string::npos);
      vigil::testutil::WriteFile(cfg, ConfigText(port, "a.yml"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  }
  CHECK(posted_ok == 4);
  // Group b's second rule was evaluated while b.yml ran (i = 0, 2, 4).
  CHECK(WaitForBody(port,
                    "/api/v1/query?query=count_over_time%28"
                    "job:scrape_samples:sum%5B5m%5D%29",
                    "\"job\":\"self\"", 10000));
  done = true;
  r1.join();
  r2.join();
  {
    std::lock_guard<std::mutex> l(failures_mu);
    INFO((failures.empty() ? std::string() : failures.front()));
    CHECK(failures.empty());
  }

  // Everything kept running: the target is up, the rules are group a's,
  // and the last reload succeeded.
  CHECK(WaitForBody(port, "/api/v1/query?query=up", "\"1\"]", 10000));
  CHECK(WaitForBody(port, "/api/v1/rules", "\"name\":\"SelfUp\"", 10000));
  CHECK(Exchange(port, "GET", "/api/v1/rules")
            .body.find("job:scrape_samples:sum") == std::string::npos);
  CHECK(WaitForBody(port, "/metrics",
                    "prometheus_config_last_reload_successful 1", 10000));

  vigil::server::RequestStop();
  server.join();
  CHECK(rc.load() == 0);
  std::fclose(log_file);
}

}  // namespace server_concurrency_test
