// A range query evaluates each series over all steps in one pass, reusing
// work between windows (counter resets are indexed once per series,
// aggregations accumulate series by series). An instant query at one step
// sees only that step's window. Both must agree bit for bit at every step.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "core/time.h"
#include "promql/engine.h"
#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::promql {
namespace {

constexpr Timestamp kT0 = 1767225600000;
constexpr int64_t kStep = 15000;
constexpr int kSamples = 160;
constexpr int kRangeSeries = 12;

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST_CASE("Range queries agree with instant queries at every step", "[range]") {
  testutil::TempDir tmp;
  auto db = std::move(*storage::DB::Open({}, tmp.path()));
  std::mt19937_64 rng(11);
  std::vector<double> value(kRangeSeries, 0);
  for (int s = 0; s < kSamples; ++s) {
    auto app = db->NewAppender();
    for (int i = 0; i < kRangeSeries; ++i) {
      // Counters with frequent resets (some to negative values), repeated
      // values, NaNs, gaps, and fractional increments.
      switch (rng() % 11) {
        case 0:
          value[i] = 0;
          break;
        case 1:
          value[i] = -double(rng() % 5);
          break;
        case 2:
          break;  // same value again
        case 3:
          value[i] = NAN;
          break;
        default:
          if (std::isnan(value[i])) value[i] = 1;
          value[i] += double(rng() % 1000) / 7;
      }
      if (rng() % 9 == 0) continue;
      Labels l{{"__name__", "x_total"},
               {"i", std::to_string(i)},
               {"g", std::to_string(i % 3)}};
      // Odd series are scraped exactly on time: their windows repeat shapes.
      const int64_t jitter = i % 2 == 0 ? int64_t(rng() % 3000) : 0;
      REQUIRE(app->Append(0, l, kT0 + s * kStep + jitter, value[i]).ok());
    }
    REQUIRE(app->Commit().ok());
  }
  Engine engine;
  const Timestamp start = kT0 + 10 * kStep, end = kT0 + (kSamples - 1) * kStep;
  // Steps of 5 s (closer than the samples) make consecutive steps see the
  // same window, whose value a window-only function reuses.
  for (int64_t step : {kStep, int64_t{5000}})
    for (std::string q :
         {"rate(x_total[1m])", "increase(x_total[2m])", "resets(x_total[5m])",
          "rate(x_total[10m])", "sum by (g) (rate(x_total[3m]))",
          "avg by (g) (x_total)", "count(x_total)", "max by (g) (x_total)",
          "min(x_total)", "stddev by (g) (x_total)", "stdvar(x_total)",
          "group by (g) (x_total)", "sum without (i) (increase(x_total[90s]))",
          "max_over_time(x_total[1m])", "changes(x_total[2m])",
          "quantile_over_time(0.3, x_total[2m])", "deriv(x_total[3m])",
          "predict_linear(x_total[2m], 60)", "delta(x_total[1m])",
          "max_over_time(rate(x_total[1m])[10m:1m])",
          // One-to-one vector matching, merged series by series.
          "x_total + x_total offset 1m", "x_total > bool x_total offset 30s",
          "x_total > x_total offset 30s", "x_total / on(i) x_total offset 2m",
          "x_total - ignoring(g) x_total offset 1m",
          "rate(x_total[1m]) * on(i, g) group_left x_total",
          "sum by (g) (x_total) / on(g) group_right x_total"}) {
      INFO(q << " step " << step);
      auto range = engine.RangeQuery(db.get(), q, start, end, step);
      REQUIRE(range.ok());
      std::map<std::string, const Series*> by_labels;
      for (const auto& s : range->value.matrix)
        by_labels[s.metric.ToString()] = &s;
      size_t points = 0;
      for (Timestamp t = start; t <= end; t += step) {
        auto inst = engine.InstantQuery(db.get(), q, t);
        REQUIRE(inst.ok());
        for (const Sample& smp : inst->value.vector) {
          INFO(smp.metric.ToString() << " at " << t);
          const Series* s = by_labels[smp.metric.ToString()];
          REQUIRE(s != nullptr);
          auto it = std::lower_bound(s->ts.begin(), s->ts.end(), t);
          REQUIRE(it != s->ts.end());
          REQUIRE(*it == t);
          double got = s->vs[size_t(it - s->ts.begin())];
          INFO(got << " vs " << smp.v);
          REQUIRE(SameBits(got, smp.v));
          ++points;
        }
      }
      size_t range_points = 0;
      for (const auto& s : range->value.matrix) range_points += s.ts.size();
      REQUIRE(points == range_points);
      REQUIRE(points > 0);
    }
}

}  // namespace
}  // namespace vigil::promql

namespace vigil::promql {
namespace {

TEST_CASE(
    "Aggregations too big for per-(group, step) cells agree with the cell path",
    "[range]") {
  // sum/avg/... fold series into one cell per (group, step) unless that
  // would take more than ~1M cells; then they go step by step. A 50 ms step
  // over 40 groups takes the step-by-step path, a 15 s step the cell path:
  // at the steps both have, the answers must be the same bits.
  testutil::TempDir tmp;
  auto db = std::move(*storage::DB::Open({}, tmp.path()));
  std::mt19937_64 rng(5);
  for (int s = 0; s < kSamples; ++s) {
    auto app = db->NewAppender();
    for (int i = 0; i < 40; ++i) {
      for (const char* name : {"x_total", "y_total"}) {
        Labels l{{"__name__", name}, {"i", std::to_string(i)}};
        double v = double(rng() % 100000) / 64 + (rng() % 50 == 0 ? NAN : 0);
        REQUIRE(app->Append(0, l, kT0 + s * kStep, v).ok());
      }
    }
    REQUIRE(app->Commit().ok());
  }
  Engine engine;
  const Timestamp start = kT0 + 20 * kStep, end = kT0 + (kSamples - 1) * kStep;
  for (std::string q : {"sum by (i) ({__name__=~\"x_total|y_total\"})",
                        "avg by (i) ({__name__=~\"x_total|y_total\"})",
                        "stddev by (i) ({__name__=~\"x_total|y_total\"})"}) {
    INFO(q);
    auto fine = engine.RangeQuery(db.get(), q, start, end, 50);
    auto coarse = engine.RangeQuery(db.get(), q, start, end, kStep);
    REQUIRE(fine.ok());
    REQUIRE(coarse.ok());
    REQUIRE(fine->value.matrix.size() == 40);
    REQUIRE(coarse->value.matrix.size() == 40);
    for (size_t g = 0; g < 40; ++g) {
      const Series& f = fine->value.matrix[g];
      const Series& c = coarse->value.matrix[g];
      REQUIRE(f.metric == c.metric);
      REQUIRE(f.ts.size() > 40000);  // ~48k steps: > 1M cells in all
      for (size_t k = 0; k < c.ts.size(); ++k) {
        auto it = std::lower_bound(f.ts.begin(), f.ts.end(), c.ts[k]);
        REQUIRE(it != f.ts.end());
        REQUIRE(*it == c.ts[k]);
        REQUIRE(SameBits(f.vs[size_t(it - f.ts.begin())], c.vs[k]));
      }
    }
  }
}

}  // namespace
}  // namespace vigil::promql

namespace vigil::promql {
namespace {

TEST_CASE("A sparse series on a fine grid answers as instant queries do",
          "[range]") {
  // A range query steps over the grid only where a series has an answer
  // (a sample younger than the lookback, not a staleness marker); an
  // instant query reads the newest sample alone. Bursts of samples, gaps
  // longer than the 5-minute lookback and staleness markers, on a 1 s grid
  // with offsets either way and a pinned @, must give the same points.
  testutil::TempDir tmp;
  auto db = std::move(*storage::DB::Open({}, tmp.path()));
  Labels l{{"__name__", "g"}};
  std::vector<std::pair<int64_t, double>> samples;
  for (int64_t s : {0, 7, 14, 400, 1000, 1001, 1500, 1503, 2600, 2610})
    samples.push_back({kT0 + s * 1000, double(s)});
  samples.push_back({kT0 + 1010 * 1000, StaleNaN()});
  samples.push_back({kT0 + 2605 * 1000, StaleNaN()});
  std::sort(samples.begin(), samples.end());
  for (const auto& [t, v] : samples) {
    auto app = db->NewAppender();
    REQUIRE(app->Append(0, l, t, v).ok());
    REQUIRE(app->Commit().ok());
  }
  Engine engine;
  const Timestamp start = kT0 - 30000, end = kT0 + 3000 * 1000;
  const std::string at = std::to_string((kT0 + 1502000) / 1000);
  for (std::string q : std::vector<std::string>{
           "g", "g offset 90s", "g offset -45s", "timestamp(g offset 3s)",
           "g @ " + at, "g @ " + at + " offset 1s"}) {
    INFO(q);
    auto range = engine.RangeQuery(db.get(), q, start, end, 1000);
    REQUIRE(range.ok());
    std::vector<const Series*> ser;
    for (const auto& s : range->value.matrix) ser.push_back(&s);
    REQUIRE(ser.size() <= 1);
    size_t k = 0, points = 0;
    for (Timestamp t = start; t <= end; t += 1000) {
      auto inst = engine.InstantQuery(db.get(), q, t);
      REQUIRE(inst.ok());
      const bool in_range =
          !ser.empty() && k < ser[0]->ts.size() && ser[0]->ts[k] == t;
      INFO("step " << t);
      REQUIRE(inst->value.vector.size() == (in_range ? 1u : 0u));
      if (!in_range) continue;
      REQUIRE(SameBits(inst->value.vector[0].v, ser[0]->vs[k]));
      ++k;
      ++points;
    }
    REQUIRE(points == (ser.empty() ? 0 : ser[0]->ts.size()));
    // Each query has answers; those not pinned have steps without one.
    const size_t steps = size_t((end - start) / 1000 + 1);
    CHECK(points > 0);
    if (q.find('@') == std::string::npos) CHECK(points < steps);
    if (q.find('@') != std::string::npos) CHECK(points == steps);
  }
}

}  // namespace
}  // namespace vigil::promql
