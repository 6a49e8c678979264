// Vigil next to a real Prometheus 2.42: both scrape the same fixed-content
// /metrics pages (served by python3 -m http.server) with the same config,
// and promtool's answers from both servers must agree (series sets equal,
// values equal within 1e-9 relative; timestamps ignored).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::testutil::HaveCommand;
using vigil::testutil::Process;
using vigil::testutil::ReadFile;
using vigil::testutil::Run;
using vigil::testutil::ShellQuote;
using vigil::testutil::TempDir;

using vigil::testutil::FreePort;

using vigil::testutil::WaitHttp;

// promtool's promql text output, one `metric{labels} => value @[ts]` a
// line, as labels -> value.
std::map<std::string, double> ParseInstant(const std::string& out) {
  std::map<std::string, double> r;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    auto arrow = line.find(" => ");
    if (arrow == std::string::npos) continue;
    auto at = line.find(" @[", arrow);
    std::string v =
        line.substr(arrow + 4, at == std::string::npos ? std::string::npos
                                                       : at - arrow - 4);
    double d = NAN;
    if (v == "NaN") {
      d = NAN;
    } else if (v == "+Inf") {
      d = INFINITY;
    } else if (v == "-Inf") {
      d = -INFINITY;
    } else {
      d = std::strtod(v.c_str(), nullptr);
    }
    r[line.substr(0, arrow)] = d;
  }
  return r;
}

std::set<std::string> LineSet(const std::string& out) {
  std::set<std::string> r;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) r.insert(line);
  }
  return r;
}

bool Near(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (a == b) return true;
  return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

std::string Page(const std::string& name, double c200, double c500, double temp,
                 const std::vector<double>& buckets, double sum) {
  std::ostringstream o;
  o.precision(17);
  o << "# HELP page_requests_total Requests.\n"
       "# TYPE page_requests_total counter\n"
       "page_requests_total{code=\"200\",page=\""
    << name << "\"} " << c200 << "\npage_requests_total{code=\"500\",page=\""
    << name << "\"} " << c500
    << "\n# HELP page_temperature_celsius A gauge.\n"
       "# TYPE page_temperature_celsius gauge\n"
       "page_temperature_celsius "
    << temp
    << "\n# HELP page_latency_seconds A histogram.\n"
       "# TYPE page_latency_seconds histogram\n";
  const char* les[] = {"0.1", "0.5", "1", "+Inf"};
  for (size_t i = 0; i < 4; ++i) {
    o << "page_latency_seconds_bucket{le=\"" << les[i] << "\"} " << buckets[i]
      << "\n";
  }
  o << "page_latency_seconds_sum " << sum << "\npage_latency_seconds_count "
    << buckets[3] << "\n";
  return o.str();
}

TEST_CASE("vigil and prometheus 2.42 agree on the same fixed targets",
          "[server][peers]") {
  if (!HaveCommand("prometheus") || !HaveCommand("promtool") ||
      !HaveCommand("python3") || !HaveCommand("curl")) {
    WARN("prometheus, promtool, python3 or curl not installed: test skipped");
    return;
  }
  TempDir dir;
  // Three pages: a1 and a2 in job a, b1 in job b.
  struct PageSpec {
    std::string name, job;
    double c200, c500, temp;
    std::vector<double> buckets;
    double sum;
  };
  std::vector<PageSpec> pages = {
      {"a1", "a", 1000, 7, 21.5, {10, 40, 90, 100}, 33.25},
      {"a2", "a", 250.5, 0, -3.125, {1, 2, 3, 4}, 1.5},
      {"b1", "b", 1e6, 12345, 1e-3, {0, 5, 5, 6}, 7.75},
  };
  std::vector<std::unique_ptr<Process>> servers;
  std::map<std::string, std::string> addr;
  for (const auto& p : pages) {
    std::string d = dir.Sub("www-" + p.name);
    std::filesystem::create_directories(d);
    std::ofstream(d + "/metrics")
        << Page(p.name, p.c200, p.c500, p.temp, p.buckets, p.sum);
    int port = FreePort();
    addr[p.name] = "127.0.0.1:" + std::to_string(port);
    servers.push_back(std::make_unique<Process>(
        std::vector<std::string>{"python3", "-m", "http.server",
                                 std::to_string(port), "--bind", "127.0.0.1",
                                 "--directory", d},
        dir.Sub("http-" + p.name + ".log")));
  }
  for (const auto& [n, a] : addr) {
    REQUIRE(WaitHttp("http://" + a + "/metrics"));
  }
  std::ofstream(dir.Sub("prometheus.yml"))
      << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
         "scrape_configs:\n"
         "- job_name: a\n  static_configs:\n  - targets: ['"
      << addr["a1"] << "', '" << addr["a2"]
      << "']\n"
         "- job_name: b\n  static_configs:\n  - targets: ['"
      << addr["b1"] << "']\n";

  const int vport = FreePort(), pport = FreePort();
  const std::string vurl = "http://127.0.0.1:" + std::to_string(vport);
  const std::string purl = "http://127.0.0.1:" + std::to_string(pport);
  Process vigil({VIGIL_BINARY, "--config.file=" + dir.Sub("prometheus.yml"),
                 "--storage.tsdb.path=" + dir.Sub("vdata"),
                 "--web.listen-address=127.0.0.1:" + std::to_string(vport)},
                dir.Sub("vigil.log"));
  Process prom({"prometheus", "--config.file=" + dir.Sub("prometheus.yml"),
                "--storage.tsdb.path=" + dir.Sub("pdata"),
                "--web.listen-address=127.0.0.1:" + std::to_string(pport)},
               dir.Sub("prom.log"));
  REQUIRE(WaitHttp(vurl + "/-/ready", 200));
  REQUIRE(WaitHttp(purl + "/-/ready", 200));
  std::this_thread::sleep_for(std::chrono::seconds(7));
  INFO("vigil log:\n" << ReadFile(dir.Sub("vigil.log")));

  auto instant = [&](const std::string& url, const std::string& expr) {
    auto r = Run("promtool query instant " + url + " " + ShellQuote(expr));
    INFO(url << " " << expr << ": " << r.out << r.err);
    CHECK(r.code == 0);
    return r.out;
  };
  const std::vector<std::string> exprs = {
      "up",
      "page_temperature_celsius",
      "sum by (job) (page_requests_total)",
      "count({__name__=~\"page_.+\"}) by (job)",
      "rate(page_requests_total[5s])",
      "histogram_quantile(0.9, sum by (le) (page_latency_seconds_bucket))",
      "histogram_quantile(0.5, sum by (le) (page_latency_seconds_bucket))",
      "histogram_quantile(0.75, sum by (job, le) "
      "(page_latency_seconds_bucket))",
      "sum(page_requests_total) / count(page_requests_total)",
      "histogram_quantile(0.5, sum by (job, le) "
      "(rate(page_latency_seconds_bucket[5s])))",
      "page_latency_seconds_count / page_latency_seconds_sum",
      "scrape_samples_scraped",
  };
  for (const auto& e : exprs) {
    auto vout = instant(vurl, e), pout = instant(purl, e);
    auto v = ParseInstant(vout), p = ParseInstant(pout);
    INFO(e << "\nvigil:\n" << vout << "prometheus:\n" << pout);
    CHECK(!p.empty());
    std::set<std::string> vk, pk;
    for (const auto& [k, _] : v) vk.insert(k);
    for (const auto& [k, _] : p) pk.insert(k);
    CHECK(vk == pk);
    for (const auto& [k, pv] : p) {
      auto it = v.find(k);
      if (it == v.end()) continue;
      INFO(k << " vigil=" << it->second << " prometheus=" << pv);
      CHECK(Near(it->second, pv));
    }
  }

  auto series = [&](const std::string& url) {
    auto r = Run("promtool query series " + url + " --match='{job=\"a\"}'");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    return LineSet(r.out);
  };
  auto vs = series(vurl), ps = series(purl);
  {
    // Restricted to the page's own metrics plus up: Prometheus's scrape_*
    // synthetic series are the same set, but keep the check on the pages.
    std::set<std::string> vpage, ppage;
    for (const auto& s : vs) {
      if (s.find("page_") != std::string::npos) vpage.insert(s);
    }
    for (const auto& s : ps) {
      if (s.find("page_") != std::string::npos) ppage.insert(s);
    }
    CHECK(!ppage.empty());
    CHECK(vpage == ppage);
    CHECK(vs == ps);
  }
  auto labels = [&](const std::string& url) {
    auto r = Run("promtool query labels " + url + " job");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    return LineSet(r.out);
  };
  auto vl = labels(vurl), pl = labels(purl);
  CHECK(pl == std::set<std::string>{"a", "b"});
  CHECK(vl == pl);

  vigil.Signal(SIGTERM);
  prom.Signal(SIGTERM);
  CHECK(vigil.Wait(15000) == 0);
  prom.Wait(15000);
  for (auto& s : servers) s->Signal(SIGTERM);
}

}  // namespace
