// A series created in this process whose chunks were never written is read
// from the head alone (MemSeries::kHeadOnly: no RocksDB seek); once any of
// its chunks is written — by a commit, a checkpoint or head GC — reads
// take RocksDB's chunks again, as do series loaded at open or revived.
#include <catch2/catch.hpp>
#include <string>

#include "storage/db.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::Eq;
using testutil::MustOpen;
using testutil::Query;
using testutil::Samples;

constexpr Timestamp kHeadOnlyMin = 60 * 1000;

Options HeadOnlyOptions() {
  Options o;
  o.retention_ms = 0;
  o.head_idle_ms = 10 * kHeadOnlyMin;
  o.max_chunk_samples = 4;  // a chunk is cut (and written) every 4 samples
  return o;
}

Labels HeadOnlyLabels(const std::string& name) {
  return Labels{{"__name__", "head_only"}, {"s", name}};
}

// Appends minutes [from, to] of series `name`, one commit per sample.
void HeadOnlyFill(DB* db, const std::string& name, int from, int to) {
  for (int m = from; m <= to; ++m) {
    auto app = db->NewAppender();
    REQUIRE(app->Append(0, HeadOnlyLabels(name), m * kHeadOnlyMin, m).ok());
    REQUIRE(app->Commit().ok());
  }
}

Samples HeadOnlyMinutes(int from, int to) {
  Samples s;
  for (int m = from; m <= to; ++m) s.push_back({m * kHeadOnlyMin, double(m)});
  return s;
}

Samples HeadOnlyRead(DB* db, const std::string& name,
                     Timestamp mint = kMinTimestamp) {
  auto got = Query(db, {Eq("s", name)}, mint);
  return got.empty() ? Samples{} : got.begin()->second;
}

TEST_CASE("head-only series: every written chunk is still read",
          "[storage][headgc]") {
  testutil::TempDir dir;
  auto db = MustOpen(dir.path(), HeadOnlyOptions());

  // Three samples: nothing written yet, all in the head.
  HeadOnlyFill(db.get(), "young", 1, 3);
  CHECK(HeadOnlyRead(db.get(), "young") == HeadOnlyMinutes(1, 3));

  // A querier opened before the first chunk is written reads it after
  // (destroyed before the DB is).
  {
    auto q = db->NewQuerier(kMinTimestamp, kMaxTimestamp);
    REQUIRE(q.ok());
    // Chunks of minutes 1-4 and 5-8 are written.
    HeadOnlyFill(db.get(), "young", 4, 11);
    auto set = (*q)->Select({Eq("s", "young")});
    REQUIRE(set.ok());
    REQUIRE((*set)->Next());
    Samples got;
    auto it = (*set)->At().Iterator();
    while (it->Next()) got.push_back({it->t(), it->v()});
    CHECK(got == HeadOnlyMinutes(1, 11));
  }
  CHECK(HeadOnlyRead(db.get(), "young") == HeadOnlyMinutes(1, 11));
  // A window starting before the head's oldest sample needs RocksDB.
  CHECK(HeadOnlyRead(db.get(), "young", 2 * kHeadOnlyMin) ==
        HeadOnlyMinutes(2, 11));

  // Head GC writes an idle series' open chunk and moves it out; reviving
  // it makes a series that has RocksDB chunks.
  HeadOnlyFill(db.get(), "idle", 1, 2);
  HeadOnlyFill(db.get(), "young", 12, 30);
  REQUIRE(db->ApplyRetention(30 * kHeadOnlyMin).ok());
  CHECK(db->Stats().cold_series == 1);
  CHECK(HeadOnlyRead(db.get(), "idle") == HeadOnlyMinutes(1, 2));
  HeadOnlyFill(db.get(), "idle", 31, 31);
  Samples idle = HeadOnlyMinutes(1, 2);
  idle.push_back({31 * kHeadOnlyMin, 31});
  CHECK(HeadOnlyRead(db.get(), "idle") == idle);

  // Series loaded at open read RocksDB too.
  db.reset();
  db = MustOpen(dir.path(), HeadOnlyOptions());
  CHECK(HeadOnlyRead(db.get(), "young") == HeadOnlyMinutes(1, 30));
  CHECK(HeadOnlyRead(db.get(), "idle") == idle);
}

}  // namespace
}  // namespace vigil::storage
