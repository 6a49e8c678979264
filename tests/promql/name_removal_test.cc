// __name__ removal: at once by default (as a Prometheus server without
// --enable-feature=promql-delayed-name-removal), or delayed to the end of
// the query (EngineOptions::enable_delayed_name_removal, as Prometheus's
// test harness). The delayed mode is also covered by
// testdata/name_removal.test, which the runner evaluates with it on.
#include <catch2/catch.hpp>

#include "promql/engine.h"
#include "promql/promqltest/storage.h"

namespace vigil::promql {
namespace {

// a and b share their other labels, so they collide once their names go.
promqltest::MemStorage MakeNameRemovalStorage() {
  promqltest::MemStorage s;
  for (int i = 0; i <= 10; i++) {
    const int64_t t = i * 60000;
    s.Append(Labels{{"__name__", "a"}, {"job", "x"}}, t, 10 * i);
    s.Append(Labels{{"__name__", "b"}, {"job", "x"}}, t, 2 * i);
  }
  // c and d also collide, but never at the same time.
  for (int i = 0; i <= 4; i++)
    s.Append(Labels{{"__name__", "c"}, {"job", "x"}}, i * 60000, i);
  for (int i = 6; i <= 10; i++)
    s.Append(Labels{{"__name__", "d"}, {"job", "x"}}, i * 60000, i);
  return s;
}

Engine MakeEngine(bool delayed) {
  EngineOptions o;
  o.enable_delayed_name_removal = delayed;
  return Engine(o);
}

TEST_CASE("the default mode drops names at once", "[promql][names]") {
  auto s = MakeNameRemovalStorage();
  Engine e;
  REQUIRE(!e.options().enable_delayed_name_removal);
  auto r = e.InstantQuery(&s, "rate(a[5m]) > rate(b[5m])", 600000);
  REQUIRE(r.ok());
  REQUIRE(r->value.vector.size() == 1);
  CHECK(r->value.vector[0].metric == Labels{{"job", "x"}});
}

TEST_CASE("the default mode rejects series made identical by dropping names",
          "[promql][names]") {
  auto s = MakeNameRemovalStorage();
  Engine e = MakeEngine(false);
  for (const char* q : {"sum(rate({__name__=~\"a|b\"}[5m]))",
                        "label_replace(rate({__name__=~\"a|b\"}[5m]), "
                        "\"__name__\", \"r\", \"\", \"\")",
                        "abs({__name__=~\"a|b\"})", "-{__name__=~\"a|b\"}",
                        "{__name__=~\"a|b\"} * 2"}) {
    CAPTURE(q);
    auto r = e.InstantQuery(&s, q, 600000);
    REQUIRE(!r.ok());
    CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK(std::string(r.status().message()) ==
          "vector cannot contain metrics with the same labelset");
    // A range query fails too: the series meet at every step.
    CHECK(!e.RangeQuery(&s, q, 300000, 600000, 60000).ok());
  }
}

TEST_CASE("the default mode merges colliding series that never overlap",
          "[promql][names]") {
  auto s = MakeNameRemovalStorage();
  EngineOptions o;
  o.lookback_delta_ms = 60000;  // c is seen until 4m, d from 6m
  Engine e(o);
  // Step-wise operators merge c and d into one series...
  auto r = e.RangeQuery(&s, "-{__name__=~\"c|d\"}", 0, 600000, 60000);
  REQUIRE(r.ok());
  REQUIRE(r->value.matrix.size() == 1);
  CHECK(r->value.matrix[0].metric == Labels{{"job", "x"}});
  CHECK(r->value.matrix[0].ts.size() == 10);
  // ...but fail where they meet at one step (default lookback: c is seen
  // until 9m).
  r = Engine().RangeQuery(&s, "-{__name__=~\"c|d\"}", 0, 600000, 60000);
  CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
  // A range-vector function rejects them even in a range query, as
  // Prometheus does.
  r = e.RangeQuery(&s, "sum_over_time({__name__=~\"c|d\"}[1m])", 0, 600000,
                   60000);
  CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
  // (last_over_time keeps names, so nothing collides)
  r = e.RangeQuery(&s, "last_over_time({__name__=~\"c|d\"}[1m])", 0, 600000,
                   60000);
  CHECK(r.ok());
}

TEST_CASE("the delayed mode keeps names until the query ends",
          "[promql][names]") {
  auto s = MakeNameRemovalStorage();
  Engine e = MakeEngine(true);
  auto r = e.InstantQuery(&s, "sum(rate({__name__=~\"a|b\"}[5m]))", 600000);
  REQUIRE(r.ok());
  REQUIRE(r->value.vector.size() == 1);
  CHECK(r->value.vector[0].v == Approx(0.2));
  r = e.InstantQuery(&s,
                     "label_replace(rate({__name__=~\"a|b\"}[5m]), \"n\", "
                     "\"$1\", \"__name__\", \"(.*)\")",
                     600000);
  REQUIRE(r.ok());
  CHECK(r->value.vector.size() == 2);
  // The result still may not hold identical series.
  r = e.InstantQuery(&s, "rate({__name__=~\"a|b\"}[5m])", 600000);
  CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("a comparison does not bring back a name its left side dropped",
          "[promql][names]") {
  auto s = MakeNameRemovalStorage();
  for (bool delayed : {false, true}) {
    CAPTURE(delayed);
    Engine e = MakeEngine(delayed);
    for (const char* q :
         {"rate(a[5m]) > rate(b[5m])", "rate(a[5m]) > on(job) rate(b[5m])",
          "rate(a[5m]) > on(job) group_left rate(b[5m])", "rate(a[5m]) > 0",
          "rate(a[5m]) and b"}) {
      CAPTURE(q);
      auto r = e.InstantQuery(&s, q, 600000);
      REQUIRE(r.ok());
      REQUIRE(r->value.vector.size() == 1);
      CHECK(r->value.vector[0].metric == Labels{{"job", "x"}});
      auto m = e.RangeQuery(&s, q, 300000, 600000, 60000);
      REQUIRE(m.ok());
      REQUIRE(m->value.matrix.size() == 1);
      CHECK(m->value.matrix[0].metric == Labels{{"job", "x"}});
    }
    // A comparison of selectors keeps the left name.
    auto r = e.InstantQuery(&s, "a > b", 600000);
    REQUIRE(r.ok());
    REQUIRE(r->value.vector.size() == 1);
    CHECK(r->value.vector[0].metric.MetricName() == "a");
  }
}

}  // namespace
}  // namespace vigil::promql

namespace vigil::promql {
namespace {

TEST_CASE("histogram annotations name the metric only in the delayed mode",
          "[promql][names]") {
  promqltest::MemStorage s;
  // Non-monotonic buckets (forced monotonicity) and one without `le`.
  s.Append(Labels{{"__name__", "h_bucket"}, {"le", "1"}}, 0, 5);
  s.Append(Labels{{"__name__", "h_bucket"}, {"le", "2"}}, 0, 3);
  s.Append(Labels{{"__name__", "h_bucket"}, {"le", "+Inf"}}, 0, 6);
  s.Append(Labels{{"__name__", "h_bucket"}, {"x", "1"}}, 0, 1);
  for (bool delayed : {false, true}) {
    CAPTURE(delayed);
    auto r = MakeEngine(delayed).InstantQuery(
        &s, "histogram_quantile(0.5, h_bucket)", 0);
    REQUIRE(r.ok());
    REQUIRE(r->warnings.size() == 1);
    REQUIRE(r->infos.size() == 1);
    const bool warn_named =
        r->warnings[0].find("for metric name \"h_bucket\"") !=
        std::string::npos;
    const bool info_named =
        r->infos[0].find("for metric name \"h_bucket\"") != std::string::npos;
    CHECK(warn_named == delayed);
    CHECK(info_named == delayed);
  }
}

}  // namespace
}  // namespace vigil::promql

namespace vigil::promql {
namespace {

TEST_CASE("bool comparisons check unique matches without the dropped names",
          "[promql][names]") {
  auto s = MakeNameRemovalStorage();
  const char* q = "{__name__=~\"a|b\"} > bool on(job) group_left a";
  // Default mode: a{job} and b{job} both become {job} before the check.
  auto r = MakeEngine(false).InstantQuery(&s, q, 600000);
  CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(r.status().message()) ==
        "multiple matches for labels: grouping labels must ensure unique "
        "matches");
  // Delayed mode: the names still differ there; the duplicate is found
  // only when the query ends.
  r = MakeEngine(true).InstantQuery(&s, q, 600000);
  CHECK(std::string(r.status().message()) ==
        "vector cannot contain metrics with the same labelset");
}

}  // namespace
}  // namespace vigil::promql

namespace vigil::promql {
namespace {

TEST_CASE("a range function over one metric name skips no real collision",
          "[promql][names]") {
  // One name: dropping it leaves the series distinct, even with a
  // parenthesised selector...
  promqltest::MemStorage s;
  for (int i = 0; i <= 10; i++) {
    s.Append(Labels{{"__name__", "m"}, {"job", "x"}}, i * 60000, 10 * i);
    s.Append(Labels{{"__name__", "m"}, {"job", "y"}}, i * 60000, 2 * i);
  }
  for (const char* q : {"rate(m[5m])", "rate((m[5m]))",
                        "sum_over_time({__name__=\"m\"}[5m])"}) {
    CAPTURE(q);
    auto r = Engine().RangeQuery(&s, q, 300000, 600000, 60000);
    REQUIRE(r.ok());
    CHECK(r->value.matrix.size() == 2);
  }
  // ...but with __type__ labels (dropped with the name) two series of one
  // name can still become one: that is still an error (inside sum, which
  // would otherwise add them up).
  promqltest::MemStorage typed;
  for (int i = 0; i <= 10; i++) {
    typed.Append(Labels{{"__name__", "m"}, {"__type__", "counter"}, {"j", "x"}},
                 i * 60000, 10 * i);
    typed.Append(Labels{{"__name__", "m"}, {"__type__", "gauge"}, {"j", "x"}},
                 i * 60000, 2 * i);
  }
  auto r =
      Engine().RangeQuery(&typed, "sum(rate(m[5m]))", 300000, 600000, 60000);
  CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
  r = Engine().InstantQuery(&typed, "sum(rate(m[5m]))", 600000);
  CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace vigil::promql
