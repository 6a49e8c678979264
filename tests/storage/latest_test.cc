// Series::Latest, an instant selector's read: the DB answers from the
// head's newest sample when it can, and must agree with walking the
// iterator everywhere (storage/querier.h).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

struct Found {
  bool found = false;
  Timestamp t = 0;
  double v = 0;
  bool operator==(const Found& o) const {
    return found == o.found && (!found || (t == o.t && v == o.v));
  }
};

// Latest(at) and the answer by iteration, over a querier of [mint, maxt].
std::pair<Found, Found> Both(DB* db, Timestamp mint, Timestamp maxt,
                             Timestamp at) {
  auto q = db->NewQuerier(mint, maxt);
  REQUIRE(q.ok());
  auto m = *Matcher::Make(MatchType::kEqual, "__name__", "m");
  auto set = (*q)->Select({m});
  REQUIRE(set.ok());
  Found fast, slow;
  if ((*set)->Next()) {
    const Series& s = (*set)->At();
    REQUIRE(s.Latest(at, &fast.found, &fast.t, &fast.v).ok());
    auto it = s.Iterator();
    while (it->Next() && it->t() <= at) {
      slow = {true, it->t(), it->v()};
    }
    REQUIRE(it->err().ok());
  }
  return {fast, slow};
}

TEST_CASE("Latest agrees with iterating, in the head and after a restart",
          "[storage][latest]") {
  testutil::TempDir dir;
  Options o;
  o.retention_ms = 0;
  o.max_chunk_samples = 8;  // some chunks are cut and written to RocksDB
  for (int round = 0; round < 2; ++round) {
    auto db = DB::Open(o, dir.path());
    REQUIRE(db.ok());
    if (round == 0) {
      auto app = (*db)->NewAppender();
      for (int i = 1; i <= 30; ++i) {
        REQUIRE(app->Append(0, Labels{{"__name__", "m"}}, i * 1000, i).ok());
      }
      REQUIRE(app->Commit().ok());
    }
    for (Timestamp at : {0, 999, 1000, 5500, 15000, 29999, 30000, 99000}) {
      INFO("round " << round << " at " << at);
      auto [fast, slow] = Both(db->get(), kMinTimestamp, kMaxTimestamp, at);
      CHECK(fast == slow);
    }
    // The querier's range bounds the answer too.
    auto [fast, slow] = Both(db->get(), 0, 20000, 99000);
    CHECK(fast.found);
    CHECK(fast.t == 20000);
    CHECK(fast == slow);
  }
}

TEST_CASE("Latest does not answer a deleted newest sample",
          "[storage][latest]") {
  testutil::TempDir dir;
  Options o;
  o.retention_ms = 0;
  auto db = DB::Open(o, dir.path());
  REQUIRE(db.ok());
  auto app = (*db)->NewAppender();
  for (int i = 1; i <= 10; ++i) {
    REQUIRE(app->Append(0, Labels{{"__name__", "m"}}, i * 1000, i).ok());
  }
  REQUIRE(app->Commit().ok());
  auto m = *Matcher::Make(MatchType::kEqual, "__name__", "m");
  REQUIRE((*db)->DeleteSeries({&m, 1}, 9500, 10000).ok());
  auto [fast, slow] = Both(db->get(), kMinTimestamp, kMaxTimestamp, 20000);
  CHECK(fast.found);
  CHECK(fast.t == 9000);
  CHECK(fast == slow);
}

}  // namespace
}  // namespace vigil::storage
