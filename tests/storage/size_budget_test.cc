// Size retention's room for compaction: how a limit is shared out
// (size_budget.h), and a real directory that stays under its limit while
// retention and a forced full compaction run.
#include "storage/internal/size_budget.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using internal::SizeBudget;
using internal::SizeBudgetFor;

int64_t DirBytes(const std::string& dir) {
  int64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file(ec)) total += int64_t(e.file_size(ec));
  return total;
}

TEST_CASE(
    "size budget: RocksDB's defaults without a limit, but a 4 MiB chunks "
    "memtable",
    "[db][size]") {
  const SizeBudget b = SizeBudgetFor(0);
  CHECK(b.target_file_bytes == 64u << 20);
  CHECK(b.write_buffer_bytes == 4u << 20);
  CHECK(b.max_wal_bytes == 512u << 20);
  CHECK(b.retention_goal_bytes == 0);
}

TEST_CASE("size budget: the room kept fits a compaction and a flush",
          "[db][size]") {
  for (int64_t limit :
       {int64_t(1) << 20, int64_t(8) << 20, int64_t(64) << 20, int64_t(1) << 30,
        int64_t(100) << 30, int64_t(1) << 42}) {
    INFO("limit " << limit);
    const SizeBudget b = SizeBudgetFor(limit);
    CHECK(b.retention_goal_bytes > 0);
    CHECK(b.retention_goal_bytes < limit);
    CHECK(b.target_file_bytes <= b.max_compaction_bytes);
    CHECK(b.target_file_bytes <= 64u << 20);
    CHECK(b.write_buffer_bytes <= 4u << 20);
    CHECK(b.max_wal_bytes <= 512u << 20);
    const uint64_t room = uint64_t(limit - b.retention_goal_bytes);
    if (limit >= int64_t(8) << 20) {
      CHECK(room >= 2 * b.max_compaction_bytes + b.write_buffer_bytes);
      CHECK(room <= uint64_t(limit) / 4);  // never more than a quarter
    }
  }
  // A larger limit never keeps less data.
  CHECK(SizeBudgetFor(int64_t(2) << 30).retention_goal_bytes >
        SizeBudgetFor(int64_t(1) << 30).retention_goal_bytes);
}

// `days` days of poorly compressible samples of 100 series, every 30 s.
void FillBudgetDb(DB* db, int days) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> val(0, 1e6);
  std::vector<SeriesRef> refs(100, 0);
  // Built once: a Labels per sample was a fifth of the fill's CPU.
  std::vector<Labels> series;
  for (size_t i = 0; i < refs.size(); ++i)
    series.push_back({{"__name__", "budget"}, {"i", std::to_string(i)}});
  const int64_t day = 86400000;
  for (int64_t t = 0; t < days * day; t += 30000) {
    auto app = db->NewAppender();
    for (size_t i = 0; i < refs.size(); ++i) {
      auto r = app->Append(refs[i], series[i], t, val(rng));
      REQUIRE(r.ok());
      refs[i] = *r;
    }
    REQUIRE(app->Commit().ok());
  }
}

TEST_CASE(
    "size retention leaves room: the directory stays under the limit "
    "through a forced full compaction",
    "[db][size]") {
  testutil::TempDir tmp;
  const std::string dir = tmp.path() + "/data";
  {
    // Written without a limit (RocksDB's 64 MiB tables), as a backfill is.
    Options o;
    o.retention_ms = 0;
    o.write_wal = false;
    auto db = *DB::Open(o, dir);
    FillBudgetDb(db.get(), 10);
    REQUIRE(db->Flush().ok());
    REQUIRE(db->Compact().ok());
  }
  const int64_t limit = 8 << 20;
  REQUIRE(DirBytes(dir) > 2 * limit);

  Options o;
  o.retention_ms = 0;
  o.retention_bytes = limit;
  auto db = *DB::Open(o, dir);
  REQUIRE(db->ApplyRetention(10LL * 86400000).ok());
  const int64_t goal = SizeBudgetFor(limit).retention_goal_bytes;
  CHECK(int64_t(db->Stats().disk_bytes) <= goal);
  CHECK(db->Stats().disk_bytes > 0);

  // Sampled every 2 ms while every table is rewritten.
  std::atomic<bool> stop{false};
  std::atomic<int64_t> most{0};
  std::thread watch([&] {
    while (!stop) {
      most = std::max(most.load(), DirBytes(dir));
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  REQUIRE(db->Compact().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop = true;
  watch.join();
  INFO("goal " << goal << ", most seen " << most.load());
  CHECK(most.load() > goal / 2);
  CHECK(most.load() <= limit);

  // The newest day is there, the oldest is not.
  auto q = *db->NewQuerier(kMinTimestamp, kMaxTimestamp);
  auto set =
      *q->Select({*Matcher::Make(MatchType::kEqual, "__name__", "budget")});
  REQUIRE(set->Next());
  auto it = set->At().Iterator();
  REQUIRE(it->Next());
  CHECK(it->t() >= 86400000);
  CHECK(it->t() < 9LL * 86400000);
}

}  // namespace
}  // namespace vigil::storage
