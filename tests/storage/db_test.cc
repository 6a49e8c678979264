#include "storage/db.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "fmt/format.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::Eq;
using testutil::MustOpen;
using testutil::Query;
using testutil::Samples;

TEST_CASE("Committed samples are visible, buffered ones are not", "[db]") {
  testutil::TempDir tmp;
  auto db = MustOpen(tmp.path());
  auto app = db->NewAppender();
  Labels up{{"__name__", "up"}, {"job", "a"}};
  REQUIRE(app->Append(0, up, 1000, 1).ok());
  REQUIRE(Query(db.get(), {Eq("__name__", "up")}).empty());
  REQUIRE(app->Commit().ok());
  auto r = Query(db.get(), {Eq("__name__", "up")});
  REQUIRE(r.size() == 1);
  REQUIRE(r.begin()->second == Samples{{1000, 1}});
}

TEST_CASE("A series that stopped is left out of ranges after its last sample",
          "[db]") {
  // Select skips a series whose newest sample is older than the range
  // before seeking its chunks (churn: most series of a name are dead).
  // The skip must not hide anything: ranges that reach back to the dead
  // series' samples find them, from the head, from RocksDB after Flush(),
  // and after a reopen.
  testutil::TempDir tmp;
  Labels dead{{"__name__", "m"}, {"pod", "old"}};
  Labels live{{"__name__", "m"}, {"pod", "new"}};
  auto check = [&](DB* db) {
    auto recent = Query(db, {Eq("__name__", "m")}, 5001, 10000);
    REQUIRE(recent.size() == 1);
    CHECK(recent.begin()->first == live.ToString());
    auto edge = Query(db, {Eq("__name__", "m")}, 5000, 10000);
    CHECK(edge.size() == 2);
    CHECK(edge[dead.ToString()] == Samples{{5000, 5}});
    auto all = Query(db, {Eq("__name__", "m")});
    CHECK(all[dead.ToString()].size() == 5);
    CHECK(all[live.ToString()].size() == 10);
  };
  {
    auto db = MustOpen(tmp.path());
    auto app = db->NewAppender();
    for (int i = 1; i <= 10; ++i) {
      if (i <= 5) REQUIRE(app->Append(0, dead, i * 1000, i).ok());
      REQUIRE(app->Append(0, live, i * 1000, i).ok());
      REQUIRE(app->Commit().ok());
    }
    check(db.get());
    REQUIRE(db->Flush().ok());
    check(db.get());
  }
  auto db = MustOpen(tmp.path());
  check(db.get());
}

TEST_CASE("Acceptance rules: out of order, duplicates, same value", "[db]") {
  testutil::TempDir tmp;
  auto db = MustOpen(tmp.path());
  auto app = db->NewAppender();
  Labels l{{"__name__", "x"}};
  auto ref = app->Append(0, l, 2000, 5);
  REQUIRE(ref.ok());
  REQUIRE(app->Commit().ok());
  // Same timestamp, same value: no-op.
  REQUIRE(app->Append(*ref, {}, 2000, 5).ok());
  // Same timestamp, different value.
  auto dup = app->Append(*ref, {}, 2000, 6);
  REQUIRE(dup.status().code() == absl::StatusCode::kAlreadyExists);
  // Older timestamp: out of order, but the batch continues.
  auto ooo = app->Append(*ref, {}, 1000, 1);
  REQUIRE(ooo.status().code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(std::string(ooo.status().message()).find("out of order") !=
          std::string::npos);
  REQUIRE(app->Append(*ref, {}, 3000, 7).ok());
  REQUIRE(app->Commit().ok());
  auto r = Query(db.get(), {Eq("__name__", "x")});
  REQUIRE(r.begin()->second == Samples{{2000, 5}, {3000, 7}});
  REQUIRE(db->Stats().out_of_order == 1);
  REQUIRE(db->Stats().duplicate == 1);
}

TEST_CASE("Acceptance rules within one batch", "[db]") {
  testutil::TempDir tmp;
  auto db = MustOpen(tmp.path());
  auto app = db->NewAppender();
  Labels x{{"__name__", "x"}}, y{{"__name__", "y"}};
  REQUIRE(app->Append(0, y, 5000, 1).ok());
  REQUIRE(app->Commit().ok());
  auto ref = app->Append(0, x, 1000, 1);
  REQUIRE(ref.ok());
  // Against the buffered sample of x, not yet committed.
  CHECK(app->Append(*ref, {}, 1000, 2).status().code() ==
        absl::StatusCode::kAlreadyExists);
  CHECK(app->Append(*ref, {}, 500, 2).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  CHECK(app->Append(*ref, {}, 1000, 1).ok());
  CHECK(app->Append(*ref, {}, 2000, 3).ok());
  // y's first sample in this batch is checked against its committed one,
  // and after a refusal against it still; then against the buffered one.
  CHECK(app->Append(0, y, 4000, 2).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  CHECK(app->Append(0, y, 5000, 2).status().code() ==
        absl::StatusCode::kAlreadyExists);
  CHECK(app->Append(0, y, 6000, 2).ok());
  CHECK(app->Append(0, y, 5500, 2).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  REQUIRE(app->Commit().ok());
  CHECK(Query(db.get(), {Eq("__name__", "x")}).begin()->second ==
        Samples{{1000, 1}, {2000, 3}});
  CHECK(Query(db.get(), {Eq("__name__", "y")}).begin()->second ==
        Samples{{5000, 1}, {6000, 2}});
}

TEST_CASE("Invalid label sets are rejected", "[db]") {
  testutil::TempDir tmp;
  auto db = MustOpen(tmp.path());
  auto app = db->NewAppender();
  REQUIRE(app->Append(0, Labels(), 1, 1).status().code() ==
          absl::StatusCode::kInvalidArgument);
  auto d = Labels::FromSorted({{"a", "1"}, {"a", "2"}});
  REQUIRE(app->Append(0, d, 1, 1).status().code() ==
          absl::StatusCode::kInvalidArgument);
}

TEST_CASE("Rollback drops the batch", "[db]") {
  testutil::TempDir tmp;
  auto db = MustOpen(tmp.path());
  auto app = db->NewAppender();
  REQUIRE(app->Append(0, {{"__name__", "x"}}, 1, 1).ok());
  app->Rollback();
  REQUIRE(app->Commit().ok());
  REQUIRE(Query(db.get(), {Eq("__name__", "x")}).empty());
}

TEST_CASE("Staleness NaN round-trips bit-exactly", "[db]") {
  testutil::TempDir tmp;
  auto db = MustOpen(tmp.path());
  auto app = db->NewAppender();
  Labels l{{"__name__", "x"}};
  REQUIRE(app->Append(0, l, 1, 1).ok());
  REQUIRE(app->Append(0, l, 2, StaleNaN()).ok());
  REQUIRE(app->Append(0, l, 3, std::nan("")).ok());
  REQUIRE(app->Commit().ok());
  REQUIRE(db->Flush().ok());
  auto r = Query(db.get(), {Eq("__name__", "x")}).begin()->second;
  REQUIRE(r.size() == 3);
  REQUIRE(IsStaleNaN(r[1].second));
  REQUIRE(std::isnan(r[2].second));
  REQUIRE_FALSE(IsStaleNaN(r[2].second));
}

TEST_CASE("Matchers select with Prometheus semantics", "[db]") {
  testutil::TempDir tmp;
  auto db = MustOpen(tmp.path());
  auto app = db->NewAppender();
  REQUIRE(app->Append(0, {{"__name__", "m"}, {"a", "1"}}, 1, 1).ok());
  REQUIRE(app->Append(0, {{"__name__", "m"}, {"a", "2"}}, 1, 2).ok());
  REQUIRE(app->Append(0, {{"__name__", "m"}}, 1, 3).ok());
  REQUIRE(app->Commit().ok());
  auto re = [](MatchType t, std::string_view n, std::string_view v) {
    return *Matcher::Make(t, n, v);
  };
  REQUIRE(Query(db.get(), {Eq("__name__", "m")}).size() == 3);
  REQUIRE(Query(db.get(), {Eq("__name__", "m"), Eq("a", "")}).size() == 1);
  REQUIRE(
      Query(db.get(), {Eq("__name__", "m"), re(MatchType::kNotEqual, "a", "1")})
          .size() == 2);
  REQUIRE(Query(db.get(),
                {Eq("__name__", "m"), re(MatchType::kRegexMatch, "a", "1|2")})
              .size() == 2);
  REQUIRE(Query(db.get(),
                {Eq("__name__", "m"), re(MatchType::kRegexNoMatch, "a", ".+")})
              .size() == 1);
  REQUIRE(
      Query(db.get(), {re(MatchType::kRegexMatch, "__name__", "m|z")}).size() ==
      3);
  auto q = *db->NewQuerier(kMinTimestamp, kMaxTimestamp);
  REQUIRE(*q->LabelNames({}) == std::vector<std::string>{"__name__", "a"});
  REQUIRE(*q->LabelValues("a", {}) == std::vector<std::string>{"1", "2"});
}

TEST_CASE("Data survives reopen: head checkpoint, flushed chunks, WAL replay",
          "[db]") {
  testutil::TempDir tmp;
  Options o;
  o.max_chunk_samples = 50;
  Samples want;
  {
    auto db = MustOpen(tmp.path(), o);
    auto app = db->NewAppender();
    for (int i = 0; i < 1000; ++i) {
      Timestamp t = 1767225600000 + i * 15000;
      double v = i * 1.5 + 0.25;
      REQUIRE(app->Append(0, {{"__name__", "c"}, {"i", "x"}}, t, v).ok());
      want.push_back({t, v});
      if (i % 100 == 99) REQUIRE(app->Commit().ok());
    }
  }
  {
    auto db = MustOpen(tmp.path(), o);
    REQUIRE(Query(db.get(), {Eq("__name__", "c")}).begin()->second == want);
    // Appending continues after the restored last sample; older is refused.
    auto app = db->NewAppender();
    REQUIRE_FALSE(app->Append(0, {{"__name__", "c"}, {"i", "x"}},
                              want.back().first - 1, 0)
                      .ok());
    REQUIRE(db->Flush().ok());
  }
  auto db = MustOpen(tmp.path(), o);
  auto r =
      Query(db.get(), {Eq("__name__", "c")}, want[10].first, want[20].first);
  REQUIRE(r.begin()->second == Samples(want.begin() + 10, want.begin() + 21));
}

TEST_CASE("After kill -9 every committed sample is there", "[db][crash]") {
  testutil::TempDir tmp;
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    auto db = DB::Open({}, tmp.path());
    if (!db.ok()) _exit(1);
    auto app = (*db)->NewAppender();
    for (int64_t i = 1;; ++i) {
      for (int s = 0; s < 10; ++s) {
        Labels l{{"__name__", "k"}, {"s", std::to_string(s)}};
        if (!app->Append(0, l, i * 1000, double(i)).ok()) _exit(2);
      }
      if (!app->Commit().ok()) _exit(3);
      if (write(fds[1], &i, sizeof(i)) != sizeof(i)) _exit(4);
    }
  }
  close(fds[1]);
  int64_t committed = 0, x;
  while (committed < 3000 && read(fds[0], &x, sizeof(x)) == sizeof(x))
    committed = x;
  kill(pid, SIGKILL);
  while (read(fds[0], &x, sizeof(x)) == sizeof(x)) committed = x;
  int status;
  waitpid(pid, &status, 0);
  close(fds[0]);
  REQUIRE(committed >= 3000);
  auto db = MustOpen(tmp.path());
  auto r = Query(db.get(), {Eq("__name__", "k")});
  REQUIRE(r.size() == 10);
  for (const auto& [labels, samples] : r) {
    INFO(labels);
    REQUIRE(int64_t(samples.size()) >= committed);
    for (int64_t i = 0; i < committed; ++i) {
      REQUIRE(samples[i].first == (i + 1) * 1000);
      REQUIRE(samples[i].second == double(i + 1));
    }
  }
}

TEST_CASE("Retention deletes whole expired days", "[db]") {
  testutil::TempDir tmp;
  Options o;
  o.retention_ms = 2 * 86400000LL;
  auto db = MustOpen(tmp.path(), o);
  auto app = db->NewAppender();
  const Timestamp day = 86400000;
  for (int d = 0; d < 5; ++d) {
    for (int i = 0; i < 24; ++i) {
      REQUIRE(
          app->Append(0, {{"__name__", "r"}}, d * day + i * 3600000, d).ok());
    }
  }
  REQUIRE(app->Commit().ok());
  REQUIRE(db->Flush().ok());
  REQUIRE(db->ApplyRetention(5 * day).ok());
  auto r = Query(db.get(), {Eq("__name__", "r")}).begin()->second;
  REQUIRE(r.front().first == 3 * day);
  REQUIRE(r.size() == 48);
}

TEST_CASE("Metadata persists", "[db]") {
  testutil::TempDir tmp;
  {
    auto db = MustOpen(tmp.path());
    REQUIRE(db->SetMetadata("up", {"gauge", "is it up", ""}).ok());
  }
  auto db = MustOpen(tmp.path());
  auto md = db->GetMetadata();
  REQUIRE(md.size() == 1);
  REQUIRE(md[0].first == "up");
  REQUIRE(md[0].second.help == "is it up");
}

TEST_CASE("Select walks persisted chunks of many series over several days",
          "[db]") {
  // Series are read in ref order with one RocksDB iterator that only seeks
  // when it must; every series must still get exactly its own chunks.
  testutil::TempDir tmp;
  Options o;
  o.max_chunk_samples = 50;
  o.retention_ms = 0;
  auto db = MustOpen(tmp.path(), o);
  const Timestamp day = 86400000, step = 600000;  // 10 min: 144 per day
  const int kSeries = 300;  // over 256: Select also walks blocks on two threads
  auto app = db->NewAppender();
  for (Timestamp t = 0; t < 3 * day; t += step) {
    for (int i = 0; i < kSeries; ++i) {
      // Every third series skips the middle day entirely.
      if (i % 3 == 0 && t >= day && t < 2 * day) continue;
      REQUIRE(app->Append(0, {{"__name__", "m"}, {"i", std::to_string(i)}}, t,
                          double(t / step + i))
                  .ok());
    }
    REQUIRE(app->Commit().ok());
  }
  REQUIRE(db->Flush().ok());
  for (auto [mint, maxt] : {std::pair<Timestamp, Timestamp>{0, 3 * day},
                            {day - 5 * step, 2 * day + 7},
                            {day + 3, day + 3 * step},
                            {2 * day - 1, 2 * day}}) {
    auto got = Query(db.get(), {Eq("__name__", "m")}, mint, maxt);
    size_t want_series = 0;
    for (int i = 0; i < kSeries; ++i) {
      Samples want;
      for (Timestamp t = 0; t < 3 * day; t += step) {
        if (t < mint || t > maxt || (i % 3 == 0 && t >= day && t < 2 * day))
          continue;
        want.push_back({t, double(t / step + i)});
      }
      std::string key = fmt::format("{{__name__=\"m\", i=\"{}\"}}", i);
      INFO(key << " in [" << mint << ", " << maxt << "]");
      if (want.empty()) {
        REQUIRE(got.count(key) == 0);
        continue;
      }
      ++want_series;
      REQUIRE(got[key] == want);
    }
    REQUIRE(got.size() == want_series);
  }
}

}  // namespace
}  // namespace vigil::storage

namespace vigil::storage {
namespace {

TEST_CASE("Iterators: Seek, NextBatch and Next agree across chunks and ranges",
          "[db]") {
  testutil::TempDir tmp;
  Options o;
  o.max_chunk_samples = 37;
  auto db = MustOpen(tmp.path(), o);
  auto app = db->NewAppender();
  for (int i = 0; i < 500; ++i) {
    REQUIRE(app->Append(0, {{"__name__", "s"}}, i * 10, i).ok());
    if (i == 300) {
      REQUIRE(app->Commit().ok());
      REQUIRE(db->Flush().ok());  // some chunks persisted, some in the head
    }
  }
  REQUIRE(app->Commit().ok());
  auto m = Eq("__name__", "s");
  for (auto [mint, maxt] :
       {std::pair<Timestamp, Timestamp>{0, 4990}, {55, 3001}, {2995, 3005}}) {
    auto q = *db->NewQuerier(mint, maxt);
    auto set = *q->Select({m});
    REQUIRE(set->Next());
    // Reference: plain Next().
    std::vector<Timestamp> want;
    auto it = set->At().Iterator();
    while (it->Next()) want.push_back(it->t());
    Timestamp first = (mint + 9) / 10 * 10;
    REQUIRE(want.front() == first);
    REQUIRE(want.back() == maxt / 10 * 10);
    REQUIRE(want.size() == size_t((want.back() - first) / 10 + 1));
    // NextBatch in odd sizes, mixed with Next().
    auto bi = set->At().Iterator();
    std::vector<Timestamp> got;
    Timestamp tb[7];
    double vb[7];
    for (int round = 0;; ++round) {
      if (round % 3 == 0) {
        if (!bi->Next()) break;
        got.push_back(bi->t());
        REQUIRE(bi->v() == double(bi->t() / 10));
        continue;
      }
      size_t n = bi->NextBatch(tb, vb, 7);
      if (n == 0) break;
      for (size_t k = 0; k < n; ++k) {
        got.push_back(tb[k]);
        REQUIRE(vb[k] == double(tb[k] / 10));
      }
      REQUIRE(bi->t() == tb[n - 1]);
    }
    REQUIRE(got == want);
    // Seek forward, to the same place, and past the end.
    auto si = set->At().Iterator();
    Timestamp target = std::min<Timestamp>(first + 1234, want.back() - 3);
    REQUIRE(si->Seek(target));
    REQUIRE(si->t() == (target + 9) / 10 * 10);
    Timestamp at = si->t();
    REQUIRE(si->Seek(at));
    REQUIRE(si->t() == at);
    REQUIRE_FALSE(si->Seek(maxt + 1));
  }
}

// Stats().head_chunks is what ForEachChunk reports as in the head, without
// walking the chunks on disk (status/tsdb's chunkCount).
TEST_CASE("Stats counts the chunks held in memory", "[db]") {
  testutil::TempDir tmp;
  Options o;
  o.max_chunk_samples = 16;
  auto db = MustOpen(tmp.path(), o);
  auto in_head = [&] {
    uint64_t n = 0;
    REQUIRE(
        db->ForEachChunk(kMinTimestamp, kMaxTimestamp, [&](const ChunkMeta& c) {
            n += c.in_head ? 1 : 0;
          }).ok());
    return n;
  };
  CHECK(db->Stats().head_chunks == 0);
  auto app = db->NewAppender();
  for (int i = 0; i < 40; ++i) {
    REQUIRE(app->Append(0, {{"__name__", "m"}, {"a", "1"}}, i * 1000, i).ok());
    REQUIRE(app->Append(0, {{"__name__", "m"}, {"a", "2"}}, i * 1000, i).ok());
  }
  REQUIRE(app->Commit().ok());
  const uint64_t before = db->Stats().head_chunks;
  CHECK(before >= 2);  // each series' open chunk at least
  CHECK(before == in_head());
  REQUIRE(db->Flush().ok());
  CHECK(db->Stats().head_chunks == in_head());
  // A deleted series' chunks are not counted.
  REQUIRE(
      db->DeleteSeries(std::vector{Eq("a", "2")}, kMinTimestamp, kMaxTimestamp)
          .ok());
  CHECK(db->Stats().head_chunks == in_head());
  CHECK(db->Stats().head_chunks <= before / 2);
}

// Options::stats_walk_max_age_ms: the per-series figures of a recent walk
// are reused, the series count never is, and nothing is reused while a
// tombstone hides series.
TEST_CASE("Stats reuses a recent walk of the head but counts series live",
          "[db]") {
  testutil::TempDir tmp;
  Options o;
  o.stats_walk_max_age_ms = 3600 * 1000;
  auto db = MustOpen(tmp.path(), o);
  auto app = db->NewAppender();
  auto add = [&](const char* a, int64_t t) {
    REQUIRE(app->Append(0, {{"__name__", "m"}, {"a", a}}, t, 1).ok());
  };
  add("1", 1000);
  add("2", 1000);
  REQUIRE(app->Commit().ok());
  const DBStats first = db->Stats();
  CHECK(first.num_series == 2);
  CHECK(first.head_samples == 2);
  add("1", 2000);
  add("3", 2000);
  REQUIRE(app->Commit().ok());
  const DBStats second = db->Stats();
  CHECK(second.num_series == 3);    // live
  CHECK(second.head_samples == 2);  // the first walk's
  // A delete hides series: every call walks from then on.
  REQUIRE(
      db->DeleteSeries(std::vector{Eq("a", "2")}, kMinTimestamp, kMaxTimestamp)
          .ok());
  DBStats third = db->Stats();
  CHECK(third.num_series == 2);
  CHECK(third.head_samples == 4);
  add("2", 3000);  // the deleted series comes back with a new sample
  REQUIRE(app->Commit().ok());
  third = db->Stats();
  CHECK(third.num_series == 3);
  CHECK(third.head_samples == 5);
  // Without the option every call walks.
  Options every;
  testutil::TempDir tmp2;
  auto db2 = MustOpen(tmp2.path(), every);
  auto app2 = db2->NewAppender();
  REQUIRE(app2->Append(0, {{"__name__", "m"}}, 1000, 1).ok());
  REQUIRE(app2->Commit().ok());
  CHECK(db2->Stats().head_samples == 1);
  REQUIRE(app2->Append(0, {{"__name__", "m"}}, 2000, 1).ok());
  REQUIRE(app2->Commit().ok());
  CHECK(db2->Stats().head_samples == 2);
}

// Closing writes everything out as tables, and a checkpoint drops the
// tables the wal column family flushed (every 4 MiB of commits): a stopped
// server's directory holds neither an uncompressed RocksDB log of its last
// writes nor dead wal records (disk bytes per sample after a stop), and
// reopening finds every sample.
TEST_CASE("Close leaves no write-ahead log behind", "[db]") {
  testutil::TempDir tmp;
  auto bytes = [&](std::string_view ext) {
    uint64_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(tmp.path())) {
      if (e.path().extension() == ext) n += e.file_size();
    }
    return n;
  };
  constexpr int kSeries = 200, kSamples = 3000;
  {
    auto db = MustOpen(tmp.path());
    for (int i = 0; i < kSamples; i += 100) {
      auto app = db->NewAppender();
      for (int s = 0; s < kSeries; ++s) {
        Labels l{{"__name__", "m"}, {"s", std::to_string(s)}};
        for (int j = i; j < i + 100; ++j) {
          REQUIRE(app->Append(0, l, j * 15000, j).ok());
        }
      }
      REQUIRE(app->Commit().ok());
    }
    // The writes are in RocksDB's log, and the wal family has flushed.
    CHECK(bytes(".log") + bytes(".sst") > 4 * kSeries * kSamples);
  }
  CHECK(bytes(".log") < 4096);
  // What is left is the compressed chunks: well under a byte per sample
  // for these regular values, far under the wal's several.
  CHECK(bytes(".sst") < kSeries * kSamples);
  auto db = MustOpen(tmp.path());
  auto r = Query(db.get(), {Eq("__name__", "m")});
  REQUIRE(r.size() == kSeries);
  CHECK(r.begin()->second.size() == kSamples);
}

TEST_CASE("TakeLabels moves a series' labels out of the set, samples stay",
          "[storage]") {
  testutil::TempDir dir;
  auto db = testutil::MustOpen(dir.path());
  {
    auto app = db->NewAppender();
    for (int i = 0; i < 3; ++i) {
      REQUIRE(app->Append(0,
                          Labels{{"__name__", "m"},
                                 {"pod", "a-rather-long-pod-name-" +
                                             std::to_string(i)}},
                          1000, i)
                  .ok());
    }
    REQUIRE(app->Commit().ok());
  }
  auto q = db->NewQuerier(0, 2000);
  REQUIRE(q.ok());
  auto set = (*q)->Select({testutil::Eq("__name__", "m")});
  REQUIRE(set.ok());
  int i = 0;
  while ((*set)->Next()) {
    Labels l = (*set)->TakeLabels();
    CHECK(l.Get("pod") == "a-rather-long-pod-name-" + std::to_string(i));
    CHECK((*set)->At().labels().empty());
    bool found = false;
    Timestamp t = 0;
    double v = -1;
    REQUIRE((*set)->At().Latest(2000, &found, &t, &v).ok());
    CHECK(found);
    CHECK(t == 1000);
    CHECK(v == i);
    auto it = (*set)->At().Iterator();
    REQUIRE(it->Next());
    CHECK(it->v() == i);
    ++i;
  }
  CHECK(i == 3);
}

}  // namespace
}  // namespace vigil::storage
