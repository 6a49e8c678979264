// DB::Stats counts RocksDB's flushes and compactions, and the crash
// drill's knob (small memtables) makes them happen during ingestion.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

void AppendJobSamples(DB* db, int64_t from, int64_t to) {
  std::vector<SeriesRef> refs(200, 0);
  for (int64_t t = from; t < to; t += 15000) {
    auto app = db->NewAppender();
    for (size_t i = 0; i < refs.size(); ++i) {
      auto r =
          app->Append(refs[i], {{"__name__", "j"}, {"i", std::to_string(i)}}, t,
                      double(t) * 0.37 + double(i));
      REQUIRE(r.ok());
      refs[i] = *r;
    }
    REQUIRE(app->Commit().ok());
  }
}

TEST_CASE("Stats count RocksDB's flushes and compactions", "[db]") {
  testutil::TempDir tmp;
  Options o;
  auto db = *DB::Open(o, tmp.path());
  DBStats st = db->Stats();
  CHECK(st.rocksdb_flushes == 0);
  CHECK(st.rocksdb_compactions == 0);
  AppendJobSamples(db.get(), 0, 3600000);
  REQUIRE(db->Flush().ok());
  st = db->Stats();
  CHECK(st.rocksdb_flushes > 0);
  REQUIRE(db->Compact().ok());
  st = db->Stats();
  CHECK(st.rocksdb_compactions > 0);
  CHECK(st.rocksdb_compactions_running == 0);
}

TEST_CASE(
    "the drill's small-memtable knob makes ingestion alone flush and "
    "compact",
    "[db]") {
  testutil::TempDir tmp;
  Options o;
  o.test_write_buffer_bytes = 64 << 10;
  o.max_chunk_samples = 20;
  auto db = *DB::Open(o, tmp.path());
  AppendJobSamples(db.get(), 0, 6 * 3600000);
  // Background work is asynchronous: no Flush() or Compact() is asked for,
  // so wait (at most 20 s) for RocksDB to get to it.
  DBStats st;
  for (int i = 0; i < 2000; ++i) {
    st = db->Stats();
    if (st.rocksdb_flushes >= 2 && st.rocksdb_compactions >= 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(st.rocksdb_flushes >= 2);
  CHECK(st.rocksdb_compactions >= 1);
}

}  // namespace
}  // namespace vigil::storage
