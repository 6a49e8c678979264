// Range functions and selectors over many series run on two threads; the
// result must be identical, bit for bit and in order, to evaluating each series
// alone (which stays on one thread), warnings included.
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <random>

#include "promql/engine.h"
#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::promql {
namespace {

constexpr Timestamp kParallelT0 = 1767225600000;
constexpr int64_t kParallelStep = 15000;
constexpr int kParallelSamples = 480;
constexpr int kParallelSeries = 300;  // enough work to take the two-thread path

bool ParallelSameBits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

TEST_CASE("Range functions give the same answer on two threads as on one",
          "[parallel][concurrency]") {
  testutil::TempDir tmp;
  auto db = std::move(*storage::DB::Open({}, tmp.path()));
  std::mt19937_64 rng(7);
  std::vector<double> value(kParallelSeries, 0);
  std::vector<storage::SeriesRef> refs(kParallelSeries, 0);
  for (int s = 0; s < kParallelSamples; ++s) {
    auto app = db->NewAppender();
    for (int i = 0; i < kParallelSeries; ++i) {
      // Counters with occasional resets and gaps.
      if (rng() % 97 == 0) value[i] = 0;
      value[i] += double(rng() % 1000) / 8;
      if (rng() % 13 == 0) continue;
      Labels l{{"__name__", "x_total"}, {"i", std::to_string(i)}};
      auto r =
          app->Append(refs[i], l, kParallelT0 + s * kParallelStep, value[i]);
      REQUIRE(r.ok());
      refs[i] = *r;
    }
    REQUIRE(app->Commit().ok());
  }
  Engine engine;
  const Timestamp end = kParallelT0 + (kParallelSamples - 1) * kParallelStep;
  // Selectors over >= 128 series also decode on two threads.
  for (std::string fn :
       {"rate(x_total[5m])", "quantile_over_time(2, x_total[10m])",
        "max_over_time(x_total[1m])", "resets(x_total[20m])", "x_total",
        "timestamp(x_total)"}) {
    INFO(fn);
    auto all = engine.RangeQuery(db.get(), fn, kParallelT0, end, kParallelStep);
    REQUIRE(all.ok());
    REQUIRE(all->value.matrix.size() == size_t(kParallelSeries));
    std::map<std::string, const Series*> by_labels;
    for (const auto& s : all->value.matrix) by_labels[s.metric.ToString()] = &s;
    for (int i = 0; i < kParallelSeries; i += 23) {
      std::string one = fn;
      one.insert(one.find("x_total") + 7, "{i=\"" + std::to_string(i) + "\"}");
      auto single =
          engine.RangeQuery(db.get(), one, kParallelT0, end, kParallelStep);
      REQUIRE(single.ok());
      REQUIRE(single->value.matrix.size() == 1);
      const Series& want = single->value.matrix[0];
      const Series* got = by_labels[want.metric.ToString()];
      REQUIRE(got != nullptr);
      REQUIRE(got->ts == want.ts);
      REQUIRE(got->vs.size() == want.vs.size());
      for (size_t k = 0; k < want.vs.size(); ++k)
        REQUIRE(ParallelSameBits(got->vs[k], want.vs[k]));
    }
    auto single0 =
        engine.RangeQuery(db.get(),
                          fn.substr(0, fn.find("x_total") + 7) + "{i=\"0\"}" +
                              fn.substr(fn.find("x_total") + 7),
                          kParallelT0, end, kParallelStep);
    REQUIRE(single0.ok());
    REQUIRE(all->warnings == single0->warnings);
    REQUIRE(all->infos == single0->infos);
  }
}

}  // namespace
}  // namespace vigil::promql
