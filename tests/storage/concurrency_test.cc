// Many appenders and queriers at once (the DB's thread-safety contract),
// and retention by size.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

TEST_CASE("Concurrent appenders and queriers see consistent data",
          "[db][threads][concurrency]") {
  testutil::TempDir tmp;
  Options o;
  o.max_chunk_samples = 64;  // cut often: exercises head → RocksDB hand-off
  auto db = *DB::Open(o, tmp.path());
  constexpr int kWriters = 4, kSeries = 20, kSteps = 400;
  std::atomic<bool> done{false};
  std::atomic<int> errors{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      auto app = db->NewAppender();
      for (int step = 1; step <= kSteps; ++step) {
        for (int s = 0; s < kSeries; ++s) {
          Labels l{{"__name__", "c"},
                   {"w", std::to_string(w)},
                   {"s", std::to_string(s)}};
          if (!app->Append(0, l, step * 1000, step).ok()) errors++;
        }
        if (!app->Commit().ok()) errors++;
      }
    });
  }
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      auto m = *Matcher::Make(MatchType::kEqual, "__name__", "c");
      while (!done) {
        auto q = *db->NewQuerier(kMinTimestamp, kMaxTimestamp);
        auto set = *q->Select({m});
        while (set->Next()) {
          auto it = set->At().Iterator();
          Timestamp prev = 0;
          int64_t n = 0;
          while (it->Next()) {
            // Every series is a gap-free prefix 1000, 2000, ... with v =
            // t/1000.
            if (it->t() != prev + 1000 || it->v() != double(it->t() / 1000))
              errors++;
            prev = it->t();
            ++n;
          }
          if (!it->err().ok()) errors++;
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  done = true;
  for (auto& t : readers) t.join();
  REQUIRE(errors == 0);
  auto q = *db->NewQuerier(kMinTimestamp, kMaxTimestamp);
  auto set = *q->Select({*Matcher::Make(MatchType::kEqual, "__name__", "c")});
  int series = 0;
  while (set->Next()) {
    ++series;
    auto it = set->At().Iterator();
    int n = 0;
    while (it->Next()) ++n;
    REQUIRE(n == kSteps);
  }
  REQUIRE(series == kWriters * kSeries);
}

// Appenders sharing every series (DBAppender's in-batch mark): whatever
// the others commit meanwhile, a batch never accepts a sample older than
// one it holds itself, and every stored series stays strictly increasing.
TEST_CASE("Concurrent appenders sharing series keep their batches in order",
          "[db][threads][concurrency]") {
  testutil::TempDir tmp;
  Options o;
  o.max_chunk_samples = 64;
  auto db = *DB::Open(o, tmp.path());
  constexpr int kWriters = 4, kSeries = 20, kSteps = 300;
  std::atomic<int> errors{0}, accepted{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      auto app = db->NewAppender();
      for (int step = 1; step <= kSteps; ++step) {
        const Timestamp t = Timestamp(step) * 10 + w;
        for (int s = 0; s < kSeries; ++s) {
          Labels l{{"__name__", "shared"}, {"s", std::to_string(s)}};
          if (app->Append(0, l, t, double(w)).ok()) accepted++;
          // Older than what this batch holds (or than what is stored):
          // never accepted.
          if (app->Append(0, l, t - 1, double(w)).ok()) errors++;
        }
        if (step % 3 == 0) {
          app->Rollback();
        } else if (!app->Commit().ok()) {
          errors++;
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  REQUIRE(errors == 0);
  REQUIRE(accepted > 0);
  auto q = *db->NewQuerier(kMinTimestamp, kMaxTimestamp);
  auto set =
      *q->Select({*Matcher::Make(MatchType::kEqual, "__name__", "shared")});
  int series = 0;
  while (set->Next()) {
    ++series;
    auto it = set->At().Iterator();
    Timestamp prev = kMinTimestamp;
    while (it->Next()) {
      REQUIRE(it->t() > prev);
      prev = it->t();
    }
    REQUIRE(it->err().ok());
  }
  REQUIRE(series == kSeries);
}

TEST_CASE("Retention by size drops the oldest days and keeps the newest",
          "[db]") {
  testutil::TempDir tmp;
  Options o;
  o.retention_ms = 0;
  o.retention_bytes = 1;  // everything is over budget
  auto db = *DB::Open(o, tmp.path());
  const Timestamp day = 86400000;
  auto app = db->NewAppender();
  for (int d = 0; d < 4; ++d) {
    for (int s = 0; s < 50; ++s) {
      for (int i = 0; i < 48; ++i) {
        REQUIRE(app->Append(0, {{"__name__", "z"}, {"s", std::to_string(s)}},
                            d * day + i * 1800000, i * 1.25 + d)
                    .ok());
      }
    }
  }
  REQUIRE(app->Commit().ok());
  REQUIRE(db->Flush().ok());
  REQUIRE(db->ApplyRetention(4 * day).ok());
  auto q = *db->NewQuerier(kMinTimestamp, kMaxTimestamp);
  auto set = *q->Select({*Matcher::Make(MatchType::kEqual, "__name__", "z")});
  REQUIRE(set->Next());
  auto it = set->At().Iterator();
  REQUIRE(it->Next());
  REQUIRE(it->t() == 3 * day);  // only the newest day is left
}

}  // namespace
}  // namespace vigil::storage
