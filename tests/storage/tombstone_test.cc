// Deletion with tombstones: DB::DeleteSeries hides samples from every read
// at once and across restarts, DB::CleanTombstones (and Compact) removes
// them from disk, and series left empty disappear (storage/db.h).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>

#include "rocksdb/db.h"
#include "storage/db.h"
#include "storage/internal/tombstones.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using internal::AddInterval;
using internal::Interval;
using internal::Intervals;
using testutil::Eq;
using testutil::Query;
using testutil::Re;
using testutil::Samples;
using testutil::TempDir;

// Without retention: the tests' timestamps are near the epoch.
std::unique_ptr<DB> MustOpenNoRetention(const std::string& dir,
                                        Options o = {}) {
  o.retention_ms = 0;
  return testutil::MustOpen(dir, o);
}

std::vector<std::string> Values(DB* db, const std::string& name,
                                std::vector<Matcher> ms = {}) {
  auto q = db->NewQuerier(kMinTimestamp, kMaxTimestamp);
  REQUIRE(q.ok());
  auto v = (*q)->LabelValues(name, ms);
  REQUIRE(v.ok());
  return *v;
}

std::vector<std::string> Names(DB* db, std::vector<Matcher> ms = {}) {
  auto q = db->NewQuerier(kMinTimestamp, kMaxTimestamp);
  REQUIRE(q.ok());
  auto v = (*q)->LabelNames(ms);
  REQUIRE(v.ok());
  return *v;
}

std::vector<std::string> AllSeries(DB* db) {
  std::vector<std::string> out;
  db->ForEachSeries(
      [&](SeriesRef, const Labels& l) { out.push_back(l.ToString()); });
  return out;
}

uint64_t ChunkSamples(DB* db) {
  uint64_t n = 0;
  REQUIRE(
      db->ForEachChunk(kMinTimestamp, kMaxTimestamp, [&](const ChunkMeta& c) {
          n += c.num_samples;
        }).ok());
  return n;
}

Labels TombstoneLabels(std::string_view name, std::string_view a) {
  return Labels::FromSorted(
      {{"__name__", std::string(name)}, {"a", std::string(a)}});
}

// Samples at 0, 10, ..., 10*(n-1) with value t/10, for series a="1", a="2"
// of metric m.
void Fill(DB* db, int n, Timestamp from = 0) {
  auto app = db->NewAppender();
  for (int i = 0; i < n; ++i) {
    Timestamp t = from + 10 * i;
    REQUIRE(app->Append(0, TombstoneLabels("m", "1"), t, double(t) / 10).ok());
    REQUIRE(app->Append(0, TombstoneLabels("m", "2"), t, double(t) / 10).ok());
  }
  REQUIRE(app->Commit().ok());
}

Samples Range(Timestamp from, Timestamp to) {  // inclusive, step 10
  Samples s;
  for (Timestamp t = from; t <= to; t += 10) s.push_back({t, double(t) / 10});
  return s;
}

const char kA1[] = "{__name__=\"m\", a=\"1\"}";
const char kA2[] = "{__name__=\"m\", a=\"2\"}";

TEST_CASE("Intervals merge when they overlap or touch", "[tombstone]") {
  Intervals ivs;
  AddInterval(&ivs, {10, 20});
  AddInterval(&ivs, {40, 50});
  CHECK(ivs == Intervals{{10, 20}, {40, 50}});
  AddInterval(&ivs, {21, 25});  // adjacent
  CHECK(ivs == Intervals{{10, 25}, {40, 50}});
  AddInterval(&ivs, {0, 45});
  CHECK(ivs == Intervals{{0, 50}});
  AddInterval(&ivs, {kMinTimestamp, kMaxTimestamp});
  CHECK(ivs == Intervals{{kMinTimestamp, kMaxTimestamp}});
  std::vector<Timestamp> ts = {1, 5, 9, 12};
  std::vector<double> vs = {1, 5, 9, 12};
  CHECK(internal::FilterSamples({{2, 5}, {9, 9}}, &ts, &vs) == 2);
  CHECK(ts == std::vector<Timestamp>{1, 12});
  CHECK(vs == std::vector<double>{1, 12});
}

TEST_CASE("Tombstone records round-trip and reject damage", "[tombstone]") {
  internal::Tombstone t;
  t.intervals = {{kMinTimestamp, -5}, {7, kMaxTimestamp}};
  t.hidden_until = 99;
  std::string rec = internal::EncodeTombstone(t);
  internal::Tombstone back;
  REQUIRE(internal::DecodeTombstone(rec, &back));
  CHECK(back.intervals == t.intervals);
  CHECK(back.hidden_until == 99);
  for (size_t i = 0; i < rec.size(); ++i) {
    std::string bad = rec;
    bad[i] ^= 0x10;
    CHECK_FALSE(internal::DecodeTombstone(bad, &back));
  }
  CHECK_FALSE(internal::DecodeTombstone(rec.substr(0, rec.size() - 1), &back));
}

TEST_CASE("DeleteSeries hides a range from queries at once", "[tombstone]") {
  TempDir tmp;
  Options o;
  o.max_chunk_samples = 16;  // several chunks, some persisted
  auto db = MustOpenNoRetention(tmp.path(), o);
  Fill(db.get(), 100);  // 0 .. 990
  REQUIRE(db->DeleteSeries(std::vector{Eq("a", "1")}, 95, 505).ok());
  auto r = Query(db.get(), {Eq("__name__", "m")});
  Samples want = Range(0, 90);
  for (auto& s : Range(510, 990)) want.push_back(s);
  CHECK(r[kA1] == want);
  CHECK(r[kA2] == Range(0, 990));
  // Bounded queries, Seek and NextBatch see the same.
  CHECK(Query(db.get(), {Eq("a", "1")}, 100, 500).empty());
  CHECK(Query(db.get(), {Eq("a", "1")}, 80, 520)[kA1] ==
        Samples{{80, 8}, {90, 9}, {510, 51}, {520, 52}});
  auto q = db->NewQuerier(kMinTimestamp, kMaxTimestamp);
  REQUIRE(q.ok());
  auto set = (*q)->Select({Eq("a", "1")});
  REQUIRE(set.ok());
  REQUIRE((*set)->Next());
  auto it = (*set)->At().Iterator();
  REQUIRE(it->Seek(200));
  CHECK(it->t() == 510);
  Timestamp ts[1000];
  double vs[1000];
  auto it2 = (*set)->At().Iterator();
  size_t n = 0, got;
  while ((got = it2->NextBatch(ts + n, vs + n, 7)) > 0) n += got;
  CHECK(n == want.size());
  CHECK(ts[10] == 510);
  // Partly deleted series keep their labels; the chunks count what is left.
  CHECK(Values(db.get(), "a") == std::vector<std::string>{"1", "2"});
  CHECK(ChunkSamples(db.get()) == 200 - 41);
  CHECK(db->Stats().num_series == 2);
}

TEST_CASE("A series whose every sample is deleted disappears", "[tombstone]") {
  TempDir tmp;
  Options o;
  o.max_chunk_samples = 16;
  auto db = MustOpenNoRetention(tmp.path(), o);
  Fill(db.get(), 50);
  REQUIRE(db->Flush().ok());
  Fill(db.get(), 10, 500);  // some in the head too
  REQUIRE(
      db->DeleteSeries(std::vector{Eq("a", "2")}, kMinTimestamp, kMaxTimestamp)
          .ok());
  CHECK(Query(db.get(), {Eq("__name__", "m")}).size() == 1);
  CHECK(Query(db.get(), {Eq("a", "2")}).empty());
  CHECK(Values(db.get(), "a") == std::vector<std::string>{"1"});
  CHECK(Values(db.get(), "a", {Eq("__name__", "m")}) ==
        std::vector<std::string>{"1"});
  CHECK(Names(db.get(), {Eq("a", "2")}).empty());
  CHECK(AllSeries(db.get()) == std::vector<std::string>{kA1});
  CHECK(db->Stats().num_series == 1);
  CHECK(ChunkSamples(db.get()) == 60);
  // The same from a delete in two pieces that leave no sample between.
  REQUIRE(db->DeleteSeries(std::vector{Eq("a", "1")}, 0, 200).ok());
  CHECK(Values(db.get(), "a") == std::vector<std::string>{"1"});
  REQUIRE(db->DeleteSeries(std::vector{Eq("a", "1")}, 205, 590).ok());
  CHECK(Values(db.get(), "a").empty());
  CHECK(Names(db.get()).empty());
  CHECK(db->Stats().num_series == 0);
}

TEST_CASE("Tombstones survive a restart, with or without a checkpoint",
          "[tombstone]") {
  TempDir tmp;
  bool checkpoint = GENERATE(false, true);
  auto write = [&] {
    Options o;
    o.max_chunk_samples = 16;
    auto db = MustOpenNoRetention(tmp.path(), o);
    Fill(db.get(), 40);
    REQUIRE(db->DeleteSeries(std::vector{Re("a", ".+")}, 100, 200).ok());
    REQUIRE(db->DeleteSeries(std::vector{Eq("a", "2")}, 0, 1000).ok());
    return db;
  };
  if (checkpoint) {
    write();
  } else {
    // A child that dies without closing, as kill -9 would: the head comes
    // back from WAL replay.
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      auto db = write();
      _exit(0);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
  }
  auto db = MustOpenNoRetention(tmp.path());
  auto r = Query(db.get(), {Eq("__name__", "m")});
  Samples want = Range(0, 90);
  for (auto& s : Range(210, 390)) want.push_back(s);
  CHECK(r.size() == 1);
  CHECK(r[kA1] == want);
  CHECK(Values(db.get(), "a") == std::vector<std::string>{"1"});
}

TEST_CASE("Samples appended after a delete are not hidden", "[tombstone]") {
  TempDir tmp;
  auto db = MustOpenNoRetention(tmp.path());
  Fill(db.get(), 10);  // 0 .. 90
  REQUIRE(db->DeleteSeries(std::vector{Eq("a", "1")}, 50, kMaxTimestamp).ok());
  REQUIRE(
      db->DeleteSeries(std::vector{Eq("a", "2")}, kMinTimestamp, kMaxTimestamp)
          .ok());
  CHECK(Values(db.get(), "a") == std::vector<std::string>{"1"});
  Fill(db.get(), 3, 100);  // 100 .. 120: newer than the delete saw
  auto r = Query(db.get(), {Eq("__name__", "m")});
  Samples want = Range(0, 40);
  for (auto& s : Range(100, 120)) want.push_back(s);
  CHECK(r[kA1] == want);
  CHECK(r[kA2] == Range(100, 120));
  CHECK(Values(db.get(), "a") == std::vector<std::string>{"1", "2"});
}

TEST_CASE("CleanTombstones removes deleted samples and empty series",
          "[tombstone]") {
  TempDir tmp;
  Options o;
  o.max_chunk_samples = 16;
  {
    auto db = MustOpenNoRetention(tmp.path(), o);
    Fill(db.get(), 100);
    REQUIRE(db->Flush().ok());
    Fill(db.get(), 5, 1000);
    REQUIRE(db->DeleteSeries(std::vector{Eq("a", "1")}, 95, 505).ok());
    REQUIRE(db->DeleteSeries(std::vector{Eq("a", "2")}, kMinTimestamp,
                             kMaxTimestamp)
                .ok());
    CHECK(ChunkSamples(db.get()) == 105 - 41);
    REQUIRE(db->CleanTombstones().ok());
    CHECK(ChunkSamples(db.get()) == 105 - 41);
    Samples want = Range(0, 90);
    for (auto& s : Range(510, 1040)) want.push_back(s);
    auto r = Query(db.get(), {Eq("__name__", "m")});
    CHECK(r.size() == 1);
    CHECK(r[kA1] == want);
    CHECK(AllSeries(db.get()) == std::vector<std::string>{kA1});
    CHECK(db->Stats().num_series == 1);
    CHECK(Values(db.get(), "a") == std::vector<std::string>{"1"});
    REQUIRE(db->CleanTombstones().ok());  // nothing left to do
  }
  {
    auto db = MustOpenNoRetention(tmp.path(), o);
    CHECK(AllSeries(db.get()) == std::vector<std::string>{kA1});
    CHECK(ChunkSamples(db.get()) == 105 - 41);
    // The forgotten series comes back when appended to.
    auto app = db->NewAppender();
    REQUIRE(app->Append(0, TombstoneLabels("m", "2"), 2000, 1).ok());
    REQUIRE(app->Commit().ok());
    CHECK(Query(db.get(), {Eq("a", "2")})[kA2] == Samples{{2000, 1}});
  }
  auto db = MustOpenNoRetention(tmp.path(), o);
  CHECK(Query(db.get(), {Eq("a", "2")})[kA2] == Samples{{2000, 1}});
  CHECK(AllSeries(db.get()).size() == 2);
  // The tombstones family is empty.
  rocksdb::DB* raw = nullptr;
  db.reset();
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  std::vector<std::string> names;
  REQUIRE(
      rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), tmp.path(), &names)
          .ok());
  for (const auto& n : names) cfs.push_back({n, {}});
  std::vector<rocksdb::ColumnFamilyHandle*> hs;
  REQUIRE(rocksdb::DB::OpenForReadOnly(rocksdb::DBOptions(), tmp.path(), cfs,
                                       &hs, &raw)
              .ok());
  for (auto* h : hs) {
    if (h->GetName() != "tombstones") continue;
    std::unique_ptr<rocksdb::Iterator> it(raw->NewIterator({}, h));
    it->SeekToFirst();
    CHECK_FALSE(it->Valid());
  }
  for (auto* h : hs) raw->DestroyColumnFamilyHandle(h);
  delete raw;
}

TEST_CASE("A clean that deletes the newest samples keeps appends in order",
          "[tombstone]") {
  TempDir tmp;
  {
    auto db = MustOpenNoRetention(tmp.path());
    Fill(db.get(), 10);  // 0 .. 90, all in the open chunks
    REQUIRE(db->DeleteSeries(std::vector{Eq("a", "1")}, 60, 90).ok());
    REQUIRE(db->DeleteSeries(std::vector{Eq("a", "2")}, 20, 30).ok());
    REQUIRE(db->CleanTombstones().ok());
    auto r = Query(db.get(), {Eq("__name__", "m")});
    CHECK(r[kA1] == Range(0, 50));
    Samples a2 = Range(0, 10);
    for (auto& s : Range(40, 90)) a2.push_back(s);
    CHECK(r[kA2] == a2);
    // a="1" still had a sample at 90: 70 is out of order, 90 again with
    // another value a duplicate, 100 is next.
    auto app = db->NewAppender();
    CHECK_FALSE(app->Append(0, TombstoneLabels("m", "1"), 70, 7).ok());
    CHECK_FALSE(app->Append(0, TombstoneLabels("m", "1"), 90, 1).ok());
    REQUIRE(app->Append(0, TombstoneLabels("m", "1"), 100, 10).ok());
    REQUIRE(app->Append(0, TombstoneLabels("m", "2"), 100, 10).ok());
    REQUIRE(app->Commit().ok());
  }
  auto db = MustOpenNoRetention(tmp.path());
  auto r = Query(db.get(), {Eq("__name__", "m")});
  Samples a1 = Range(0, 50);
  a1.push_back({100, 10});
  CHECK(r[kA1] == a1);
  CHECK(r[kA2].size() == 9);
  auto app = db->NewAppender();
  CHECK_FALSE(app->Append(0, TombstoneLabels("m", "1"), 95, 7).ok());
  REQUIRE(app->Append(0, TombstoneLabels("m", "1"), 110, 11).ok());
  REQUIRE(app->Commit().ok());
  CHECK(Query(db.get(), {Eq("a", "1")})[kA1].back() ==
        std::pair<Timestamp, double>{110, 11});
}

TEST_CASE("Appending to a series forgotten by a clean, without restart",
          "[tombstone]") {
  TempDir tmp;
  auto db = MustOpenNoRetention(tmp.path());
  auto app = db->NewAppender();
  auto ref = app->Append(0, TombstoneLabels("m", "1"), 10, 1);
  REQUIRE(ref.ok());
  REQUIRE(app->Commit().ok());
  REQUIRE(db->DeleteSeries(std::vector{Eq("a", "1")}, 0, 10).ok());
  REQUIRE(db->CleanTombstones().ok());
  CHECK(AllSeries(db.get()).empty());
  CHECK(Names(db.get()).empty());
  // Through the ref an appender cached, as a scrape loop does.
  REQUIRE(app->Append(*ref, {}, 20, 2).ok());
  REQUIRE(app->Commit().ok());
  CHECK(Query(db.get(), {Eq("a", "1")})[kA1] == Samples{{20, 2}});
  CHECK(db->Stats().num_series == 1);
  db.reset();
  db = MustOpenNoRetention(tmp.path());
  CHECK(Query(db.get(), {Eq("a", "1")})[kA1] == Samples{{20, 2}});
}

TEST_CASE("Compact also cleans tombstones", "[tombstone]") {
  TempDir tmp;
  auto db = MustOpenNoRetention(tmp.path());
  Fill(db.get(), 20);
  REQUIRE(db->Flush().ok());
  REQUIRE(db->DeleteSeries(std::vector{Eq("a", "1")}, 0, 100).ok());
  REQUIRE(db->Compact().ok());
  CHECK(Query(db.get(), {Eq("a", "1")})[kA1] == Range(110, 190));
  CHECK(ChunkSamples(db.get()) == 40 - 11);
}

TEST_CASE("DeleteSeries argument and mode errors", "[tombstone]") {
  TempDir tmp;
  {
    auto db = MustOpenNoRetention(tmp.path());
    Fill(db.get(), 5);
    CHECK(db->DeleteSeries({}, 0, 10).code() ==
          absl::StatusCode::kInvalidArgument);
    REQUIRE(db->DeleteSeries(std::vector{Eq("a", "1")}, 30, 10).ok());
    REQUIRE(db->DeleteSeries(std::vector{Eq("a", "nosuch")}, 0, 10).ok());
    CHECK(Query(db.get(), {Eq("__name__", "m")}).size() == 2);
    // Matchers that all accept "" select every series, as in Prometheus.
    REQUIRE(db->DeleteSeries(std::vector{Re("a", ".*")}, 0, 0).ok());
    CHECK(Query(db.get(), {Eq("a", "2")})[kA2] == Range(10, 40));
  }
  Options ro;
  ro.read_only = true;
  auto db = MustOpenNoRetention(tmp.path(), ro);
  // A read-only DB applies the tombstones it finds.
  CHECK(Query(db.get(), {Eq("a", "1")})[kA1] == Range(10, 40));
  CHECK(db->DeleteSeries(std::vector{Eq("a", "1")}, 0, 10).code() ==
        absl::StatusCode::kFailedPrecondition);
  CHECK(db->CleanTombstones().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("A directory that never deleted has no tombstones family",
          "[tombstone]") {
  TempDir tmp;
  {
    auto db = MustOpenNoRetention(tmp.path());
    Fill(db.get(), 5);
  }
  std::vector<std::string> names;
  REQUIRE(
      rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), tmp.path(), &names)
          .ok());
  CHECK(std::find(names.begin(), names.end(), "tombstones") == names.end());
  Options ro;
  ro.read_only = true;
  CHECK(
      Query(MustOpenNoRetention(tmp.path(), ro).get(), {Eq("a", "1")}).size() ==
      1);
}

TEST_CASE("A damaged tombstone record is DataLoss at open", "[tombstone]") {
  TempDir tmp;
  {
    auto db = MustOpenNoRetention(tmp.path());
    Fill(db.get(), 5);
    REQUIRE(db->DeleteSeries(std::vector{Eq("a", "1")}, 0, 10).ok());
  }
  {
    std::vector<std::string> names;
    REQUIRE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), tmp.path(),
                                            &names)
                .ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    for (const auto& n : names) cfs.push_back({n, {}});
    std::vector<rocksdb::ColumnFamilyHandle*> hs;
    rocksdb::DB* raw = nullptr;
    REQUIRE(rocksdb::DB::Open(rocksdb::DBOptions(), tmp.path(), cfs, &hs, &raw)
                .ok());
    for (auto* h : hs) {
      if (h->GetName() != "tombstones") continue;
      std::unique_ptr<rocksdb::Iterator> it(raw->NewIterator({}, h));
      it->SeekToFirst();
      REQUIRE(it->Valid());
      std::string v = it->value().ToString();
      v[v.size() - 1] ^= 1;
      REQUIRE(raw->Put({}, h, it->key(), v).ok());
    }
    for (auto* h : hs) raw->DestroyColumnFamilyHandle(h);
    delete raw;
  }
  auto db = DB::Open({}, tmp.path());
  REQUIRE_FALSE(db.ok());
  CHECK(db.status().code() == absl::StatusCode::kDataLoss);
  CHECK(std::string(db.status().message()).find("tombstone") !=
        std::string::npos);
}

}  // namespace
}  // namespace vigil::storage
