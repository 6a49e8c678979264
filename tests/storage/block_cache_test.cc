// Options::block_cache_bytes: every column family reads through one block
// cache that also holds the tables' index and filter blocks, so RocksDB's
// memory after reading a directory far larger than the cache stays near
// the cache's size — and a larger cache is actually used.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>

#include "storage/db.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/sanitizers.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::MustOpen;
using testutil::Query;
using testutil::Re;
using testutil::TempDir;

constexpr int kCacheSeries = 2000;
// Half as many under a sanitizer, where writing and reading them is most
// of a minute of CPU: still several times the small cache.
constexpr int kCacheSamples = vigil::testutil::kSanitized ? 600 : 1200;
constexpr uint64_t kChunkBytes = uint64_t(kCacheSeries) * kCacheSamples * 8;

// ~20 MB of chunks (10 under a sanitizer): random values compress to about
// 8 bytes a sample.
void FillCacheDir(const std::string& dir) {
  Options o;
  o.retention_ms = 0;
  o.head_idle_ms = 0;
  o.max_chunk_samples = 120;
  auto db = MustOpen(dir, o);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> val(0, 1e6);
  for (int t = 1; t <= kCacheSamples; ++t) {
    auto app = db->NewAppender();
    for (int i = 0; i < kCacheSeries; ++i) {
      auto r =
          app->Append(0, Labels{{"__name__", "m"}, {"i", std::to_string(i)}},
                      Timestamp(t) * 1000, val(rng));
      REQUIRE(r.ok());
    }
    REQUIRE(app->Commit().ok());
  }
  REQUIRE(db->Flush().ok());
}

// RocksDB memory after reading every sample of a fresh open with a cache
// of `cache_bytes`.
uint64_t MemoryAfterFullRead(const std::string& dir, int64_t cache_bytes) {
  Options o;
  o.retention_ms = 0;
  o.head_idle_ms = 0;
  o.block_cache_bytes = cache_bytes;
  auto db = MustOpen(dir, o);
  const uint64_t before = db->Stats().rocksdb_memory_bytes;
  auto all = Query(db.get(), {Re("__name__", "m")});
  REQUIRE(all.size() == size_t(kCacheSeries));
  for (const auto& [name, samples] : all) {
    INFO(name);
    REQUIRE(samples.size() == size_t(kCacheSamples));
  }
  const uint64_t after = db->Stats().rocksdb_memory_bytes;
  INFO("before " << before << " after " << after);
  return after;
}

TEST_CASE("block cache: RocksDB memory stays near the cache's capacity",
          "[storage][memory]") {
  TempDir dir;
  FillCacheDir(dir.path());
  const uint64_t small = MemoryAfterFullRead(dir.path(), 1 << 20);
  const uint64_t large = MemoryAfterFullRead(dir.path(), 64 << 20);
  INFO("1 MiB cache: " << small << " B; 64 MiB cache: " << large << " B");
  // 1 MiB of cache, plus the open tables' own structures and the small
  // memtables of a fresh open.
  CHECK(small < (3u << 20));
  // The larger cache keeps much more of what was read (at 8 bytes a
  // sample, 40 % of the chunks: 7.7 MB, or 3.8 under a sanitizer).
  CHECK(large > kChunkBytes * 2 / 5);
}

}  // namespace
}  // namespace vigil::storage
