// The cold family's postings (storage/internal/cold_keys.h): ordered by
// label pair and then by the series' newest sample, so a selection, a
// label listing and a value listing read only the cold series whose
// newest sample is in their range; and the first layout (time in the
// value) is still read by a read-only open and rewritten by a writable one.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rocksdb/db.h"
#include "storage/db.h"
#include "storage/internal/coding.h"
#include "storage/internal/cold_keys.h"
#include "storage/verify.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::Eq;
using testutil::MustOpen;
using testutil::Query;
using testutil::Re;

constexpr Timestamp kColdMin = 60 * 1000;
constexpr int kColdSeries = 20;

Options ColdGcOptions() {
  Options o;
  o.retention_ms = 0;
  o.head_idle_ms = 10 * kColdMin;
  return o;
}

// Series i has samples every minute up to minute 10 + i; those with an
// even i carry a label `even` the others lack. A busy series keeps going
// to minute 60, when the idle ones are evicted.
Labels ColdSeriesLabels(int i) {
  Labels l{{"__name__", "m"}, {"job", "idle"}, {"i", std::to_string(i)}};
  if (i % 2 == 0)
    l = Labels{{"__name__", "m"},
               {"even", "yes"},
               {"i", std::to_string(i)},
               {"job", "idle"}};
  return l;
}

void FillAndEvict(DB* db) {
  auto app = db->NewAppender();
  for (int m = 1; m <= 60; ++m) {
    for (int i = 0; i < kColdSeries; ++i) {
      if (m <= 10 + i)
        REQUIRE(app->Append(0, ColdSeriesLabels(i), m * kColdMin, m).ok());
    }
    REQUIRE(app->Append(0, Labels{{"__name__", "m"}, {"job", "busy"}},
                        m * kColdMin, m)
                .ok());
    REQUIRE(app->Commit().ok());
  }
  REQUIRE(db->ApplyRetention(60 * kColdMin).ok());
  REQUIRE(db->Stats().cold_series == kColdSeries);
}

std::vector<std::string> ColdValues(DB* db, const std::string& name,
                                    Timestamp mint) {
  auto q = db->NewQuerier(mint, kMaxTimestamp);
  REQUIRE(q.ok());
  auto v = (*q)->LabelValues(name, {});
  REQUIRE(v.ok());
  return *v;
}

std::vector<std::string> ColdNames(DB* db, Timestamp mint) {
  auto q = db->NewQuerier(mint, kMaxTimestamp);
  REQUIRE(q.ok());
  auto v = (*q)->LabelNames({});
  REQUIRE(v.ok());
  return *v;
}

// The idle series' `i` values with a sample at or after minute m.
std::vector<std::string> Expected(int m) {
  std::vector<std::string> out;
  for (int i = 0; i < kColdSeries; ++i) {
    if (10 + i >= m) out.push_back(std::to_string(i));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The `i` values of a query's series.
std::vector<std::string> Is(const std::map<std::string, testutil::Samples>& r) {
  std::vector<std::string> out;
  for (const auto& [name, samples] : r) {
    auto at = name.find("i=\"");
    if (at == std::string::npos) continue;
    out.push_back(name.substr(at + 3, name.find('"', at + 3) - at - 3));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every reading of the cold postings over ranges starting at each minute.
void CheckRanges(DB* db) {
  for (int m : {1, 12, 19, 20, 25, 29, 30}) {
    INFO("range from minute " << m);
    const Timestamp mint = m * kColdMin;
    const std::vector<std::string> want = Expected(m);
    // An equality drives the selection (one value's postings).
    CHECK(Is(Query(db, {Eq("job", "idle")}, mint)) == want);
    // A regex drives it (each matching value's postings).
    CHECK(Is(Query(db, {Re("i", "1.*|2.*|3|5")}, mint)) == [&] {
      std::vector<std::string> w;
      for (const auto& v : want) {
        if (v[0] == '1' || v[0] == '2' || v == "3" || v == "5") {
          w.push_back(v);
        }
      }
      return w;
    }());
    CHECK(ColdValues(db, "i", mint) == want);
    // `even` is only on even series: listed while one of them is in range.
    bool even = false;
    for (const auto& v : want) even |= std::stoi(v) % 2 == 0;
    std::vector<std::string> names = ColdNames(db, mint);
    CHECK((std::find(names.begin(), names.end(), "even") != names.end()) ==
          even);
  }
}

// Rewrites the cold postings in the first layout: "p" keys, time in the
// value.
void ToFirstLayout(const std::string& path) {
  std::vector<std::string> names;
  REQUIRE(
      rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : names) cfs.push_back({n, {}});
  std::vector<rocksdb::ColumnFamilyHandle*> hs;
  rocksdb::DB* raw = nullptr;
  REQUIRE(rocksdb::DB::Open(rocksdb::DBOptions(), path, cfs, &hs, &raw).ok());
  int moved = 0;
  for (auto* h : hs) {
    if (h->GetName() != "cold") continue;
    std::unique_ptr<rocksdb::Iterator> it(raw->NewIterator({}, h));
    for (it->Seek("q"); it->Valid() && it->key().starts_with("q"); it->Next()) {
      std::string_view name, value;
      Timestamp t;
      uint64_t ref;
      REQUIRE(internal::ParsePostingKey(
          std::string_view(it->key().data(), it->key().size()), &name, &value,
          &t, &ref));
      std::string v;
      internal::PutOrderedI64(&v, t);
      REQUIRE(raw->Put({}, h, internal::LegacyPostingKey(name, value, ref), v)
                  .ok());
      REQUIRE(raw->Delete({}, h, it->key()).ok());
      ++moved;
    }
  }
  CHECK(moved == kColdSeries * 3 + kColdSeries / 2);
  for (auto* h : hs) raw->DestroyColumnFamilyHandle(h);
  delete raw;
}

TEST_CASE("cold postings: a range reads the cold series it reaches",
          "[storage][headgc]") {
  testutil::TempDir dir;
  auto db = MustOpen(dir.path(), ColdGcOptions());
  FillAndEvict(db.get());
  CheckRanges(db.get());
  // Past the newest cold sample nothing cold is read at all.
  CHECK(Is(Query(db.get(), {Eq("job", "idle")}, 31 * kColdMin)).empty());
}

TEST_CASE("cold postings: the first layout is read, then rewritten",
          "[storage][headgc]") {
  testutil::TempDir dir;
  std::map<std::string, testutil::Samples> before;
  {
    auto db = MustOpen(dir.path(), ColdGcOptions());
    FillAndEvict(db.get());
    before = Query(db.get(), {Eq("__name__", "m")});
  }
  ToFirstLayout(dir.path());
  auto report = Verify(dir.path());
  REQUIRE(report.ok());
  CHECK(report->damage.empty());
  {
    Options ro = ColdGcOptions();
    ro.read_only = true;
    auto db = MustOpen(dir.path(), ro);
    CHECK(Query(db.get(), {Eq("__name__", "m")}) == before);
    CheckRanges(db.get());
  }
  {
    auto db = MustOpen(dir.path(), ColdGcOptions());
    CHECK(Query(db.get(), {Eq("__name__", "m")}) == before);
    CheckRanges(db.get());
    // A sample revives a series whose postings were rewritten.
    auto app = db->NewAppender();
    REQUIRE(app->Append(0, ColdSeriesLabels(4), 61 * kColdMin, 1).ok());
    REQUIRE(app->Commit().ok());
    CHECK(db->Stats().cold_series == kColdSeries - 1);
  }
  report = Verify(dir.path());
  REQUIRE(report.ok());
  CHECK(report->damage.empty());
  // Only the new layout is left: s, q per label, h (one per series).
  const int labels = kColdSeries * 3 + kColdSeries / 2 - 4;
  CHECK(report->records["cold"] == (kColdSeries - 1) * 2 + labels);
}

}  // namespace
}  // namespace vigil::storage
