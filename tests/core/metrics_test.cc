// The self-monitoring registry: client_golang's text output byte for byte,
// registration errors, concurrent updates, the process collector, and the
// page checked by `vigil check metrics` and `promtool check metrics`.
#include "core/metrics.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/subprocess.h"

namespace vigil::metrics {
namespace {

// Series sort by their label values taken in label-name order (code before
// handler), as client_golang's metricSorter does.
TEST_CASE("WriteText writes client_golang's text format", "[metrics]") {
  Registry r;
  auto requests =
      std::make_shared<Counter>(Opts{"prometheus_http_requests_total",
                                     "Counter of HTTP requests.",
                                     {"handler", "code"}});
  auto up = std::make_shared<Gauge>(
      Opts{"prometheus_config_last_reload_successful",
           "Whether the last configuration reload attempt was successful.",
           {}});
  auto dur = std::make_shared<Histogram>(
      Opts{"prometheus_http_request_duration_seconds",
           "Histogram of latencies for HTTP requests.",
           {"handler"}},
      std::vector<double>{0.1, 0.2, 0.4, 1, 3, 8});
  auto empty = std::make_shared<Counter>(
      Opts{"aaa_never_used_total", "Has children only when used.", {"x"}});
  REQUIRE(r.Register(requests).ok());
  REQUIRE(r.Register(up).ok());
  REQUIRE(r.Register(dur).ok());
  REQUIRE(r.Register(empty).ok());

  requests->WithLabelValues({"/metrics", "200"})->Inc();
  requests->WithLabelValues({"/metrics", "200"})->Inc(2);
  requests->WithLabelValues({"/api/v1/query", "400"})->Inc();
  requests->WithLabelValues({"/api/v1/query", "200"})->Inc(1e6);
  up->Set(1);
  auto* h = dur->WithLabelValues({"/api/v1/query"});
  h->Observe(0.05);
  h->Observe(0.1);  // le is inclusive
  h->Observe(2.5);
  h->Observe(100);

  std::string page;
  r.WriteText(&page);
  CHECK(page ==
        "# HELP prometheus_config_last_reload_successful Whether the last "
        "configuration reload attempt was successful.\n"
        "# TYPE prometheus_config_last_reload_successful gauge\n"
        "prometheus_config_last_reload_successful 1\n"
        "# HELP prometheus_http_request_duration_seconds Histogram of "
        "latencies for HTTP requests.\n"
        "# TYPE prometheus_http_request_duration_seconds histogram\n"
        "prometheus_http_request_duration_seconds_bucket{handler=\"/api/v1/"
        "query\",le=\"0.1\"} 2\n"
        "prometheus_http_request_duration_seconds_bucket{handler=\"/api/v1/"
        "query\",le=\"0.2\"} 2\n"
        "prometheus_http_request_duration_seconds_bucket{handler=\"/api/v1/"
        "query\",le=\"0.4\"} 2\n"
        "prometheus_http_request_duration_seconds_bucket{handler=\"/api/v1/"
        "query\",le=\"1\"} 2\n"
        "prometheus_http_request_duration_seconds_bucket{handler=\"/api/v1/"
        "query\",le=\"3\"} 3\n"
        "prometheus_http_request_duration_seconds_bucket{handler=\"/api/v1/"
        "query\",le=\"8\"} 3\n"
        "prometheus_http_request_duration_seconds_bucket{handler=\"/api/v1/"
        "query\",le=\"+Inf\"} 4\n"
        "prometheus_http_request_duration_seconds_sum{handler=\"/api/v1/"
        "query\"} 102.65\n"
        "prometheus_http_request_duration_seconds_count{handler=\"/api/v1/"
        "query\"} 4\n"
        "# HELP prometheus_http_requests_total Counter of HTTP requests.\n"
        "# TYPE prometheus_http_requests_total counter\n"
        "prometheus_http_requests_total{code=\"200\",handler=\"/api/v1/"
        "query\"} 1e+06\n"
        "prometheus_http_requests_total{code=\"200\",handler=\"/metrics\"} "
        "3\n"
        "prometheus_http_requests_total{code=\"400\",handler=\"/api/v1/"
        "query\"} 1\n");
}

TEST_CASE("Values format as Go's 'g' and HELP and label values are escaped",
          "[metrics]") {
  std::vector<FamilySnapshot> fams(1);
  fams[0].name = "x";
  fams[0].help = "back\\slash and\nnewline \"quotes\" stay";
  fams[0].type = MetricType::kGauge;
  double values[] = {0,
                     -1,
                     0.1,
                     123456789,
                     1e-7,
                     -2.5,
                     std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity()};
  int i = 0;
  for (double v : values) {
    MetricSnapshot m;
    m.labels = {{"i", std::to_string(i++)}};
    m.value = v;
    fams[0].metrics.push_back(m);
  }
  MetricSnapshot esc;
  esc.labels = {{"path", "C:\\dir \"q\"\nnext"}};
  esc.value = 1;
  fams[0].metrics.push_back(esc);
  std::string out;
  WriteTextFormat(fams, &out);
  CHECK(out ==
        "# HELP x back\\\\slash and\\nnewline \"quotes\" stay\n"
        "# TYPE x gauge\n"
        "x{i=\"0\"} 0\n"
        "x{i=\"1\"} -1\n"
        "x{i=\"2\"} 0.1\n"
        "x{i=\"3\"} 1.23456789e+08\n"
        "x{i=\"4\"} 1e-07\n"
        "x{i=\"5\"} -2.5\n"
        "x{i=\"6\"} NaN\n"
        "x{i=\"7\"} +Inf\n"
        "x{i=\"8\"} -Inf\n"
        "x{path=\"C:\\\\dir \\\"q\\\"\\nnext\"} 1\n");
}

TEST_CASE("Register rejects bad names, duplicates and le on histograms",
          "[metrics]") {
  Registry r;
  CHECK(r.Register(std::make_shared<Counter>(Opts{"1bad", "h", {}})).code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(r.Register(std::make_shared<Counter>(Opts{"ok", "h", {"bad-label"}}))
            .code() == absl::StatusCode::kInvalidArgument);
  CHECK(r.Register(std::make_shared<Counter>(Opts{"ok", "h", {"__reserved"}}))
            .code() == absl::StatusCode::kInvalidArgument);
  CHECK(r.Register(std::make_shared<Counter>(Opts{"ok", "h", {"a", "a"}}))
            .code() == absl::StatusCode::kInvalidArgument);
  auto st = r.Register(std::make_shared<Histogram>(
      Opts{"h_seconds", "h", {"le"}}, Histogram::DefaultBuckets()));
  CHECK(st.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(st.message()).find("\"le\"") != std::string::npos);

  auto a = std::make_shared<Gauge>(Opts{"dup", "h", {}});
  REQUIRE(r.Register(a).ok());
  st = r.Register(std::make_shared<Counter>(Opts{"dup", "h", {}}));
  CHECK(st.code() == absl::StatusCode::kAlreadyExists);
  CHECK(r.Unregister(a.get()));
  CHECK(r.Register(std::make_shared<Counter>(Opts{"dup", "h", {}})).ok());

  Counter c(Opts{"c_total", "h", {"a", "b"}});
  CHECK(c.WithLabelValues({"only-one"}) == nullptr);
  CHECK(c.WithLabelValues({"x", "y"}) == c.WithLabelValues({"x", "y"}));
  CHECK(c.RemoveLabelValues({"x", "y"}));
  CHECK_FALSE(c.RemoveLabelValues({"x", "y"}));
}

TEST_CASE("Counters and histograms are exact under concurrent updates",
          "[metrics][concurrency]") {
  Counter c(Opts{"c_total", "h", {}});
  Histogram h(Opts{"h_seconds", "h", {}}, {1, 2});
  Gauge g(Opts{"g", "h", {}});
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < 100000; ++i) {
        c.Inc();
        h.Observe(1.5);
        g.Inc();
        g.Dec();
      }
    });
  }
  for (auto& t : ts) t.join();
  CHECK(c.Value() == 400000);
  CHECK(g.Value() == 0);
  std::vector<FamilySnapshot> f;
  h.Collect(&f);
  REQUIRE(f[0].metrics.size() == 1);
  CHECK(f[0].metrics[0].count == 400000);
  CHECK(f[0].metrics[0].buckets[0].second == 0);
  CHECK(f[0].metrics[0].buckets[1].second == 400000);
  CHECK(f[0].metrics[0].sum == 600000);
  c.Inc(-5);  // ignored: counters only go up
  CHECK(c.Value() == 400000);
}

TEST_CASE("Callback metrics are computed at scrape time", "[metrics]") {
  Registry r;
  double series = 10;
  REQUIRE(r.Register(std::make_shared<FuncMetric>(
                         MetricType::kGauge,
                         Opts{"prometheus_tsdb_head_series",
                              "Total number of series in the head block.",
                              {},
                              {}},
                         [&] { return series; }))
              .ok());
  std::string page;
  r.WriteText(&page);
  CHECK(page.find("prometheus_tsdb_head_series 10\n") != std::string::npos);
  series = 12;
  r.WriteText(&page);
  CHECK(page.find("prometheus_tsdb_head_series 12\n") != std::string::npos);
}

TEST_CASE(
    "A snapshot collector takes one snapshot per scrape for all its families",
    "[metrics]") {
  struct Figures {
    double series = 0, bytes = 0;
  };
  int takes = 0;
  Figures now{10, 2048};
  auto c = std::make_shared<SnapshotCollector<Figures>>([&] {
    ++takes;
    return now;
  });
  c->Add(MetricType::kGauge, "store_series", "Series.",
         [](const Figures& f) { return f.series; });
  c->Add(MetricType::kCounter, "store_bytes_total", "Bytes.",
         [](const Figures& f) { return f.bytes; });
  CHECK(c->FamilyNames() ==
        std::vector<std::string>{"store_series", "store_bytes_total"});
  Registry r;
  REQUIRE(r.Register(c).ok());
  // A family of the same name elsewhere is refused, as for any collector.
  CHECK_FALSE(
      r.Register(std::make_shared<FuncMetric>(MetricType::kGauge,
                                              Opts{"store_series", "x", {}, {}},
                                              [] { return 1.0; }))
          .ok());
  std::string page;
  r.WriteText(&page);
  CHECK(takes == 1);
  CHECK(page.find("# TYPE store_series gauge\nstore_series 10\n") !=
        std::string::npos);
  CHECK(
      page.find("# TYPE store_bytes_total counter\nstore_bytes_total 2048\n") !=
      std::string::npos);
  now = {12, 4096};
  r.WriteText(&page);
  CHECK(takes == 2);
  CHECK(page.find("store_series 12\n") != std::string::npos);
  CHECK(page.find("store_bytes_total 4096\n") != std::string::npos);
}

TEST_CASE("The process collector reads /proc with client_golang's names",
          "[metrics]") {
  Registry r;
  REQUIRE(r.Register(std::make_shared<ProcessCollector>()).ok());
  std::string page;
  r.WriteText(&page);
  for (const char* want :
       {"# HELP process_cpu_seconds_total Total user and system CPU time "
        "spent in seconds.\n# TYPE process_cpu_seconds_total counter\n",
        "# TYPE process_open_fds gauge\n", "# TYPE process_max_fds gauge\n",
        "# HELP process_resident_memory_bytes Resident memory size in "
        "bytes.\n",
        "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n",
        "# HELP process_start_time_seconds Start time of the process since "
        "unix epoch in seconds.\n"}) {
    INFO(want);
    CHECK(page.find(want) != std::string::npos);
  }
  std::vector<FamilySnapshot> f;
  ProcessCollector().Collect(&f);
  for (const auto& fam : f) {
    double v = fam.metrics[0].value;
    INFO(fam.name << " = " << v);
    if (fam.name == "process_resident_memory_bytes") CHECK(v > 1e6);
    if (fam.name == "process_open_fds") CHECK(v >= 3);
    if (fam.name == "process_start_time_seconds") {
      CHECK(v > 1.6e9);
      CHECK(v <= static_cast<double>(time(nullptr)) + 1);
    }
  }
}

TEST_CASE("The page passes vigil check metrics and promtool check metrics",
          "[metrics]") {
  Registry r;
  auto c = std::make_shared<Counter>(Opts{"prometheus_http_requests_total",
                                          "Counter of HTTP requests.",
                                          {"handler", "code"}});
  REQUIRE(r.Register(c).ok());
  REQUIRE(r.Register(std::make_shared<Histogram>(
                         Opts{"prometheus_engine_query_duration_seconds",
                              "Query timings.",
                              {"slice"},
                              {}},
                         Histogram::DefaultBuckets()))
              .ok());
  REQUIRE(r.Register(std::make_shared<ProcessCollector>()).ok());
  REQUIRE(r.Register(std::make_shared<Gauge>(
                         Opts{"vigil_build_info",
                              "A metric with a constant '1' value labeled by "
                              "version.",
                              {},
                              {{"version", "0.1.0"}, {"goversion", "n/a"}}}))
              .ok());
  c->WithLabelValues({"/metrics", "200"})->Inc();
  std::string page;
  r.WriteText(&page);
  std::string path = "/tmp/vigil-metrics-test-" + std::to_string(getpid());
  std::ofstream(path) << page;
  int checked = 0;
  for (std::string bin : {std::string(VIGIL_BINARY), std::string("promtool")}) {
    if (bin != "promtool" && ::access(bin.c_str(), X_OK) != 0) {
      WARN("no " << bin << " (build the vigil target): skipped");
      continue;
    }
    auto res = testutil::Run(bin + " check metrics < " + path);
    if (bin == "promtool" && res.code == 127) {
      WARN("promtool not installed: skipped");
      continue;
    }
    INFO(bin << ": " << res.out << res.err);
    CHECK(res.code == 0);
    ++checked;
  }
  ::unlink(path.c_str());
  CHECK(checked >= 1);
}

}  // namespace
}  // namespace vigil::metrics
