// Series::Samples of the DB's series (decoded straight into the columns)
// against the interface's default, which copies from Iterator(): the same
// samples for any window, with chunks in the head and in RocksDB, cold
// series, tombstones, and SelectLatest's one-sample series.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::Eq;
using testutil::MustOpen;

constexpr Timestamp kSeriesSamplesMin = 60 * 1000;
using Columns = std::pair<std::vector<Timestamp>, std::vector<double>>;

Columns Direct(const Series& s, Timestamp mint, Timestamp maxt) {
  Columns c{{7}, {7}};  // replaced, not appended to
  REQUIRE(s.Samples(mint, maxt, &c.first, &c.second).ok());
  return c;
}

Columns ByIterator(const Series& s, Timestamp mint, Timestamp maxt) {
  Columns c;
  REQUIRE(s.Series::Samples(mint, maxt, &c.first, &c.second).ok());
  return c;
}

// Series i gets a sample every minute from minute i % 7 to minute 60.
void FillSeriesSamplesDb(DB* db, int n) {
  std::vector<SeriesRef> refs(n, 0);
  for (int m = 0; m <= 60; ++m) {
    auto app = db->NewAppender();
    for (int i = 0; i < n; ++i) {
      if (m < i % 7) continue;
      Labels l{{"__name__", "m"}, {"i", std::to_string(i)}};
      auto r = app->Append(refs[i], l, m * kSeriesSamplesMin, m * 10.0 + i);
      REQUIRE(r.ok());
      refs[i] = *r;
    }
    REQUIRE(app->Commit().ok());
  }
}

// A DB of `n` series filled and flushed with 8-sample chunks: most chunks
// cut and written to RocksDB, the newest still in the head.
std::unique_ptr<DB> OpenFlushed(const std::string& dir, int n) {
  Options o;
  o.max_chunk_samples = 8;
  auto db = MustOpen(dir, o);
  FillSeriesSamplesDb(db.get(), n);
  REQUIRE(db->Flush().ok());
  return db;
}

// Every window of a grid over the querier's range and a little beyond.
void CheckWindows(Querier* q, bool latest, size_t want_series) {
  auto set = latest ? q->SelectLatest({Eq("__name__", "m")})
                    : q->SelectUnsorted({Eq("__name__", "m")});
  REQUIRE(set.ok());
  size_t series = 0, nonempty = 0;
  while ((*set)->Next()) {
    ++series;
    const Series& s = (*set)->At();
    for (Timestamp lo = -kSeriesSamplesMin; lo <= 62 * kSeriesSamplesMin;
         lo += 5 * kSeriesSamplesMin + 17) {
      for (Timestamp hi = lo; hi <= 63 * kSeriesSamplesMin;
           hi += 9 * kSeriesSamplesMin - 1000) {
        INFO((*set)->At().labels().ToString()
             << " [" << lo << ", " << hi << "]");
        const Columns want = ByIterator(s, lo, hi);
        CHECK(Direct(s, lo, hi) == want);
        if (!want.first.empty()) ++nonempty;
      }
    }
  }
  REQUIRE((*set)->err().ok());
  CHECK(series == want_series);
  CHECK(nonempty > 0);
}

TEST_CASE("Samples equals the iterator's samples, head and RocksDB chunks",
          "[storage][samples]") {
  testutil::TempDir dir;
  auto db = OpenFlushed(dir.path(), 20);
  for (auto [mint, maxt] :
       {std::pair<Timestamp, Timestamp>{0, 60 * kSeriesSamplesMin},
        {13 * kSeriesSamplesMin + 1, 41 * kSeriesSamplesMin - 1},
        {59 * kSeriesSamplesMin, 70 * kSeriesSamplesMin}}) {
    auto q = db->NewQuerier(mint, maxt);
    REQUIRE(q.ok());
    CheckWindows(q->get(), false, 20);
    CheckWindows(q->get(), true, 20);
  }
}

TEST_CASE("Samples skips tombstoned samples as the iterator does",
          "[storage][samples]") {
  testutil::TempDir dir;
  auto db = OpenFlushed(dir.path(), 10);
  // One chunk wholly deleted, others cut in the middle.
  std::vector<Matcher> all{Eq("__name__", "m")};
  REQUIRE(db->DeleteSeries(all, 10 * kSeriesSamplesMin, 14 * kSeriesSamplesMin)
              .ok());
  REQUIRE(db->DeleteSeries(all, 20 * kSeriesSamplesMin, 31 * kSeriesSamplesMin)
              .ok());
  std::vector<Matcher> one{Eq("i", "3")};
  REQUIRE(db->DeleteSeries(one, 50 * kSeriesSamplesMin, 60 * kSeriesSamplesMin)
              .ok());
  auto q = db->NewQuerier(0, 60 * kSeriesSamplesMin);
  REQUIRE(q.ok());
  CheckWindows(q->get(), false, 10);
  // A window inside a deleted interval is empty.
  auto set = (*q)->SelectUnsorted({Eq("__name__", "m")});
  REQUIRE(set.ok());
  REQUIRE((*set)->Next());
  CHECK(Direct((*set)->At(), 21 * kSeriesSamplesMin, 30 * kSeriesSamplesMin)
            .first.empty());
}

TEST_CASE("Samples reads cold series", "[storage][samples]") {
  testutil::TempDir dir;
  Options o;
  o.retention_ms = 0;
  o.head_idle_ms = 10 * kSeriesSamplesMin;
  o.max_chunk_samples = 8;
  auto db = MustOpen(dir.path(), o);
  FillSeriesSamplesDb(db.get(), 10);
  // Nothing appended for 30 minutes: head GC makes every series cold.
  REQUIRE(db->ApplyRetention(90 * kSeriesSamplesMin).ok());
  REQUIRE(db->Stats().cold_series == 10);
  auto q = db->NewQuerier(0, 60 * kSeriesSamplesMin);
  REQUIRE(q.ok());
  CheckWindows(q->get(), false, 10);
}

}  // namespace
}  // namespace vigil::storage
