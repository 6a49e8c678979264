// Damaged data is reported as DataLoss naming what is damaged; never a
// crash, never silently wrong samples.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "rocksdb/db.h"
#include "storage/db.h"
#include "storage/internal/coding.h"
#include "storage/internal/keys.h"
#include "tests/storage/raw_family.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

namespace fs = std::filesystem;

void FillCorruptionDir(const std::string& dir, bool flush) {
  auto db = *DB::Open({}, dir);
  auto app = db->NewAppender();
  for (int s = 0; s < 50; ++s) {
    for (int i = 0; i < 300; ++i) {
      REQUIRE(app->Append(0, {{"__name__", "m"}, {"s", std::to_string(s)}},
                          1767225600000 + i * 15000, i * 0.5 + s)
                  .ok());
    }
  }
  REQUIRE(app->Commit().ok());
  if (flush) {
    REQUIRE(db->Flush().ok());
    REQUIRE(db->Compact().ok());
  }
}

// Opens and reads everything; returns the first error.
absl::Status ReadAllStatus(const std::string& dir) {
  auto db = DB::Open({}, dir);
  if (!db.ok()) return db.status();
  auto q = (*db)->NewQuerier(kMinTimestamp, kMaxTimestamp);
  if (!q.ok()) return q.status();
  auto set = (*q)->Select({*Matcher::Make(MatchType::kEqual, "__name__", "m")});
  if (!set.ok()) return set.status();
  while ((*set)->Next()) {
    auto it = (*set)->At().Iterator();
    while (it->Next()) {
    }
    if (!it->err().ok()) return it->err();
  }
  return absl::OkStatus();
}

TEST_CASE("A flipped byte in a table file is reported as DataLoss",
          "[corruption]") {
  testutil::TempDir tmp;
  FillCorruptionDir(tmp.path(), /*flush=*/true);
  REQUIRE(ReadAllStatus(tmp.path()).ok());
  // Damage the middle of every table file.
  int damaged = 0;
  for (const auto& e : fs::directory_iterator(tmp.path())) {
    if (e.path().extension() != ".sst" || e.file_size() < 200) continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(std::streamoff(e.file_size() / 3));
    char c;
    f.get(c);
    f.seekp(std::streamoff(e.file_size() / 3));
    f.put(char(c ^ 0x5a));
    ++damaged;
  }
  REQUIRE(damaged > 0);
  absl::Status s = ReadAllStatus(tmp.path());
  INFO(s.ToString());
  REQUIRE(s.code() == absl::StatusCode::kDataLoss);
}

// Rewrites one value of `cf` through RocksDB directly.
void DamageFamily(const std::string& dir, const std::string& cf,
                  bool truncate) {
  testutil::RawFamily f(dir, cf);
  auto [key, value] = f.First();
  if (truncate) {
    value.resize(value.size() / 2);
  } else {
    value[value.size() - 1] ^= 1;
  }
  f.Put(key, value);
}

TEST_CASE("Damaged records name what is damaged", "[corruption]") {
  testutil::TempDir tmp, tmp2;
  SECTION("wal record") {
    // Not flushed: samples are in the wal family (a crash is simulated by
    // damaging it before the next open replays it).
    {
      auto db = *DB::Open({}, tmp.path());
      auto app = db->NewAppender();
      REQUIRE(app->Append(0, {{"__name__", "m"}}, 1000, 1).ok());
      REQUIRE(app->Commit().ok());
      // Closing checkpoints (empties the wal family); the copy below is
      // taken while the DB is open, so its wal family holds a record.
    }
    {
      auto db = *DB::Open({}, tmp.path());
      auto app = db->NewAppender();
      REQUIRE(app->Append(0, {{"__name__", "m"}}, 2000, 2).ok());
      REQUIRE(app->Commit().ok());
      // Copy the live directory: what a crash right now would leave.
      fs::copy(tmp.path(), tmp2.Sub("crashed"), fs::copy_options::recursive);
    }
    DamageFamily(tmp2.Sub("crashed"), "wal", /*truncate=*/false);
    absl::Status s = ReadAllStatus(tmp2.Sub("crashed"));
    INFO(s.ToString());
    REQUIRE(s.code() == absl::StatusCode::kDataLoss);
    REQUIRE(std::string(s.message()).find("wal record") != std::string::npos);
  }
  SECTION("chunk") {
    FillCorruptionDir(tmp.path(), /*flush=*/true);
    DamageFamily(tmp.path(), "chunks", /*truncate=*/false);
    absl::Status s = ReadAllStatus(tmp.path());
    INFO(s.ToString());
    REQUIRE(s.code() == absl::StatusCode::kDataLoss);
    REQUIRE(std::string(s.message()).find("chunk of series") !=
            std::string::npos);
  }
  SECTION("series record") {
    FillCorruptionDir(tmp.path(), /*flush=*/true);
    DamageFamily(tmp.path(), "series", /*truncate=*/true);
    absl::Status s = ReadAllStatus(tmp.path());
    INFO(s.ToString());
    REQUIRE(s.code() == absl::StatusCode::kDataLoss);
    REQUIRE(std::string(s.message()).find("series record 1") !=
            std::string::npos);
  }
}

}  // namespace
}  // namespace vigil::storage
