// On-disk format versions (storage/FORMAT.md, "Format versions"): a format-1
// directory (with the never-read `postings` family) still opens, read-only
// as it is and read-write upgraded to format 2; unknown versions are
// refused; RocksDB's spare OPTIONS files are not kept.
#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "rocksdb/db.h"
#include "storage/db.h"
#include "storage/internal/coding.h"
#include "storage/internal/keys.h"
#include "storage/internal/rocksdb_status.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::Eq;

std::vector<std::pair<Timestamp, double>> UpSamples(DB* db) {
  auto q = db->NewQuerier(kMinTimestamp, kMaxTimestamp);
  REQUIRE(q.ok());
  auto set = (*q)->Select({Eq("__name__", "up")});
  REQUIRE(set.ok());
  std::vector<std::pair<Timestamp, double>> out;
  while ((*set)->Next()) {
    auto it = (*set)->At().Iterator();
    while (it->Next()) out.push_back({it->t(), it->v()});
  }
  return out;
}

std::vector<std::string> Families(const std::string& dir) {
  std::vector<std::string> names;
  REQUIRE(
      rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir, &names).ok());
  std::sort(names.begin(), names.end());
  return names;
}

// Opens `dir` with RocksDB alone (all families) and calls f on it.
template <typename F>
void WithRocks(const std::string& dir, F f) {
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : Families(dir)) cfs.push_back({n, {}});
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::DBOptions dbo;
  REQUIRE(rocksdb::DB::Open(dbo, dir, cfs, &handles, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  auto handle = [&](const std::string& name) {
    for (auto* h : handles)
      if (h->GetName() == name) return h;
    return static_cast<rocksdb::ColumnFamilyHandle*>(nullptr);
  };
  f(db.get(), handle);
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
}

uint32_t FormatVersion(const std::string& dir) {
  uint32_t version = 0;
  WithRocks(dir, [&](rocksdb::DB* db, auto handle) {
    std::string v;
    REQUIRE(db->Get({}, handle("meta"), "format", &v).ok());
    REQUIRE(v.size() == 4);
    version = internal::GetBE32(v.data());
  });
  return version;
}

// Turns a format-2 directory into what format 1 wrote: version 1 and a
// `postings` family with an entry per label of the one series.
void MakeFormat1(const std::string& dir) {
  WithRocks(dir, [&](rocksdb::DB* db, auto handle) {
    rocksdb::ColumnFamilyHandle* postings = nullptr;
    REQUIRE(db->CreateColumnFamily({}, "postings", &postings).ok());
    std::string v;
    internal::PutBE32(&v, 1);
    REQUIRE(db->Put({}, handle("meta"), "format", v).ok());
    for (auto [n, val] : {std::pair{"__name__", "up"}, {"job", "a"}}) {
      std::string k;
      internal::PutLengthPrefixed(&k, n);
      internal::PutLengthPrefixed(&k, val);
      internal::PutBE64(&k, 1);
      REQUIRE(db->Put({}, postings, k, "").ok());
    }
    REQUIRE(db->Flush({}, postings).ok());
    db->DestroyColumnFamilyHandle(postings);
  });
}

void FillFormatDb(const std::string& dir) {
  auto db = DB::Open({}, dir);
  REQUIRE(db.ok());
  auto app = (*db)->NewAppender();
  for (int i = 0; i < 10; ++i) {
    REQUIRE(
        app->Append(0, {{"__name__", "up"}, {"job", "a"}}, 1000 * i, i).ok());
  }
  REQUIRE(app->Commit().ok());
  REQUIRE((*db)->Flush().ok());
}

TEST_CASE("New directories are format 2, without a postings family",
          "[format]") {
  testutil::TempDir tmp;
  FillFormatDb(tmp.path());
  CHECK(FormatVersion(tmp.path()) == internal::kFormatVersion);
  CHECK(internal::kFormatVersion == 2);
  for (const auto& f : Families(tmp.path())) CHECK(f != "postings");
}

TEST_CASE("Format-1 directories open read-only and upgrade on write",
          "[format]") {
  testutil::TempDir tmp;
  FillFormatDb(tmp.path());
  MakeFormat1(tmp.path());
  REQUIRE(FormatVersion(tmp.path()) == 1);
  std::vector<std::pair<Timestamp, double>> want;
  for (int i = 0; i < 10; ++i) want.push_back({1000 * i, i});
  {
    Options ro;
    ro.read_only = true;
    auto db = DB::Open(ro, tmp.path());
    INFO(db.status().ToString());
    REQUIRE(db.ok());
    CHECK(UpSamples(db->get()) == want);
  }
  CHECK(FormatVersion(tmp.path()) == 1);  // read-only changes nothing
  {
    auto db = DB::Open({}, tmp.path());
    INFO(db.status().ToString());
    REQUIRE(db.ok());
    CHECK(UpSamples(db->get()) == want);
  }
  CHECK(FormatVersion(tmp.path()) == 2);
  for (const auto& f : Families(tmp.path())) CHECK(f != "postings");
  auto db = DB::Open({}, tmp.path());
  REQUIRE(db.ok());
  CHECK(UpSamples(db->get()) == want);
}

TEST_CASE("Unknown format versions are refused", "[format]") {
  testutil::TempDir tmp;
  FillFormatDb(tmp.path());
  WithRocks(tmp.path(), [&](rocksdb::DB* db, auto handle) {
    std::string v;
    internal::PutBE32(&v, 3);
    REQUIRE(db->Put({}, handle("meta"), "format", v).ok());
  });
  auto db = DB::Open({}, tmp.path());
  REQUIRE(db.status().code() == absl::StatusCode::kDataLoss);
  CHECK(std::string(db.status().message()).find("format version 3") !=
        std::string::npos);
}

TEST_CASE("Only the newest RocksDB OPTIONS file is kept", "[format]") {
  testutil::TempDir tmp;
  FillFormatDb(tmp.path());
  for (int i = 0; i < 2; ++i) REQUIRE(DB::Open({}, tmp.path()).ok());
  int options_files = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path())) {
    if (e.path().filename().string().rfind("OPTIONS-", 0) == 0) ++options_files;
  }
  CHECK(options_files == 1);
}

}  // namespace
}  // namespace vigil::storage

namespace vigil::storage::internal {
namespace {

// The chunk key is on disk (FORMAT.md): big-endian day and ref, then the
// chunk's first time with its sign bit flipped, so bytewise order is
// (day, ref, time) order for negative times too.
TEST_CASE("Chunk keys keep their on-disk layout and order", "[format]") {
  const ChunkKeyBytes k = ChunkKeyFixed(0x01020304, 0x05060708090a0b0c, 0);
  CHECK(k.view() == std::string_view("\x01\x02\x03\x04"
                                     "\x05\x06\x07\x08\x09\x0a\x0b\x0c"
                                     "\x80\0\0\0\0\0\0\0",
                                     kChunkKeySize));
  CHECK(ChunkKey(0x01020304, 0x05060708090a0b0c, 0) == k.view());
  for (Timestamp t : {kMinTimestamp, Timestamp{-86400001}, Timestamp{-1},
                      Timestamp{0}, Timestamp{1767225600000}, kMaxTimestamp}) {
    for (uint64_t ref : {uint64_t{0}, uint64_t{1}, ~uint64_t{0}}) {
      INFO("t=" << t << " ref=" << ref);
      const ChunkKeyBytes key = ChunkKeyFixed(DayOf(t), ref, t);
      CHECK(GetBE32(key.data) == DayOf(t));
      CHECK(GetBE64(key.data + 4) == ref);
      CHECK(GetOrderedI64(key.data + 12) == t);
      // Same day and ref: later times sort later.
      const ChunkKeyBytes later =
          ChunkKeyFixed(DayOf(t), ref, t + (t < kMaxTimestamp));
      CHECK(key.view() <= later.view());
    }
  }
  // Days floor toward minus infinity and clamp far from any real sample,
  // below UINT32_MAX so a reader's day loop ends.
  CHECK(DayOf(0) == uint32_t{1} << 31);
  CHECK(DayOf(kDayMs - 1) == DayOf(0));
  CHECK(DayOf(kDayMs) == DayOf(0) + 1);
  CHECK(DayOf(-1) == DayOf(0) - 1);
  CHECK(DayOf(-kDayMs) == DayOf(0) - 1);
  CHECK(DayOf(-kDayMs - 1) == DayOf(0) - 2);
  CHECK(DayStart(DayOf(-1)) == -kDayMs);
  CHECK(DayOf(kMinTimestamp) == 0);
  CHECK(DayOf(kMaxTimestamp) == UINT32_MAX - 1);
  CHECK(ChunkKeyFixed(DayOf(-1), 5, -1).view() <
        ChunkKeyFixed(DayOf(0), 5, 0).view());
  CHECK(ChunkKeyFixed(7, 5, 1000).view() < ChunkKeyFixed(7, 6, -1000).view());
}

}  // namespace
}  // namespace vigil::storage::internal

namespace vigil::storage::internal {
namespace {

// RocksDB statuses map to absl codes with "<context>: <message>"; the
// formatted context is built on failure and gives the same message.
TEST_CASE("RocksDB statuses become absl statuses with their context",
          "[format]") {
  CHECK(FromRocks(rocksdb::Status::OK(), "read chunks of series {}", 7).ok());
  absl::Status lazy = FromRocks(rocksdb::Status::Corruption("bad block"),
                                "read chunks of series {}", 7);
  CHECK(lazy.code() == absl::StatusCode::kDataLoss);
  CHECK(lazy.message() == "read chunks of series 7: Corruption: bad block");
  CHECK(lazy == FromRocks(rocksdb::Status::Corruption("bad block"),
                          "read chunks of series 7"));
  CHECK(FromRocks(rocksdb::Status::IOError("disk"), "flush").code() ==
        absl::StatusCode::kUnavailable);
  CHECK(FromRocks(rocksdb::Status::NotFound(), "get").code() ==
        absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace vigil::storage::internal
