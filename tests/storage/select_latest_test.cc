// Querier::SelectLatest (storage/querier.h): the series of SelectUnsorted, in
// its order, each answering Latest(maxt) with the newest sample
// SelectUnsorted's iterator yields; a head series whose newest sample is in
// range comes without chunks, the others with their newest chunk (newest sample
// after maxt, cold series) or all of them (tombstones).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::Eq;
using testutil::MustOpen;

constexpr Timestamp kMin = 60 * 1000;

struct Answer {
  std::string labels;
  bool found = false;
  Timestamp t = 0;
  double v = 0;
};

// Labels and Latest(maxt) of every series of the set, in its order; with
// `walk`, the newest sample at or before maxt as the iterator yields them
// (the oracle).
std::vector<Answer> Answers(SeriesSet* set, Timestamp maxt, bool walk) {
  std::vector<Answer> out;
  while (set->Next()) {
    Answer a;
    a.labels = set->At().labels().ToString();
    if (walk) {
      auto it = set->At().Iterator();
      while (it->Next() && it->t() <= maxt) {
        a.found = true;
        a.t = it->t();
        a.v = it->v();
      }
      REQUIRE(it->err().ok());
    } else {
      REQUIRE(set->At().Latest(maxt, &a.found, &a.t, &a.v).ok());
    }
    out.push_back(a);
  }
  REQUIRE(set->err().ok());
  return out;
}

void SameAsUnsorted(DB* db, Timestamp mint, Timestamp maxt,
                    size_t want_series) {
  INFO("range [" << mint << ", " << maxt << "]");
  auto q = db->NewQuerier(mint, maxt);
  REQUIRE(q.ok());
  auto full = (*q)->SelectUnsorted({Eq("__name__", "m")});
  auto latest = (*q)->SelectLatest({Eq("__name__", "m")});
  REQUIRE(full.ok());
  REQUIRE(latest.ok());
  auto want = Answers(full->get(), maxt, true);
  auto got = Answers(latest->get(), maxt, false);
  CHECK(want.size() == want_series);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO(want[i].labels);
    CHECK(got[i].labels == want[i].labels);
    CHECK(got[i].found == want[i].found);
    CHECK(got[i].t == want[i].t);
    CHECK(got[i].v == want[i].v);
  }
}

Labels LatestLabels(const std::string& job, int i) {
  return Labels{{"__name__", "m"}, {"job", job}, {"i", std::to_string(i)}};
}

TEST_CASE("SelectLatest answers as SelectUnsorted does",
          "[storage][select_latest]") {
  testutil::TempDir dir;
  Options o;
  o.retention_ms = 0;
  o.head_idle_ms = 10 * kMin;
  o.max_chunk_samples = 8;  // chunks are cut and written to RocksDB
  auto db = MustOpen(dir.path(), o);
  // "busy" series every minute to minute 60, "idle" ones to minute 20
  // (they go cold at ApplyRetention), one "gone" series whose last five
  // minutes are deleted.
  {
    auto app = db->NewAppender();
    for (int m = 1; m <= 60; ++m) {
      for (int i = 0; i < 6; ++i) {
        REQUIRE(app->Append(0, LatestLabels("busy", i), m * kMin, m * 100 + i)
                    .ok());
      }
      for (int i = 0; i < 3 && m <= 20; ++i) {
        REQUIRE(app->Append(0, LatestLabels("idle", i), m * kMin, -m).ok());
      }
      REQUIRE(app->Append(0, LatestLabels("gone", 0), m * kMin, m).ok());
      REQUIRE(app->Commit().ok());
    }
  }
  REQUIRE(db->DeleteSeries(std::vector{Eq("job", "gone")}, 56 * kMin, 60 * kMin)
              .ok());
  REQUIRE(db->ApplyRetention(60 * kMin).ok());
  REQUIRE(db->Stats().cold_series == 3);

  // Now, as an instant query at the newest sample sees it (the lookback
  // window reaching the idle series too).
  SameAsUnsorted(db.get(), 1, 60 * kMin, 10);
  // After the newest sample.
  SameAsUnsorted(db.get(), 50 * kMin, 70 * kMin, 7);
  // In the past: the newest sample is after maxt.
  SameAsUnsorted(db.get(), 30 * kMin, 45 * kMin, 7);
  SameAsUnsorted(db.get(), 15 * kMin, 19 * kMin + 1, 10);
  // Between two samples: chunks overlap the range, no sample is in it.
  SameAsUnsorted(db.get(), 44 * kMin + 30000, 44 * kMin + 50000, 7);
  // In the past, inside the busy series' open chunk (minutes 57 to 60):
  // the answer is decoded from it, not from a copy of the chunks.
  SameAsUnsorted(db.get(), 50 * kMin, 58 * kMin + 30000, 7);
  // (The "gone" series has nothing left in these.)
  SameAsUnsorted(db.get(), 57 * kMin, 57 * kMin, 6);
  SameAsUnsorted(db.get(), 59 * kMin, 59 * kMin + 59999, 6);
  // ... and between two of its samples: nothing in range.
  SameAsUnsorted(db.get(), 58 * kMin + 10000, 58 * kMin + 30000, 6);
  // Before everything.
  SameAsUnsorted(db.get(), 0, 30 * 1000, 0);
}

TEST_CASE("A SelectLatest series without chunks holds its newest sample only",
          "[storage][select_latest]") {
  testutil::TempDir dir;
  auto db = MustOpen(dir.path());
  {
    auto app = db->NewAppender();
    for (int m = 1; m <= 5; ++m) {
      REQUIRE(app->Append(0, LatestLabels("busy", 0), m * kMin, m).ok());
    }
    REQUIRE(app->Commit().ok());
  }
  auto q = db->NewQuerier(0, 10 * kMin);
  REQUIRE(q.ok());
  auto set = (*q)->SelectLatest({Eq("__name__", "m")});
  REQUIRE(set.ok());
  REQUIRE((*set)->Next());
  const Series& s = (*set)->At();
  auto it = s.Iterator();
  REQUIRE(it->Next());
  CHECK(it->t() == 5 * kMin);
  CHECK(it->v() == 5);
  CHECK_FALSE(it->Next());
  auto seek = s.Iterator();
  CHECK(seek->Seek(5 * kMin));
  CHECK(seek->Seek(kMin));  // stays put
  CHECK_FALSE(seek->Seek(5 * kMin + 1));
  CHECK_FALSE(s.Iterator()->Seek(6 * kMin));
  // An older time than the newest sample is not what the hint promised:
  // an error, never a wrong answer.
  bool found = false;
  Timestamp t = 0;
  double v = 0;
  absl::Status st = s.Latest(4 * kMin, &found, &t, &v);
  CHECK(st.code() == absl::StatusCode::kInternal);
  REQUIRE(s.Latest(10 * kMin, &found, &t, &v).ok());
  CHECK(found);
  CHECK(t == 5 * kMin);
  CHECK_FALSE((*set)->Next());
}

}  // namespace
}  // namespace vigil::storage
