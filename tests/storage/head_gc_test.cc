// Head GC (storage/internal/db_cold.cc): series idle for
// Options::head_idle_ms leave memory at ApplyRetention, stay queryable,
// come back under the same ref when a sample arrives, survive restarts and
// kill -9, and are forgotten once retention deleted their data. Also the
// epoch manager and the reference-counted symbol table that let the head
// free their memory.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <thread>

#include "storage/internal/epoch.h"
#include "storage/internal/symbols.h"
#include "storage/verify.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::Eq;
using testutil::MustOpen;
using testutil::Query;
using testutil::Re;
using testutil::Samples;

constexpr Timestamp kGcMin = 60 * 1000;

Labels Idle(int i) {
  return Labels{{"__name__", "m"}, {"job", "idle"}, {"i", std::to_string(i)}};
}
Labels Busy(int i) {
  return Labels{{"__name__", "m"}, {"job", "busy"}, {"i", std::to_string(i)}};
}

Options GcOptions() {
  Options o;
  o.retention_ms = 0;
  o.head_idle_ms = 10 * kGcMin;
  o.max_chunk_samples = 16;  // some chunks are cut and written before GC
  return o;
}

// `idle` series with samples every minute for 30 minutes, `busy` ones for
// 60 minutes; returns the idle series' refs.
std::vector<SeriesRef> FillGcDb(DB* db, int idle, int busy) {
  std::vector<SeriesRef> refs(idle);
  auto app = db->NewAppender();
  for (int m = 1; m <= 60; ++m) {
    for (int i = 0; i < idle && m <= 30; ++i) {
      auto r = app->Append(0, Idle(i), m * kGcMin, m * 10 + i);
      REQUIRE(r.ok());
      refs[i] = *r;
    }
    for (int i = 0; i < busy; ++i) {
      REQUIRE(app->Append(0, Busy(i), m * kGcMin, m).ok());
    }
    REQUIRE(app->Commit().ok());
  }
  return refs;
}

Samples IdleSamples(int i, int last_minute = 30) {
  Samples s;
  for (int m = 1; m <= last_minute; ++m) s.push_back({m * kGcMin, m * 10 + i});
  return s;
}

std::vector<std::string> GcValues(DB* db, const std::string& name,
                                  std::vector<Matcher> ms = {},
                                  Timestamp mint = kMinTimestamp) {
  auto q = db->NewQuerier(mint, kMaxTimestamp);
  REQUIRE(q.ok());
  auto v = (*q)->LabelValues(name, ms);
  REQUIRE(v.ok());
  return *v;
}

TEST_CASE("head GC: idle series leave memory and stay queryable",
          "[storage][headgc]") {
  testutil::TempDir dir;
  auto db = MustOpen(dir.path(), GcOptions());
  FillGcDb(db.get(), 40, 10);
  const auto before = Query(db.get(), {Eq("__name__", "m")});
  const uint64_t mem_before = db->Stats().head_memory_bytes;
  REQUIRE(db->Stats().num_series == 50);

  // Idle since minute 30; at minute 60 with a 10-minute idle time they go.
  REQUIRE(db->ApplyRetention(60 * kGcMin).ok());
  DBStats st = db->Stats();
  CHECK(st.num_series == 10);
  CHECK(st.cold_series == 40);
  CHECK(st.head_gc_evicted == 40);
  CHECK(st.head_memory_bytes < mem_before);

  // Every sample is still there, from RocksDB.
  CHECK(Query(db.get(), {Eq("__name__", "m")}) == before);
  CHECK(Query(db.get(), {Eq("job", "idle"), Re("i", "1.*")}).size() == 11);
  CHECK(Query(db.get(), {Eq("i", "7"), Eq("job", "idle")}) ==
        std::map<std::string, Samples>{{Idle(7).ToString(), IdleSamples(7)}});
  // A negative matcher alone selects cold series too.
  auto ne = *Matcher::Make(MatchType::kNotEqual, "job", "busy");
  CHECK(Query(db.get(), {ne}).size() == 40);
  // A range after their last sample does not read them.
  CHECK(Query(db.get(), {Eq("job", "idle")}, 31 * kGcMin, 60 * kGcMin).empty());

  // Label listings include them over a range that reaches them.
  CHECK(GcValues(db.get(), "job") == std::vector<std::string>{"busy", "idle"});
  CHECK(GcValues(db.get(), "i", {Eq("job", "idle")}).size() == 40);
  CHECK(GcValues(db.get(), "i").size() == 40);
  CHECK(GcValues(db.get(), "job", {}, 31 * kGcMin) ==
        std::vector<std::string>{"busy"});
  auto q = db->NewQuerier(kMinTimestamp, kMaxTimestamp);
  REQUIRE(q.ok());
  auto names = (*q)->LabelNames({Eq("job", "idle")});
  REQUIRE(names.ok());
  CHECK(*names == std::vector<std::string>{"__name__", "i", "job"});
  std::vector<SeriesRef> listed;
  db->ForEachSeries([&](SeriesRef r, const Labels&) { listed.push_back(r); });
  CHECK(listed.size() == 50);
  CHECK(std::is_sorted(listed.begin(), listed.end()));
  int in_head = 0;
  db->ForEachHeadSeries([&](SeriesRef, const Labels& l) {
    ++in_head;
    CHECK(l.Get("job") == "busy");
  });
  CHECK(in_head == 10);
}

TEST_CASE("head GC: a sample brings a cold series back under its ref",
          "[storage][headgc]") {
  testutil::TempDir dir;
  auto db = MustOpen(dir.path(), GcOptions());
  std::vector<SeriesRef> refs = FillGcDb(db.get(), 5, 1);
  REQUIRE(db->ApplyRetention(60 * kGcMin).ok());
  REQUIRE(db->Stats().cold_series == 5);

  auto app = db->NewAppender();
  SECTION("by labels") {
    auto r = app->Append(0, Idle(2), 61 * kGcMin, 1.5);
    REQUIRE(r.ok());
    CHECK(*r == refs[2]);
  }
  SECTION("by the ref a scrape cache kept") {
    auto r = app->Append(refs[2], Labels(), 61 * kGcMin, 1.5);
    REQUIRE(r.ok());
    CHECK(*r == refs[2]);
  }
  // Its newest sample came back with it: older ones are out of order.
  auto old = app->Append(refs[2], Labels(), 30 * kGcMin, 9);
  CHECK(absl::IsFailedPrecondition(old.status()));
  REQUIRE(app->Commit().ok());
  CHECK(db->Stats().num_series == 2);
  CHECK(db->Stats().cold_series == 4);
  CHECK(db->Stats().head_gc_revived == 1);

  Samples want = IdleSamples(2);
  want.push_back({61 * kGcMin, 1.5});
  auto got = Query(db.get(), {Eq("job", "idle"), Eq("i", "2")});
  REQUIRE(got.size() == 1);
  CHECK(got.begin()->second == want);
  CHECK(Query(db.get(), {Eq("job", "idle")}).size() == 5);
}

TEST_CASE("head GC: a batch holding an evicted series commits to it",
          "[storage][headgc]") {
  testutil::TempDir dir;
  auto db = MustOpen(dir.path(), GcOptions());
  FillGcDb(db.get(), 3, 1);
  auto app = db->NewAppender();
  // Buffered while the series is still in the head...
  REQUIRE(app->Append(0, Idle(1), 70 * kGcMin, 7).ok());
  // ...which GC then moves out (its last committed sample is old).
  REQUIRE(db->ApplyRetention(60 * kGcMin).ok());
  REQUIRE(db->Stats().cold_series == 3);
  REQUIRE(app->Commit().ok());
  CHECK(db->Stats().cold_series == 2);
  Samples want = IdleSamples(1);
  want.push_back({70 * kGcMin, 7});
  auto got = Query(db.get(), {Eq("job", "idle"), Eq("i", "1")});
  REQUIRE(got.size() == 1);
  CHECK(got.begin()->second == want);
}

TEST_CASE("head GC: cold series stay cold across a restart",
          "[storage][headgc]") {
  testutil::TempDir dir;
  std::map<std::string, Samples> before;
  {
    auto db = MustOpen(dir.path(), GcOptions());
    FillGcDb(db.get(), 20, 5);
    before = Query(db.get(), {Eq("__name__", "m")});
    REQUIRE(db->ApplyRetention(60 * kGcMin).ok());
  }
  auto report = Verify(dir.path());
  REQUIRE(report.ok());
  CHECK(report->damage.empty());
  CHECK(report->records["cold"] == 20 + 20 * 3 + 20);  // s, p per label, h
  auto db = MustOpen(dir.path(), GcOptions());
  CHECK(db->Stats().num_series == 5);
  CHECK(db->Stats().cold_series == 20);
  CHECK(Query(db.get(), {Eq("__name__", "m")}) == before);
  auto app = db->NewAppender();
  REQUIRE(app->Append(0, Idle(3), 80 * kGcMin, 1).ok());
  REQUIRE(app->Commit().ok());
  CHECK(db->Stats().cold_series == 19);
}

// The child fills, evicts (the WAL still holds the evicted series'
// samples), optionally revives one, commits more, then waits to be killed.
void CrashAfterGc(const std::string& path, bool revive) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    auto db = DB::Open(GcOptions(), path);
    if (!db.ok()) _exit(1);
    auto app = (*db)->NewAppender();
    for (int m = 1; m <= 60; ++m) {
      for (int i = 0; i < 4 && m <= 30; ++i) {
        if (!app->Append(0, Idle(i), m * kGcMin, m * 10 + i).ok()) _exit(2);
      }
      if (!app->Append(0, Busy(0), m * kGcMin, m).ok()) _exit(2);
      if (!app->Commit().ok()) _exit(3);
    }
    if (!(*db)->ApplyRetention(60 * kGcMin).ok()) _exit(4);
    if (revive && !app->Append(0, Idle(0), 61 * kGcMin, 0.5).ok()) _exit(5);
    if (!app->Append(0, Busy(0), 61 * kGcMin, 61).ok()) _exit(5);
    if (!app->Commit().ok()) _exit(6);
    char c = 1;
    if (write(fds[1], &c, 1) != 1) _exit(7);
    pause();
    _exit(0);
  }
  close(fds[1]);
  char c = 0;
  REQUIRE(read(fds[0], &c, 1) == 1);
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  close(fds[0]);
}

TEST_CASE("head GC: kill -9 after an eviction loses nothing",
          "[storage][headgc][crash]") {
  testutil::TempDir dir;
  const bool revive = GENERATE(false, true);
  CrashAfterGc(dir.path(), revive);
  auto db = MustOpen(dir.path(), GcOptions());
  CHECK(db->Stats().cold_series == (revive ? 3 : 4));
  for (int i = 0; i < 4; ++i) {
    Samples want = IdleSamples(i);
    if (revive && i == 0) want.push_back({61 * kGcMin, 0.5});
    auto got = Query(db.get(), {Eq("job", "idle"), Eq("i", std::to_string(i))});
    INFO("series " << i);
    REQUIRE(got.size() == 1);
    CHECK(got.begin()->second == want);
  }
  auto busy = Query(db.get(), {Eq("job", "busy")});
  REQUIRE(busy.size() == 1);
  CHECK(busy.begin()->second.size() == 61);
}

TEST_CASE("head GC: retention forgets cold series with nothing left",
          "[storage][headgc]") {
  testutil::TempDir dir;
  Options o = GcOptions();
  const Timestamp day = 24 * 60 * kGcMin;
  o.retention_ms = day;
  auto db = MustOpen(dir.path(), o);
  FillGcDb(db.get(), 6, 1);  // day 0
  REQUIRE(db->ApplyRetention(60 * kGcMin).ok());
  REQUIRE(db->Stats().cold_series == 6);
  auto app = db->NewAppender();
  REQUIRE(app->Append(0, Busy(0), 3 * day, 1).ok());
  REQUIRE(app->Commit().ok());
  REQUIRE(db->ApplyRetention(3 * day).ok());
  CHECK(db->Stats().cold_series == 0);
  int listed = 0;
  db->ForEachSeries([&](SeriesRef, const Labels&) { ++listed; });
  CHECK(listed == 1);
  CHECK(Query(db.get(), {Eq("job", "idle")}).empty());
  CHECK(GcValues(db.get(), "job") == std::vector<std::string>{"busy"});
  // A new sample with the same labels is a new series.
  REQUIRE(app->Append(0, Idle(0), 3 * day + 1, 1).ok());
  REQUIRE(app->Commit().ok());
  CHECK(Query(db.get(), {Eq("job", "idle")}).size() == 1);
}

TEST_CASE("head GC: delete_series reaches cold series", "[storage][headgc]") {
  testutil::TempDir dir;
  auto db = MustOpen(dir.path(), GcOptions());
  FillGcDb(db.get(), 4, 1);
  REQUIRE(db->ApplyRetention(60 * kGcMin).ok());
  std::vector<Matcher> ms{Eq("i", "1"), Eq("job", "idle")};
  REQUIRE(db->DeleteSeries(ms, kMinTimestamp, kMaxTimestamp).ok());
  CHECK(Query(db.get(), ms).empty());
  CHECK(Query(db.get(), {Eq("job", "idle")}).size() == 3);
}

TEST_CASE("head GC: memory of evicted series is given back",
          "[storage][headgc]") {
  testutil::TempDir dir;
  auto db = MustOpen(dir.path(), GcOptions());
  auto app = db->NewAppender();
  for (int i = 0; i < 20000; ++i) {
    Labels l{{"__name__", "churn"},
             {"pod", "pod-" + std::to_string(i)},
             {"request_id", std::to_string(i * 7919)}};
    REQUIRE(app->Append(0, l, kGcMin, i).ok());
  }
  REQUIRE(app->Commit().ok());
  const uint64_t full = db->Stats().head_memory_bytes;
  REQUIRE(db->ApplyRetention(60 * kGcMin).ok());
  const uint64_t after = db->Stats().head_memory_bytes;
  INFO(full << " -> " << after);
  CHECK(db->Stats().num_series == 0);
  // Series, their unique label values and the ref blocks go; what stays
  // is fixed-size (the current ref block, hash tables' buckets).
  CHECK(after * 2 < full);
}

TEST_CASE("head GC races appends, queries and evictions",
          "[storage][headgc][concurrency]") {
  testutil::TempDir dir;
  Options o = GcOptions();
  o.head_idle_ms = 1;  // every series not appended to just now goes
  auto db = MustOpen(dir.path(), o);
  constexpr int kSeries = 64, kRounds = 300;
  std::atomic<bool> done{false};
  std::atomic<int> query_errors{0};
  std::atomic<int> rounds_done{0};
  std::mutex why_mu;
  std::string why;  // the first error, for the report
  auto fail = [&](std::string w) {
    std::lock_guard<std::mutex> l(why_mu);
    if (why.empty()) why = std::move(w);
    ++query_errors;
  };
  std::thread gc([&] {
    while (!done.load()) {
      (void)db->ApplyRetention(kMaxTimestamp / 2);
      std::this_thread::yield();
    }
  });
  std::thread reader([&] {
    while (!done.load()) {
      // Once every series has a sample (read before the selection), each
      // shows exactly once, whether hot, cold or moving between the two.
      const bool all_exist = rounds_done.load() >= 2;
      auto q = db->NewQuerier(kMinTimestamp, kMaxTimestamp);
      if (!q.ok()) {
        fail(q.status().ToString());
        continue;
      }
      auto set = (*q)->Select({Eq("__name__", "r")});
      if (!set.ok()) {
        fail(set.status().ToString());
        continue;
      }
      int n = 0;
      while ((*set)->Next()) {
        ++n;
        auto it = (*set)->At().Iterator();
        Timestamp last = kMinTimestamp;
        while (it->Next()) {
          if (it->t() <= last) {  // duplicated or unsorted
            fail("sample " + std::to_string(it->t()) + " after " +
                 std::to_string(last) + " in " +
                 (*set)->At().labels().ToString());
          }
          last = it->t();
        }
      }
      if (all_exist && n != kSeries) {
        fail(std::to_string(n) + " series selected, not " +
             std::to_string(kSeries));
      }
    }
  });
  std::vector<SeriesRef> refs(kSeries, 0);
  auto app = db->NewAppender();
  for (int r = 1; r <= kRounds; ++r) {
    for (int i = 0; i < kSeries; ++i) {
      // Each round touches a rotating half, so series go cold and return,
      // half by ref (a scrape cache) and half by labels.
      if ((i + r) % 2 != 0) continue;
      Labels l{{"__name__", "r"}, {"i", std::to_string(i)}};
      auto got = app->Append(i % 4 == 0 ? refs[i] : 0, l, r * 1000, r);
      REQUIRE(got.ok());
      refs[i] = *got;
    }
    REQUIRE(app->Commit().ok());
    rounds_done = r;
  }
  done = true;
  gc.join();
  reader.join();
  INFO(why);
  CHECK(query_errors.load() == 0);
  auto all = Query(db.get(), {Eq("__name__", "r")});
  REQUIRE(all.size() == kSeries);
  for (const auto& [name, samples] : all) {
    INFO(name);
    CHECK(samples.size() == kRounds / 2);
  }
}

TEST_CASE("epochs: retired work waits for every older reader",
          "[storage][headgc]") {
  internal::EpochManager em;
  int freed = 0;
  {
    auto g1 = em.Pin();
    em.Retire([&] { freed |= 1; });
    auto g2 = em.Pin();
    em.Retire([&] { freed |= 2; });
    CHECK(freed == 0);
    g2.Release();
    CHECK(freed == 0);  // g1 is older than the second retirement too
  }
  CHECK(freed == 3);
  em.Retire([&] { freed |= 4; });  // no reader: at once
  CHECK(freed == 7);
}

TEST_CASE("symbols: released strings are freed and their ids reused",
          "[storage][headgc]") {
  internal::SymbolTable st;
  uint32_t a = st.Intern("a"), b = st.Intern("b");
  CHECK(st.Intern("a") == a);
  std::vector<uint32_t> dead;
  uint32_t ids[] = {a, b};
  st.Release(ids, 2, &dead);
  CHECK(dead == std::vector<uint32_t>{b});  // "a" still has a reference
  CHECK(st.Find("b") == internal::SymbolTable::kNotFound);
  CHECK(st.Get(b) == "b");  // readers may still look until Free
  st.Free(dead);
  CHECK(st.size() == 1);
  CHECK(st.Intern("c") == b);  // id reused
  CHECK(st.Get(b) == "c");
  CHECK(st.Get(a) == "a");
}

}  // namespace
}  // namespace vigil::storage
