// The engine reads a selection from the DB in batches of 1,024 series
// (promql/internal/eval_selectors.cc, SeriesSet::NextBatch): selections of
// several batches give every series once, in creation order where order
// shows (topk ties), with the right values, and --query.max-series counts
// across batches.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "promql/engine.h"
#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::promql {
namespace {

constexpr Timestamp kBatchMin = 60 * 1000;
constexpr int kSeries = 2600;  // two full batches and part of a third
constexpr int kMinutes = 20;

// x_total{i} = minute * 10 + i % 7 (a counter), y{i} = 1 (all tied),
// stale{i}: odd i only in the first 5 minutes.
std::unique_ptr<storage::DB> Fill(const std::string& dir) {
  auto db = std::move(*storage::DB::Open({}, dir));
  for (int m = 1; m <= kMinutes; ++m) {
    auto app = db->NewAppender();
    for (int i = 0; i < kSeries; ++i) {
      const std::string n = std::to_string(i);
      REQUIRE(app->Append(0, Labels{{"__name__", "x_total"}, {"i", n}},
                          m * kBatchMin, m * 10 + i % 7)
                  .ok());
      REQUIRE(
          app->Append(0, Labels{{"__name__", "y"}, {"i", n}}, m * kBatchMin, 1)
              .ok());
      if (i % 2 == 1 && m <= 5) {
        REQUIRE(app->Append(0, Labels{{"__name__", "stale"}, {"i", n}},
                            m * kBatchMin, i)
                    .ok());
      }
    }
    REQUIRE(app->Commit().ok());
  }
  return db;
}

double Scalar1(const Result& r) {
  REQUIRE(r.value.vector.size() == 1);
  return r.value.vector[0].v;
}

TEST_CASE("selections larger than a batch are read whole",
          "[promql][batches]") {
  testutil::TempDir tmp;
  auto db = Fill(tmp.path());
  Engine engine;
  const Timestamp now = kMinutes * kBatchMin;

  auto count = engine.InstantQuery(db.get(), "count(x_total)", now);
  REQUIRE(count.ok());
  CHECK(Scalar1(*count) == kSeries);
  auto sum = engine.InstantQuery(db.get(), "sum(x_total)", now);
  REQUIRE(sum.ok());
  double want = 0;
  for (int i = 0; i < kSeries; ++i) want += kMinutes * 10 + i % 7;
  CHECK(Scalar1(*sum) == want);
  // Each counter grows by 10 a minute.
  auto rate = engine.InstantQuery(db.get(), "sum(rate(x_total[5m]))", now);
  REQUIRE(rate.ok());
  CHECK(Scalar1(*rate) == Approx(kSeries * 10.0 / 60));

  // Ties go to the first series created: i = 0..4, from the first batch.
  auto top = engine.InstantQuery(db.get(), "topk(5, y)", now);
  REQUIRE(top.ok());
  REQUIRE(top->value.vector.size() == 5);
  for (int k = 0; k < 5; ++k) {
    CHECK(top->value.vector[k].metric.Get("i") == std::to_string(k));
  }

  // A range query: every series, every step, once.
  auto range =
      engine.RangeQuery(db.get(), "x_total", 10 * kBatchMin, now, kBatchMin);
  REQUIRE(range.ok());
  REQUIRE(range->value.matrix.size() == size_t(kSeries));
  std::vector<int> seen(kSeries, 0);
  for (const Series& s : range->value.matrix) {
    const int i = std::stoi(std::string(s.metric.Get("i")));
    ++seen[i];
    REQUIRE(s.ts.size() == 11);
    CHECK(s.vs.front() == 100 + i % 7);
    CHECK(s.vs.back() == kMinutes * 10 + i % 7);
  }
  CHECK(std::count(seen.begin(), seen.end(), 1) == kSeries);

  // `stale` (odd i) stops at minute 5: in range then, not 15 minutes on.
  auto st = engine.InstantQuery(db.get(), "count(stale)", 5 * kBatchMin);
  REQUIRE(st.ok());
  CHECK(Scalar1(*st) == kSeries / 2);
  auto none = engine.InstantQuery(db.get(), "count(stale)", now);
  REQUIRE(none.ok());
  CHECK(none->value.vector.empty());
}

TEST_CASE("the series limit counts the series of every batch",
          "[promql][batches]") {
  testutil::TempDir tmp;
  auto db = Fill(tmp.path());
  const Timestamp now = kMinutes * kBatchMin;
  for (int64_t limit : {kSeries - 1, 1500, 100}) {
    INFO("limit " << limit);
    EngineOptions o;
    o.max_series = limit;
    Engine engine(o);
    auto r = engine.InstantQuery(db.get(), "sum(x_total)", now);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kResourceExhausted);
    CHECK(std::string(r.status().message()) ==
          "query processing would load too many series into memory in query "
          "execution: x_total selects more than " +
              std::to_string(limit) + " series (--query.max-series)");
    auto range = engine.RangeQuery(db.get(), "rate(x_total[5m])",
                                   10 * kBatchMin, now, kBatchMin);
    CHECK(range.status().code() == absl::StatusCode::kResourceExhausted);
  }
  EngineOptions o;
  o.max_series = kSeries;
  Engine engine(o);
  auto r = engine.InstantQuery(db.get(), "count(x_total)", now);
  REQUIRE(r.ok());
  CHECK(Scalar1(*r) == kSeries);
  // Series with nothing in range do not count.
  o.max_series = 10;
  Engine ten(o);
  CHECK(ten.InstantQuery(db.get(), "count(stale)", now).ok());
  CHECK_FALSE(ten.InstantQuery(db.get(), "count(stale)", 5 * kBatchMin).ok());
}

}  // namespace
}  // namespace vigil::promql
