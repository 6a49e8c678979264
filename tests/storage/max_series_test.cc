// Options::max_series (--storage.tsdb.max-series): a new series beyond the
// limit is refused with ResourceExhausted, samples of existing series keep
// being accepted in the same batch, refusals are counted, the limit holds
// across a restart and under concurrent appenders, and series forgotten by
// CleanTombstones free their slot.
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "storage/db.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::Eq;
using testutil::Query;
using testutil::Re;
using testutil::TempDir;

Labels MaxSeriesLabels(int i) {
  return Labels{{"__name__", "m"}, {"i", std::to_string(i)}};
}

Options Limited(int64_t n) {
  Options o;
  o.retention_ms = 0;  // the tests' timestamps are near the epoch
  o.max_series = n;
  return o;
}

TEST_CASE("A new series beyond max_series is refused, existing ones ingest",
          "[limits][storage]") {
  TempDir dir;
  auto db = testutil::MustOpen(dir.path(), Limited(3));
  auto app = db->NewAppender();
  for (int i = 0; i < 3; ++i)
    REQUIRE(app->Append(0, MaxSeriesLabels(i), 1000, i).ok());
  auto refused = app->Append(0, MaxSeriesLabels(3), 1000, 3);
  REQUIRE(!refused.ok());
  CHECK(refused.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(refused.status().message() ==
        "storage: head series limit 3 (--storage.tsdb.max-series) reached; "
        "new series refused: {__name__=\"m\", i=\"3\"}");
  // The batch stays usable: the refused sample alone is dropped.
  REQUIRE(app->Commit().ok());
  CHECK(Query(db.get(), {Eq("__name__", "m")}).size() == 3);
  CHECK(db->Stats().num_series == 3);
  CHECK(db->Stats().series_refused == 1);

  // Existing series keep ingesting, by labels and by ref, mixed with
  // refused new ones in one batch.
  auto ref0 = app->Append(0, MaxSeriesLabels(0), 2000, 10);
  REQUIRE(ref0.ok());
  CHECK(app->Append(0, MaxSeriesLabels(4), 2000, 4).status().code() ==
        absl::StatusCode::kResourceExhausted);
  REQUIRE(app->Append(0, MaxSeriesLabels(1), 2000, 11).ok());
  REQUIRE(app->Commit().ok());
  REQUIRE(app->Append(*ref0, Labels(), 3000, 20).ok());
  REQUIRE(app->Commit().ok());
  auto got = Query(db.get(), {Eq("i", "0")});
  REQUIRE(got.size() == 1);
  CHECK(got.begin()->second.size() == 3);
  CHECK(Query(db.get(), {Eq("i", "1")}).begin()->second.size() == 2);
  CHECK(Query(db.get(), {Re("i", "3|4")}).empty());
  CHECK(db->Stats().series_refused == 2);
}

TEST_CASE("max_series 0 is unlimited and a limit applies after a restart",
          "[limits][storage]") {
  TempDir dir;
  {
    auto db = testutil::MustOpen(dir.path(), Limited(0));
    auto app = db->NewAppender();
    for (int i = 0; i < 50; ++i)
      REQUIRE(app->Append(0, MaxSeriesLabels(i), 1, 1).ok());
    REQUIRE(app->Commit().ok());
  }
  // Reopened with a lower limit: the 50 series load and keep ingesting,
  // no new one is accepted.
  auto db = testutil::MustOpen(dir.path(), Limited(10));
  CHECK(db->Stats().num_series == 50);
  auto app = db->NewAppender();
  CHECK(app->Append(0, MaxSeriesLabels(49), 2, 2).ok());
  CHECK(app->Append(0, MaxSeriesLabels(50), 2, 2).status().code() ==
        absl::StatusCode::kResourceExhausted);
  REQUIRE(app->Commit().ok());
  CHECK(Query(db.get(), {Eq("i", "49")}).begin()->second.size() == 2);
  CHECK(db->Stats().num_series == 50);
}

TEST_CASE("Concurrent appenders never create more than max_series",
          "[limits][storage]") {
  TempDir dir;
  auto db = testutil::MustOpen(dir.path(), Limited(100));
  std::atomic<int> accepted{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto app = db->NewAppender();
      for (int i = 0; i < 100; ++i) {
        auto r = app->Append(0, MaxSeriesLabels(t * 1000 + i), 1, 1);
        if (r.ok()) {
          ++accepted;
        } else if (r.status().code() == absl::StatusCode::kResourceExhausted) {
          ++refused;
        }
      }
      REQUIRE(app->Commit().ok());
    });
  }
  for (auto& th : threads) th.join();
  CHECK(accepted == 100);
  CHECK(refused == 300);
  CHECK(db->Stats().num_series == 100);
  CHECK(db->Stats().series_refused == 300);
}

TEST_CASE("Series forgotten by CleanTombstones free their slot",
          "[limits][storage]") {
  TempDir dir;
  auto db = testutil::MustOpen(dir.path(), Limited(2));
  auto app = db->NewAppender();
  auto ref0 = app->Append(0, MaxSeriesLabels(0), 1000, 1);
  REQUIRE(ref0.ok());
  REQUIRE(app->Append(0, MaxSeriesLabels(1), 1000, 1).ok());
  REQUIRE(app->Commit().ok());
  CHECK(!app->Append(0, MaxSeriesLabels(2), 2000, 1).ok());

  REQUIRE(
      db->DeleteSeries(std::vector{Eq("i", "0")}, kMinTimestamp, kMaxTimestamp)
          .ok());
  REQUIRE(db->CleanTombstones().ok());
  CHECK(db->Stats().num_series == 1);
  // The freed slot goes to whoever comes first; the forgotten series,
  // appended again by its old ref, is then new and refused.
  REQUIRE(app->Append(0, MaxSeriesLabels(2), 2000, 1).ok());
  REQUIRE(app->Commit().ok());
  auto back = app->Append(*ref0, Labels(), 3000, 1);
  CHECK(back.status().code() == absl::StatusCode::kResourceExhausted);
  REQUIRE(app->Commit().ok());
  CHECK(db->Stats().num_series == 2);
  CHECK(Query(db.get(), {Eq("i", "2")}).size() == 1);
  CHECK(Query(db.get(), {Eq("i", "0")}).empty());
}

}  // namespace
}  // namespace vigil::storage
