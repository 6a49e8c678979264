// Engine API behaviour: instant vs range results, sorting, errors, limits.
#include "promql/engine.h"

#include <catch2/catch.hpp>

#include "promql/promqltest/storage.h"

namespace vigil::promql {
namespace {

promqltest::MemStorage MakeStorage() {
  promqltest::MemStorage s;
  for (int i = 0; i <= 20; i++) {
    s.Append(Labels{{"__name__", "x_total"}, {"job", "b"}}, i * 60000, i * 6.0);
    s.Append(Labels{{"__name__", "x_total"}, {"job", "a"}}, i * 60000,
             i * 12.0);
  }
  return s;
}

TEST_CASE("instant query returns a vector at the evaluation time",
          "[promql][engine]") {
  auto s = MakeStorage();
  Engine e;
  auto r = e.InstantQuery(&s, "rate(x_total[5m])", 600000);
  REQUIRE(r.ok());
  REQUIRE(r->value.type == ValueType::kVector);
  REQUIRE(r->value.vector.size() == 2);
  for (const auto& smp : r->value.vector) {
    CHECK(smp.t == 600000);
    CHECK(smp.metric.MetricName().empty());
    CHECK(smp.v == Approx(smp.metric.Get("job") == "a" ? 0.2 : 0.1));
  }
  CHECK(r->infos.empty());
}

TEST_CASE("range query returns a sorted matrix with one point per step",
          "[promql][engine]") {
  auto s = MakeStorage();
  Engine e;
  auto r = e.RangeQuery(&s, "x_total * 2", 0, 300000, 60000);
  REQUIRE(r.ok());
  REQUIRE(r->value.type == ValueType::kMatrix);
  REQUIRE(r->value.matrix.size() == 2);
  CHECK(r->value.matrix[0].metric.Get("job") == "a");
  CHECK(r->value.matrix[0].ts.size() == 6);
  CHECK(r->value.matrix[0].vs[5] == 120);
}

TEST_CASE("scalar range query gives one unlabeled series", "[promql][engine]") {
  auto s = MakeStorage();
  auto r = Engine().RangeQuery(&s, "time()", 0, 120000, 60000);
  REQUIRE(r.ok());
  REQUIRE(r->value.matrix.size() == 1);
  CHECK(r->value.matrix[0].metric.empty());
  CHECK(r->value.matrix[0].vs == std::vector<double>{0, 60, 120});
}

TEST_CASE("errors are InvalidArgument with Prometheus's text",
          "[promql][engine]") {
  auto s = MakeStorage();
  Engine e;
  auto r = e.RangeQuery(&s, "x_total[5m]", 0, 60000, 60000);
  REQUIRE(!r.ok());
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(r.status().message()) ==
        "invalid expression type \"range vector\" for range query, must be "
        "Scalar or instant Vector");
  auto p = e.InstantQuery(&s, "sum(", 0);
  CHECK(p.status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("sample limit is ResourceExhausted", "[promql][engine]") {
  auto s = MakeStorage();
  EngineOptions o;
  o.max_samples = 10;
  auto r = Engine(o).RangeQuery(&s, "x_total", 0, 1200000, 60000);
  REQUIRE(!r.ok());
  CHECK(r.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(std::string(r.status().message()) ==
        "query processing would load too many samples into memory in query "
        "execution");
}

TEST_CASE("query timeout is DeadlineExceeded", "[promql][engine]") {
  promqltest::MemStorage s;
  for (int i = 0; i < 200; i++) {
    Labels l{{"__name__", "g"}, {"i", std::to_string(i)}};
    for (int k = 0; k < 5760; k++) s.Append(l, int64_t{k} * 15000, k);
  }
  EngineOptions o;
  o.timeout_ms = 1;
  auto r = Engine(o).RangeQuery(&s, "avg_over_time(g[1h])", 0, 86400000, 15000);
  REQUIRE(!r.ok());
  CHECK(r.status().code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(std::string(r.status().message()) ==
        "query timed out in expression evaluation");
}

TEST_CASE("rate of a non-counter name gives Prometheus's info",
          "[promql][engine]") {
  promqltest::MemStorage s;
  for (int i = 0; i < 5; i++)
    s.Append(Labels{{"__name__", "foo"}}, i * 60000, i);
  auto r = Engine().InstantQuery(&s, "rate(foo[5m])", 240000);
  REQUIRE(r.ok());
  REQUIRE(r->infos.size() == 1);
  CHECK(r->infos[0] ==
        "PromQL info: metric might not be a counter, name does not end in "
        "_total/_sum/_count/_bucket: \"foo\" (1:6)");
}

TEST_CASE("native-histogram functions are unsupported", "[promql][engine]") {
  auto s = MakeStorage();
  auto r = Engine().InstantQuery(&s, "histogram_count(x_total)", 0);
  REQUIRE(!r.ok());
  CHECK(r.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(std::string(r.status().message()).find("unsupported") !=
        std::string::npos);
}

}  // namespace
}  // namespace vigil::promql
