// metrics::Summary: client_golang's summary exposition (quantile series,
// _sum, _count), quantiles over a sliding window that ages out in steps,
// NaN for an empty window, and "quantile" reserved as a label name.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>

#include "core/metrics.h"

namespace vigil::metrics {
namespace {

using Clock = SummaryChild::Clock;
using std::chrono::minutes;
using std::chrono::seconds;

TEST_CASE("a summary is written as client_golang writes one", "[metrics]") {
  Registry reg;
  auto s = std::make_shared<Summary>(
      Opts{"rpc_latency_seconds", "RPC latency.", {"peer"}, {}},
      std::vector<double>{0.99, 0.5, 0.9});
  REQUIRE(reg.Register(s).ok());
  SummaryChild* a = s->WithLabelValues({"a"});
  for (int i = 1; i <= 100; ++i) a->Observe(i / 100.0);
  s->WithLabelValues({"b"});  // nothing observed yet
  std::string text;
  reg.WriteText(&text);
  CHECK(text ==
        "# HELP rpc_latency_seconds RPC latency.\n"
        "# TYPE rpc_latency_seconds summary\n"
        "rpc_latency_seconds{peer=\"a\",quantile=\"0.5\"} 0.5\n"
        "rpc_latency_seconds{peer=\"a\",quantile=\"0.9\"} 0.9\n"
        "rpc_latency_seconds{peer=\"a\",quantile=\"0.99\"} 0.99\n"
        "rpc_latency_seconds_sum{peer=\"a\"} 50.5\n"
        "rpc_latency_seconds_count{peer=\"a\"} 100\n"
        "rpc_latency_seconds{peer=\"b\",quantile=\"0.5\"} NaN\n"
        "rpc_latency_seconds{peer=\"b\",quantile=\"0.9\"} NaN\n"
        "rpc_latency_seconds{peer=\"b\",quantile=\"0.99\"} NaN\n"
        "rpc_latency_seconds_sum{peer=\"b\"} 0\n"
        "rpc_latency_seconds_count{peer=\"b\"} 0\n");
}

TEST_CASE("summary quantiles cover the last max_age, sum and count do not age",
          "[metrics]") {
  SummaryChild c({0.5}, minutes(10), 5);  // steps of 2 minutes
  const Clock::time_point t0 = Clock::now();
  for (int i = 0; i < 10; ++i) c.ObserveAt(100, t0);
  c.ObserveAt(1, t0 + minutes(5));
  MetricSnapshot m;
  c.SnapshotAt(&m, t0 + minutes(6));
  REQUIRE(m.quantiles.size() == 1);
  CHECK(m.quantiles[0].second == 100);
  // 10 minutes on, the step holding the hundreds has aged out.
  c.SnapshotAt(&m, t0 + minutes(10) + seconds(1));
  CHECK(m.quantiles[0].second == 1);
  c.SnapshotAt(&m, t0 + minutes(20));
  CHECK(std::isnan(m.quantiles[0].second));
  CHECK(m.count == 11);
  CHECK(m.sum == 1001);
}

TEST_CASE("a summary keeps a bounded sample of a busy window", "[metrics]") {
  SummaryChild c({0.5, 0.99}, minutes(10), 5);
  const Clock::time_point t0 = Clock::now();
  for (int i = 0; i < 100000; ++i) c.ObserveAt(i % 1000, t0);
  MetricSnapshot m;
  c.SnapshotAt(&m, t0);
  CHECK(m.count == 100000);
  // Uniform over 0..999: within client_golang's targets (±5%, ±0.1%)
  // give or take the sampling.
  CHECK(m.quantiles[0].second == Approx(500).margin(60));
  CHECK(m.quantiles[1].second == Approx(990).margin(10));
}

TEST_CASE("'quantile' is not a summary label name", "[metrics]") {
  Registry reg;
  auto s = std::make_shared<Summary>(Opts{"x", "h", {"quantile"}, {}},
                                     std::vector<double>{0.5});
  absl::Status st = reg.Register(s);
  CHECK(st.code() == absl::StatusCode::kInvalidArgument);
  CHECK(st.message() ==
        "register x: \"quantile\" is not allowed as label name in summaries");
}

}  // namespace
}  // namespace vigil::metrics
