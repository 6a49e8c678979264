// The head's labels lookup keys its shards by 32 bits of the labels' hash
// (storage/internal/head.h, Head::Tag): two series whose hashes agree in
// those bits and in the shard bits are told apart by their labels, found
// again by labels, and stay findable when one of them leaves the head.
#include <catch2/catch.hpp>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::MustOpen;

constexpr Timestamp kTagMin = 60 * 1000;

Labels L(int i) { return Labels{{"__name__", "m"}, {"i", std::to_string(i)}}; }

// Two label sets whose hashes agree in the shard (low 6 bits) and the tag
// (high 32 bits): a birthday search over 38 bits, ~2^19 tries.
std::pair<int, int> Colliding() {
  absl::flat_hash_map<uint64_t, int> seen;
  for (int i = 0; i < (1 << 24); ++i) {
    const uint64_t h = L(i).Hash();
    const uint64_t k = (h >> 32) << 6 | (h & 63);
    auto [it, inserted] = seen.try_emplace(k, i);
    if (!inserted) return {it->second, i};
  }
  FAIL("no colliding pair");
  return {0, 0};
}

TEST_CASE("head: series whose hashes share the tag are told apart",
          "[storage][head]") {
  const auto [a, b] = Colliding();
  REQUIRE(L(a).Hash() != L(b).Hash());
  testutil::TempDir dir;
  Options o;
  o.retention_ms = 0;
  o.head_idle_ms = 10 * kTagMin;
  auto db = MustOpen(dir.path(), o);
  SeriesRef ra = 0, rb = 0;
  {
    auto app = db->NewAppender();
    auto x = app->Append(0, L(a), kTagMin, 1);
    auto y = app->Append(0, L(b), kTagMin, 2);
    REQUIRE(x.ok());
    REQUIRE(y.ok());
    ra = *x;
    rb = *y;
    REQUIRE(app->Commit().ok());
  }
  CHECK(ra != rb);
  // Found again by labels (ref 0), each its own series; b stays busy.
  {
    auto app = db->NewAppender();
    auto x = app->Append(0, L(a), 2 * kTagMin, 3);
    auto y = app->Append(0, L(b), 2 * kTagMin, 4);
    REQUIRE(x.ok());
    REQUIRE(y.ok());
    CHECK(*x == ra);
    CHECK(*y == rb);
    REQUIRE(app->Commit().ok());
  }
  for (int m = 3; m <= 30; ++m) {
    auto app = db->NewAppender();
    REQUIRE(app->Append(0, L(b), m * kTagMin, m).ok());
    REQUIRE(app->Commit().ok());
  }
  // a is idle: head GC takes it out; b is still found by labels.
  REQUIRE(db->ApplyRetention(30 * kTagMin).ok());
  REQUIRE(db->Stats().cold_series == 1);
  {
    auto app = db->NewAppender();
    auto y = app->Append(0, L(b), 31 * kTagMin, 31);
    REQUIRE(y.ok());
    CHECK(*y == rb);
    REQUIRE(app->Commit().ok());
  }
  auto got = testutil::Query(db.get(), {testutil::Eq("__name__", "m")});
  REQUIRE(got.size() == 2);
  CHECK(got[L(a).ToString()].size() == 2);
  CHECK(got[L(b).ToString()].size() == 31);
  // And a comes back under its ref.
  {
    auto app = db->NewAppender();
    auto x = app->Append(0, L(a), 32 * kTagMin, 5);
    REQUIRE(x.ok());
    CHECK(*x == ra);
    REQUIRE(app->Commit().ok());
  }
  CHECK(db->Stats().cold_series == 0);
}

}  // namespace
}  // namespace vigil::storage
