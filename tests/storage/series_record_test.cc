// The head's series record (storage/internal/head.h, MemSeries): its label
// symbol ids are stored as varints after the struct, so every id width
// must come back exactly, and a series with more labels than the decoders'
// inline buffers must still read, match and index right through the DB.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "storage/db.h"
#include "storage/internal/head.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using internal::MemSeries;
using internal::SeriesSyms;

TEST_CASE("series record: symbol ids of every varint width round-trip",
          "[storage][head]") {
  // 1 to 5 bytes each: 0, 127 | 128, 16383 | 16384, 2^21-1 | 2^21, 2^28-1 |
  // 2^28, UINT32_MAX.
  const std::vector<uint32_t> ids = {0,        127,
                                     128,      16383,
                                     16384,    (1u << 21) - 1,
                                     1u << 21, (1u << 28) - 1,
                                     1u << 28, UINT32_MAX};
  MemSeries* s = MemSeries::New(7, ids.data(), uint16_t(ids.size() / 2));
  CHECK(s->ref == 7);
  CHECK(s->num_labels == ids.size() / 2);
  CHECK(s->SymBytes() == 1 + 1 + 2 + 2 + 3 + 3 + 4 + 4 + 5 + 5);
  const SeriesSyms got(*s);
  REQUIRE(got.size() == ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    INFO(i);
    CHECK(got[i] == ids[i]);
  }
  // A new record is indexed, not persisted, evicted or dirty; flags are
  // independent bits.
  CHECK(s->Has(MemSeries::kIndexed));
  CHECK_FALSE(s->Has(MemSeries::kPersisted));
  s->Set(MemSeries::kPersisted, true);
  s->Set(MemSeries::kDirty, true);
  s->Set(MemSeries::kIndexed, false);
  CHECK(s->Has(MemSeries::kPersisted));
  CHECK(s->Has(MemSeries::kDirty));
  CHECK_FALSE(s->Has(MemSeries::kIndexed));
  CHECK_FALSE(s->Has(MemSeries::kEvicted));
  MemSeries::Delete(s);

  MemSeries* empty = MemSeries::New(1, nullptr, 0);
  CHECK(empty->SymBytes() == 0);
  CHECK(SeriesSyms(*empty).size() == 0);
  MemSeries::Delete(empty);
}

TEST_CASE("series record: a series with 40 labels reads, matches and lists",
          "[storage][head]") {
  testutil::TempDir dir;
  auto db = testutil::MustOpen(dir.path());
  // 40 labels (past the 16 decoded inline and the 32 resolved inline),
  // values long enough and many enough for multi-byte symbol ids.
  std::vector<Label> lbs = {{"__name__", "wide"}};
  for (int i = 0; i < 39; ++i) {
    lbs.push_back({"l" + std::to_string(100 + i), "v" + std::to_string(i * i)});
  }
  const Labels wide = Labels::FromUnsorted(lbs);
  {
    auto app = db->NewAppender();
    for (int i = 0; i < 300; ++i) {
      REQUIRE(app->Append(0,
                          Labels{{"__name__", "filler"},
                                 {"k", "value-" + std::to_string(i)}},
                          1000, i)
                  .ok());
    }
    REQUIRE(app->Append(0, wide, 1000, 1.5).ok());
    REQUIRE(app->Commit().ok());
  }
  // Found again by labels: the second commit goes to the same series.
  {
    auto app = db->NewAppender();
    REQUIRE(app->Append(0, wide, 2000, 2.5).ok());
    REQUIRE(app->Commit().ok());
  }
  auto got = testutil::Query(db.get(), {testutil::Eq("l138", "v1444")});
  REQUIRE(got.size() == 1);
  CHECK(got.begin()->first == wide.ToString());
  CHECK(got.begin()->second == testutil::Samples{{1000, 1.5}, {2000, 2.5}});

  auto q = db->NewQuerier(kMinTimestamp, kMaxTimestamp);
  REQUIRE(q.ok());
  auto names = (*q)->LabelNames({testutil::Eq("__name__", "wide")});
  REQUIRE(names.ok());
  CHECK(names->size() == 40);
  auto values = (*q)->LabelValues("l120", {testutil::Eq("__name__", "wide")});
  REQUIRE(values.ok());
  CHECK(*values == std::vector<std::string>{"v400"});
}

}  // namespace
}  // namespace vigil::storage
