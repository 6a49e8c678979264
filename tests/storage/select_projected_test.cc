// Querier::SelectProjected (storage/querier.h): the same series in the same
// order with the same samples as SelectUnsorted / SelectLatest, each with
// only the labels named in `keep` it has, for head series and for cold
// ones (head GC), read whole or batch by batch.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::Eq;
using testutil::MustOpen;
using testutil::Samples;

constexpr Timestamp kProjectedMin = 60 * 1000;

Labels ProjectedSeriesLabels(int i) {
  return Labels{{"__name__", "http_requests_total"},
                {"instance", "host-" + std::to_string(i)},
                {"job", i < 30 ? "idle" : "busy"},
                {"le", std::to_string(i % 4)},
                {"model_name", "mistralai/Mixtral-8x7B-Instruct-v0.1"}};
}

// What one selection gave: labels and samples per series, in order.
struct ProjectedRead {
  std::vector<Labels> labels;
  std::vector<Samples> samples;
};

// A series of SelectLatest is asked only for its newest sample.
ProjectedRead ReadAllProjected(SeriesSet* set, Timestamp mint, Timestamp maxt,
                               bool latest, bool batches) {
  ProjectedRead r;
  auto add = [&](const storage::Series& s, Labels l) {
    Samples got;
    if (latest) {
      bool found = false;
      Timestamp t = 0;
      double v = 0;
      REQUIRE(s.Latest(maxt, &found, &t, &v).ok());
      if (found) got.push_back({t, v});
    } else {
      std::vector<Timestamp> ts;
      std::vector<double> vs;
      REQUIRE(s.Samples(mint, maxt, &ts, &vs).ok());
      for (size_t i = 0; i < ts.size(); ++i) got.push_back({ts[i], vs[i]});
    }
    r.labels.push_back(std::move(l));
    r.samples.push_back(std::move(got));
  };
  if (batches) {
    std::vector<const storage::Series*> series;
    std::vector<Labels> labels;
    while (set->NextBatch(7, &series, &labels)) {
      for (size_t i = 0; i < series.size(); ++i) add(*series[i], labels[i]);
    }
  } else {
    while (set->Next()) add(set->At(), set->At().labels());
  }
  REQUIRE(set->err().ok());
  return r;
}

void CheckProjection(DB* db, const std::vector<std::string>& keep,
                     Timestamp mint, Timestamp maxt) {
  for (bool latest : {false, true}) {
    for (bool batches : {false, true}) {
      INFO("latest " << latest << ", batches " << batches);
      auto q = db->NewQuerier(mint, maxt);
      REQUIRE(q.ok());
      const std::vector<Matcher> ms = {Eq("__name__", "http_requests_total")};
      auto all = latest ? (*q)->SelectLatest(ms) : (*q)->SelectUnsorted(ms);
      REQUIRE(all.ok());
      auto projected = (*q)->SelectProjected(ms, keep, latest);
      REQUIRE(projected.ok());
      const ProjectedRead want =
          ReadAllProjected(all->get(), mint, maxt, latest, batches);
      const ProjectedRead got =
          ReadAllProjected(projected->get(), mint, maxt, latest, batches);
      REQUIRE(want.labels.size() >= 20);
      REQUIRE(got.labels.size() == want.labels.size());
      CHECK(got.samples == want.samples);
      for (size_t i = 0; i < want.labels.size(); ++i) {
        CHECK(got.labels[i] ==
              LabelsBuilder(want.labels[i]).Keep(keep).Build());
      }
    }
  }
}

TEST_CASE("SelectProjected gives the selection with only the kept labels",
          "[storage][projection]") {
  testutil::TempDir dir;
  Options o;
  o.retention_ms = 0;
  o.head_idle_ms = 10 * kProjectedMin;
  o.max_chunk_samples = 16;  // some chunks are written to RocksDB
  auto db = MustOpen(dir.path(), o);
  for (int m = 1; m <= 60; ++m) {
    auto app = db->NewAppender();
    for (int i = 0; i < 50; ++i) {
      if (i < 30 && m > 30) continue;  // the idle ones stop at minute 30
      REQUIRE(app->Append(0, ProjectedSeriesLabels(i), m * kProjectedMin,
                          m * 10 + i)
                  .ok());
    }
    REQUIRE(app->Commit().ok());
  }

  SECTION("head series") {
    CheckProjection(db.get(), {"le"}, kMinTimestamp, kMaxTimestamp);
    CheckProjection(db.get(), {"instance", "le", "zone"}, 20 * kProjectedMin,
                    45 * kProjectedMin);
    // Nothing kept: every series with an empty label set, still in order.
    CheckProjection(db.get(), {}, kMinTimestamp, kMaxTimestamp);
    CheckProjection(db.get(), {"__name__", "model_name"}, 50 * kProjectedMin,
                    kMaxTimestamp);
  }
  SECTION("cold series (head GC) among head ones") {
    REQUIRE(db->ApplyRetention(60 * kProjectedMin).ok());
    REQUIRE(db->Stats().cold_series == 30);
    CheckProjection(db.get(), {"le"}, kMinTimestamp, kMaxTimestamp);
    CheckProjection(db.get(), {"job", "le"}, 10 * kProjectedMin,
                    40 * kProjectedMin);
  }
}

}  // namespace
}  // namespace vigil::storage
