// The scrape and notifier components feed from the discovery manager:
// file_sd and dns_sd targets show up (with the static ones kept) and follow
// the file.
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "server/config/config.h"
#include "server/flags.h"
#include "server/net/http_client.h"
#include "server/notifier_component.h"
#include "server/scrape_component.h"
#include "tests/server/scrape_testutil.h"
#include "tests/testutil/tempdir.h"

namespace {

bool ComponentsWaitFor(const std::function<bool()>& f, int ms = 5000) {
  for (int i = 0; i < ms / 20; ++i) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return f();
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("alertmanagers from static, file_sd and dns_sd configs",
          "[discovery]") {
  vigil::testutil::TempDir dir;
  std::ofstream(dir.Sub("am.json")) << R"([{"targets": ["10.0.0.1:9093"]}])";
  std::ofstream(dir.Sub("prometheus.yml"))
      << "alerting:\n  alertmanagers:\n"
         "  - static_configs:\n    - targets: ['10.0.0.9:9093']\n"
         "    file_sd_configs:\n    - files: [am.json]\n"
         "    dns_sd_configs:\n    - names: [localhost]\n      type: A\n"
         "      port: 9094\n";
  auto cfg = vigil::config::LoadConfigFile(dir.Sub("prometheus.yml"));
  REQUIRE(cfg.ok());
  vigil::server::LoadedConfig loaded{dir.Sub("prometheus.yml"), *cfg};
  vigil::server::ServerFlags flags;
  auto c = vigil::server::NotifierComponent::Create(flags, nullptr, nullptr);
  REQUIRE(c.ok());
  auto commit = (*c)->Prepare(loaded);
  REQUIRE(commit.ok());
  (*commit)();
  (*c)->Start();
  const std::string file = "http://10.0.0.1:9093/api/v2/alerts";
  const std::string stat = "http://10.0.0.9:9093/api/v2/alerts";
  const std::string dns = "http://127.0.0.1:9094/api/v2/alerts";
  CHECK(ComponentsWaitFor([&] {
    auto a = (*c)->ActiveAlertmanagers();
    return Has(a, file) && Has(a, stat) && Has(a, dns);
  }));
  std::ofstream(dir.Sub("am.json")) << R"([{"targets": ["10.0.0.2:9093"]}])";
  CHECK(ComponentsWaitFor([&] {
    auto a = (*c)->ActiveAlertmanagers();
    return !Has(a, file) && Has(a, "http://10.0.0.2:9093/api/v2/alerts") &&
           Has(a, stat) && Has(a, dns);
  }));
  (*c)->Stop();
}

TEST_CASE("scrape targets from static, file_sd and dns_sd configs",
          "[discovery]") {
  vigil::testutil::TempDir dir;
  std::ofstream(dir.Sub("t.yml")) << "- targets: ['127.0.0.1:2']\n";
  std::ofstream(dir.Sub("prometheus.yml"))
      << "scrape_configs:\n- job_name: j\n"
         "  static_configs:\n  - targets: ['127.0.0.1:1']\n"
         "  file_sd_configs:\n  - files: [t.yml]\n"
         "  dns_sd_configs:\n  - names: [localhost]\n    type: A\n"
         "    port: 3\n";
  auto cfg = vigil::config::LoadConfigFile(dir.Sub("prometheus.yml"));
  REQUIRE(cfg.ok());
  vigil::server::LoadedConfig loaded{dir.Sub("prometheus.yml"), *cfg};
  vigil::server::ServerFlags flags;
  vigil::scrape::testing::TestDB db;
  vigil::net::HttpClient client;
  vigil::server::ScrapeComponent c(flags, db.app.get(), &client, nullptr);
  auto commit = c.Prepare(loaded);
  REQUIRE(commit.ok());
  (*commit)();
  // Not started: no scrapes, but discovery runs once started.
  auto addrs = [&] {
    std::vector<std::string> out;
    for (const auto& t : c.ActiveTargets()) {
      out.emplace_back(t.labels.Get("instance"));
    }
    return out;
  };
  CHECK(Has(addrs(), "127.0.0.1:1"));
  c.Start();
  CHECK(ComponentsWaitFor([&] {
    auto a = addrs();
    return Has(a, "127.0.0.1:2") && Has(a, "127.0.0.1:1") &&
           Has(a, "127.0.0.1:3");
  }));
  c.Stop();
}
