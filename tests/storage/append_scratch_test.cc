// The appenders' pooled batch buffers (append_scratch.h): the newest-sample
// table against a std::map model, its O(1) clear, the pool's bounds, and
// what a batch appending one series twice still refuses.
#include "storage/internal/append_scratch.h"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "storage/db.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using internal::AppendScratch;
using internal::AppendScratchPool;
using internal::LastSampleTable;
using internal::MemSeries;

// Distinct fake series addresses, 16 bytes apart as heap blocks are.
const MemSeries* Fake(size_t i) {
  return reinterpret_cast<const MemSeries*>(uintptr_t{0x100000} + 16 * i);
}

TEST_CASE("LastSampleTable keeps the newest sample per series, as a map does",
          "[storage][append]") {
  LastSampleTable table;
  std::mt19937 rng(7);
  for (int batch = 0; batch < 20; ++batch) {
    std::map<const MemSeries*, std::pair<Timestamp, double>> model;
    const size_t n = 1 + rng() % 3000, keys = 1 + rng() % 2000;
    for (size_t i = 0; i < n; ++i) {
      const MemSeries* s = Fake(rng() % keys);
      const Timestamp t = Timestamp(i);
      const double v = double(rng() % 100);
      table.Put(s, t, v);
      model[s] = {t, v};
    }
    REQUIRE(table.size() == model.size());
    for (size_t k = 0; k < keys; ++k) {
      const LastSampleTable::Entry* e = table.Find(Fake(k));
      auto it = model.find(Fake(k));
      if (it == model.end()) {
        CHECK(e == nullptr);
      } else {
        REQUIRE(e != nullptr);
        CHECK(e->t == it->second.first);
        CHECK(e->v == it->second.second);
      }
    }
    const size_t cap = table.capacity();
    table.Clear();
    // Cleared without freeing: the slots stay, and nothing of the batch is
    // found.
    CHECK(table.capacity() == cap);
    CHECK(table.size() == 0);
    for (size_t k = 0; k < keys; ++k) CHECK(table.Find(Fake(k)) == nullptr);
  }
}

TEST_CASE("The scratch pool reuses buffers and bounds what it keeps",
          "[storage][append]") {
  AppendScratchPool pool;
  auto a = pool.Get();
  a->samples.resize(1000);
  a->last.Put(Fake(1), 1, 1);
  const auto* addr = a.get();
  pool.Put(std::move(a));
  auto b = pool.Get();
  CHECK(b.get() == addr);  // the same buffers back, cleared
  CHECK(b->samples.empty());
  CHECK(b->samples.capacity() >= 1000);
  CHECK(b->last.size() == 0);
  CHECK(b->last.Find(Fake(1)) == nullptr);
  // A batch that grew huge is freed, not kept.
  b->samples.resize(AppendScratchPool::kMaxPooledSamples + 1);
  pool.Put(std::move(b));
  auto c = pool.Get();
  CHECK(c->samples.capacity() == 0);
  // At most kMaxPooled are kept.
  std::vector<std::unique_ptr<AppendScratch>> many;
  for (size_t i = 0; i < AppendScratchPool::kMaxPooled + 5; ++i) {
    many.push_back(pool.Get());
    many.back()->samples.reserve(10);
  }
  for (auto& s : many) pool.Put(std::move(s));
  size_t reused = 0;
  for (size_t i = 0; i < AppendScratchPool::kMaxPooled + 5; ++i) {
    if (pool.Get()->samples.capacity() >= 10) ++reused;
  }
  CHECK(reused == AppendScratchPool::kMaxPooled);
}

TEST_CASE("Appenders reusing pooled buffers still see their own batch",
          "[storage][append]") {
  testutil::TempDir tmp;
  auto db = testutil::MustOpen(tmp.path());
  Labels l{{"__name__", "m"}, {"i", "1"}};
  for (int round = 1; round <= 3; ++round) {
    auto app = db->NewAppender();
    const Timestamp t = round * 1000;
    REQUIRE(app->Append(0, l, t, 1.0).ok());
    // The same series again in this batch: a duplicate is a no-op, an older
    // or different-valued sample is refused against the buffered one.
    CHECK(app->Append(0, l, t, 1.0).ok());
    CHECK(app->Append(0, l, t, 2.0).status().code() ==
          absl::StatusCode::kAlreadyExists);
    CHECK(app->Append(0, l, t - 1, 3.0).status().code() ==
          absl::StatusCode::kFailedPrecondition);
    REQUIRE(app->Append(0, l, t + 500, 4.0).ok());
    REQUIRE(app->Commit().ok());
  }
  // A rolled-back batch leaves nothing buffered for the next one.
  {
    auto app = db->NewAppender();
    REQUIRE(app->Append(0, l, 10000, 5.0).ok());
    app->Rollback();
    REQUIRE(app->Append(0, l, 9000, 6.0).ok());
    REQUIRE(app->Commit().ok());
  }
  auto res = testutil::Query(db.get(), {testutil::Eq("i", "1")});
  REQUIRE(res.size() == 1);
  CHECK(res.begin()->second == testutil::Samples{{1000, 1.0},
                                                 {1500, 4.0},
                                                 {2000, 1.0},
                                                 {2500, 4.0},
                                                 {3000, 1.0},
                                                 {3500, 4.0},
                                                 {9000, 6.0}});
}

// A series' in-batch mark (MemSeries::kInBatch) belongs to the first batch
// that buffers it: another batch buffering the series must check against
// its own samples, and must not clear the owner's mark when it commits.
TEST_CASE("Appenders sharing a series each check their own batch",
          "[storage][append]") {
  testutil::TempDir tmp;
  auto db = testutil::MustOpen(tmp.path());
  Labels a{{"__name__", "m"}, {"i", "a"}}, b{{"__name__", "m"}, {"i", "b"}};
  auto first = db->NewAppender(), second = db->NewAppender();
  // `first` marks a; `second` buffers an older sample of a and commits it.
  REQUIRE(first->Append(0, a, 1000, 1.0).ok());
  REQUIRE(second->Append(0, a, 500, 7.0).ok());
  REQUIRE(second->Commit().ok());
  // Against the stored 500 this would pass; against `first`'s own 1000 it
  // is out of order (it would pass if `second` had cleared the mark).
  CHECK(first->Append(0, a, 900, 2.0).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  // `second` buffers b after `first` marked it; `first` commits.
  REQUIRE(first->Append(0, b, 1000, 1.0).ok());
  REQUIRE(second->Append(0, b, 2000, 1.0).ok());
  REQUIRE(first->Commit().ok());
  // Against the stored 1000 this would pass; against `second`'s own 2000
  // it is out of order, and a different value at 2000 a duplicate.
  CHECK(second->Append(0, b, 1500, 3.0).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  CHECK(second->Append(0, b, 2000, 4.0).status().code() ==
        absl::StatusCode::kAlreadyExists);
  REQUIRE(second->Commit().ok());
  auto res = testutil::Query(db.get(), {testutil::Eq("__name__", "m")});
  CHECK(res[a.ToString()] == testutil::Samples{{500, 7.0}, {1000, 1.0}});
  CHECK(res[b.ToString()] == testutil::Samples{{1000, 1.0}, {2000, 1.0}});
}

// Three appenders interleaving appends, commits and rollbacks over a few
// series, against a model: each Append is checked against the newest
// sample its own batch holds for the series, else the newest stored; a
// commit stores, in order, the samples newer than what is stored by then.
TEST_CASE("Interleaved appenders agree with a model of their batches",
          "[storage][append]") {
  testutil::TempDir tmp;
  auto db = testutil::MustOpen(tmp.path());
  constexpr int kSeries = 24;
  std::vector<Labels> ls;
  for (int i = 0; i < kSeries; ++i) {
    ls.push_back(Labels{{"__name__", "m"}, {"i", std::to_string(i)}});
  }
  struct Batch {
    std::unique_ptr<Appender> app;
    std::map<int, std::pair<Timestamp, double>> newest;
    std::vector<std::tuple<int, Timestamp, double>> samples;
  };
  std::map<int, std::pair<Timestamp, double>> stored;
  std::map<int, testutil::Samples> history;
  auto commit = [&](Batch& b, bool keep) {
    if (keep) {
      REQUIRE(b.app->Commit().ok());
      for (auto [i, t, v] : b.samples) {
        auto it = stored.find(i);
        if (it != stored.end() && t <= it->second.first) continue;
        stored[i] = {t, v};
        history[i].push_back({t, v});
      }
    } else {
      b.app->Rollback();
    }
    b.newest.clear();
    b.samples.clear();
  };
  std::vector<Batch> batches(3);
  for (Batch& b : batches) b.app = db->NewAppender();
  std::mt19937 rng(11);
  Timestamp clock = 1000;
  for (int step = 0; step < 6000; ++step) {
    Batch& b = batches[rng() % batches.size()];
    const uint32_t action = rng() % 100;
    if (action < 6) {
      commit(b, action < 5);
      continue;
    }
    if (rng() % 8 == 0) clock += 10;
    const int i = int(rng() % kSeries);
    const Timestamp t = clock + Timestamp(rng() % 7) - 3;
    const double v = double(rng() % 2);
    const std::pair<Timestamp, double>* ref = nullptr;
    if (auto it = b.newest.find(i); it != b.newest.end()) {
      ref = &it->second;
    } else if (auto st = stored.find(i); st != stored.end()) {
      ref = &st->second;
    }
    absl::StatusCode want = absl::StatusCode::kOk;
    bool buffered = true;
    if (ref != nullptr && t < ref->first) {
      want = absl::StatusCode::kFailedPrecondition;
    } else if (ref != nullptr && t == ref->first) {
      want = v == ref->second ? absl::StatusCode::kOk
                              : absl::StatusCode::kAlreadyExists;
      buffered = false;
    }
    INFO("step " << step << " series " << i << " t " << t);
    REQUIRE(b.app->Append(0, ls[size_t(i)], t, v).status().code() == want);
    if (want == absl::StatusCode::kOk && buffered) {
      b.newest[i] = {t, v};
      b.samples.emplace_back(i, t, v);
    }
  }
  for (Batch& b : batches) commit(b, true);
  auto res = testutil::Query(db.get(), {testutil::Eq("__name__", "m")});
  for (int i = 0; i < kSeries; ++i) {
    INFO("series " << i);
    CHECK(res[ls[size_t(i)].ToString()] == history[i]);
  }
}

}  // namespace
}  // namespace vigil::storage
