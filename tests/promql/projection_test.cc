// Projections (promql/internal/eval_aggregate.cc, ProjectableSelector): an
// aggregation that looks only at its grouping labels reads its selector's
// series with only those labels (Querier::SelectProjected). The answer must
// be the one reading every label gives: each query below runs against the
// DB and against the same DB behind a querier that ignores projections,
// and the results, errors, warnings, infos and statistics must be equal.
// (The upstream PromQL suite runs projected too: promqltest's storage
// projects.)
#include <catch2/catch.hpp>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "promql/engine.h"
#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::promql {
namespace {

constexpr Timestamp kMin = 60 * 1000;

// The DB's querier, passing projections on (`project`) or not: without,
// SelectProjected is the default, which reads every label. Counts the
// projected selections.
class Wrapped : public storage::Querier {
 public:
  Wrapped(std::unique_ptr<storage::Querier> q, bool project, int* projected)
      : q_(std::move(q)), project_(project), projected_(projected) {}
  absl::StatusOr<std::unique_ptr<storage::SeriesSet>> Select(
      const std::vector<Matcher>& m) override {
    return q_->Select(m);
  }
  absl::StatusOr<std::unique_ptr<storage::SeriesSet>> SelectUnsorted(
      const std::vector<Matcher>& m) override {
    return q_->SelectUnsorted(m);
  }
  absl::StatusOr<std::unique_ptr<storage::SeriesSet>> SelectLatest(
      const std::vector<Matcher>& m) override {
    return q_->SelectLatest(m);
  }
  absl::StatusOr<std::unique_ptr<storage::SeriesSet>> SelectProjected(
      const std::vector<Matcher>& m, const std::vector<std::string>& keep,
      bool latest) override {
    if (!project_) return Querier::SelectProjected(m, keep, latest);
    ++*projected_;
    return q_->SelectProjected(m, keep, latest);
  }
  absl::StatusOr<std::vector<std::string>> LabelNames(
      const std::vector<Matcher>& m) override {
    return q_->LabelNames(m);
  }
  absl::StatusOr<std::vector<std::string>> LabelValues(
      const std::string& n, const std::vector<Matcher>& m) override {
    return q_->LabelValues(n, m);
  }

 private:
  std::unique_ptr<storage::Querier> q_;
  const bool project_;
  int* projected_;
};

class WrappedDB : public storage::Queryable {
 public:
  WrappedDB(storage::Queryable* q, bool project) : q_(q), project_(project) {}
  absl::StatusOr<std::unique_ptr<storage::Querier>> NewQuerier(
      Timestamp mint, Timestamp maxt) override {
    auto q = q_->NewQuerier(mint, maxt);
    if (!q.ok()) return q.status();
    return std::unique_ptr<storage::Querier>(
        new Wrapped(std::move(*q), project_, &projected));
  }
  int projected = 0;

 private:
  storage::Queryable* q_;
  const bool project_;
};

std::string Render(const absl::StatusOr<Result>& r) {
  if (!r.ok()) return "error: " + r.status().ToString();
  std::ostringstream o;
  const Value& v = r->value;
  for (const Sample& s : v.vector) {
    o << s.metric.ToString() << " " << s.t << " " << s.v << "\n";
  }
  for (const Series& s : v.matrix) {
    o << s.metric.ToString() << ":";
    for (size_t i = 0; i < s.ts.size(); ++i)
      o << " " << s.ts[i] << "=" << s.vs[i];
    o << "\n";
  }
  if (v.type == ValueType::kScalar) o << "scalar " << v.scalar.v << "\n";
  for (const auto& w : r->warnings) o << "warning: " << w << "\n";
  for (const auto& i : r->infos) o << "info: " << i << "\n";
  o << "samples " << r->total_queryable_samples << " peak " << r->peak_samples;
  return o.str();
}

// 20 minutes, one sample a minute: a histogram's buckets on 3 hosts, a
// counter without a counter suffix, two metrics that differ only in name,
// and series with Prometheus 3's __type__ label whose names and types
// differ only.
std::unique_ptr<storage::DB> FillProjectionDb(const std::string& dir) {
  auto db = std::move(*storage::DB::Open({}, dir));
  for (int m = 1; m <= 20; ++m) {
    auto app = db->NewAppender();
    for (int h = 0; h < 3; ++h) {
      const std::string host = "host-" + std::to_string(h);
      int le_i = 0;
      for (const char* le : {"0.1", "1", "10", "+Inf"}) {
        REQUIRE(app->Append(0,
                            Labels{{"__name__", "ttft_seconds_bucket"},
                                   {"instance", host},
                                   {"le", le},
                                   {"model", "m" + std::to_string(h % 2)}},
                            m * kMin, m * (h + 1) * (++le_i))
                    .ok());
      }
      REQUIRE(app->Append(0,
                          Labels{{"__name__", "requests"}, {"instance", host}},
                          m * kMin, m * 7 + h)
                  .ok());
      for (const char* name : {"a_total", "b_total"}) {
        REQUIRE(app->Append(0, Labels{{"__name__", name}, {"instance", host}},
                            m * kMin, m * h)
                    .ok());
      }
      for (const char* type : {"counter", "gauge"}) {
        REQUIRE(app->Append(0,
                            Labels{{"__name__", "typed_total"},
                                   {"__type__", type},
                                   {"instance", host}},
                            m * kMin, m + h)
                    .ok());
      }
    }
    REQUIRE(app->Commit().ok());
  }
  return db;
}

TEST_CASE("projected aggregations answer as if every label were read",
          "[promql][projection]") {
  testutil::TempDir tmp;
  auto db = FillProjectionDb(tmp.path());
  WrappedDB projecting(db.get(), true), full(db.get(), false);
  // The shapes that are projected, then the ones that are not.
  const std::vector<std::string> projected = {
      "sum by (le) (rate(ttft_seconds_bucket[5m]))",
      "histogram_quantile(0.9, sum by (le) (rate(ttft_seconds_bucket[5m])))",
      "sum(rate(ttft_seconds_bucket[5m]))",
      "count by (__name__) ({__name__=~\".+\"})",
      "topk(2, count by (__name__) ({__name__=~\".+\"}))",
      "avg by (model) (ttft_seconds_bucket)",
      "max by (instance, le) (ttft_seconds_bucket{le!=\"+Inf\"})",
      "stddev by (model) (delta(ttft_seconds_bucket[3m]))",
      "group by (model) (last_over_time(ttft_seconds_bucket[2m]))",
      "count(ttft_seconds_bucket)",
      "quantile by (le) (0.5, rate(ttft_seconds_bucket[5m]))",
      // rate() of a name without a counter suffix keeps its info.
      "sum by (instance) (rate(requests[5m]))",
      "sum(increase(requests[5m]))",
      // One projected aggregation inside another's function parameter.
      "sum by (le) (quantile_over_time(scalar(count(requests)) / 4, "
      "ttft_seconds_bucket[5m]))",
      // __type__ labels: dropping name and type makes the two series of a
      // host one, which fails with every label read (the projected pass
      // sees the __type__ labels and reads again without projection).
      "sum by (instance) (rate(typed_total[5m]))",
      "sum by (instance) (typed_total)",
  };
  const std::vector<std::string> not_projected = {
      // Not projected: the name is a regex (duplicates after the name is
      // dropped must still fail), without, topk.
      "sum by (instance) (rate({__name__=~\"a_total|b_total\"}[5m]))",
      "sum without (le) (rate(ttft_seconds_bucket[5m]))",
      "sum(topk(1, ttft_seconds_bucket))",
  };
  Engine engine;
  Engine delayed([] {
    EngineOptions o;
    o.enable_delayed_name_removal = true;
    return o;
  }());
  for (const auto* list : {&projected, &not_projected}) {
    for (const std::string& q : *list) {
      for (Engine* e : {&engine, &delayed}) {
        INFO(q << (e == &delayed ? " (delayed name removal)" : ""));
        projecting.projected = 0;
        CHECK(Render(e->InstantQuery(&projecting, q, 15 * kMin)) ==
              Render(e->InstantQuery(&full, q, 15 * kMin)));
        CHECK(
            Render(e->RangeQuery(&projecting, q, 5 * kMin, 20 * kMin, kMin)) ==
            Render(e->RangeQuery(&full, q, 5 * kMin, 20 * kMin, kMin)));
        if (list == &projected) {
          CHECK(projecting.projected >= 2);
        } else {
          CHECK(projecting.projected == 0);
        }
      }
    }
  }
  // The ones that must answer something (not an error) do.
  auto info =
      engine.InstantQuery(db.get(), "sum(rate(requests[5m]))", 15 * kMin);
  REQUIRE(info.ok());
  REQUIRE(info->infos.size() == 1);
  CHECK(info->infos[0].find("\"requests\"") != std::string::npos);
  auto dup = engine.InstantQuery(
      db.get(), "sum by (instance) (rate({__name__=~\"a_total|b_total\"}[5m]))",
      15 * kMin);
  CHECK(dup.status().message() ==
        "vector cannot contain metrics with the same labelset");
  auto typed = engine.InstantQuery(
      db.get(), "sum by (instance) (rate(typed_total[5m]))", 15 * kMin);
  CHECK(typed.status().message() ==
        "vector cannot contain metrics with the same labelset");
}

}  // namespace
}  // namespace vigil::promql
