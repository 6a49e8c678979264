// SeriesSet::NextBatch over the DB's unsorted selections (storage/querier.h):
// the batches, joined, are exactly the series of Next() in the same order
// with the same samples, whatever the batch size; series without samples in
// range (and batches made only of them) drop out; cold series are read with
// hot ones; each batch reads the data as of its own call.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::Eq;
using testutil::MustOpen;

constexpr Timestamp kBatchesMin = 60 * 1000;

struct Got {
  std::string labels;
  std::vector<std::pair<Timestamp, double>> samples;
  bool operator==(const Got&) const = default;
};

std::vector<std::pair<Timestamp, double>> Read(const Series& s) {
  std::vector<std::pair<Timestamp, double>> out;
  auto it = s.Iterator();
  while (it->Next()) out.emplace_back(it->t(), it->v());
  REQUIRE(it->err().ok());
  return out;
}

std::vector<Got> ByNext(SeriesSet* set) {
  std::vector<Got> out;
  while (set->Next()) {
    out.push_back({set->At().labels().ToString(), Read(set->At())});
  }
  REQUIRE(set->err().ok());
  return out;
}

// Reads each batch before asking for the next, as the engine does; the
// sizes of the batches go to *sizes.
std::vector<Got> ByBatches(SeriesSet* set, size_t max,
                           std::vector<size_t>* sizes) {
  std::vector<Got> out;
  std::vector<const Series*> series;
  std::vector<Labels> labels;
  while (set->NextBatch(max, &series, &labels)) {
    REQUIRE(series.size() == labels.size());
    sizes->push_back(series.size());
    for (size_t i = 0; i < series.size(); ++i) {
      // The labels were moved out of the series.
      CHECK(series[i]->labels().empty());
      out.push_back({labels[i].ToString(), Read(*series[i])});
    }
  }
  REQUIRE(set->err().ok());
  CHECK(series.empty());
  CHECK(labels.empty());
  return out;
}

Labels M(const std::string& job, int i) {
  return Labels{{"__name__", "m"}, {"job", job}, {"i", std::to_string(i)}};
}

// 700 "live" series with a sample each minute for 60 minutes; 300 "early"
// ones that stop at minute 20, created between them so that a range
// starting after minute 20 has runs of series with nothing in it.
void FillBatchesDb(DB* db) {
  std::vector<SeriesRef> live(700, 0), early(300, 0);
  for (int m = 1; m <= 60; ++m) {
    auto app = db->NewAppender();
    for (int i = 0; i < 1000; ++i) {
      const bool is_early = i >= 200 && i < 500;
      if (is_early && m > 20) continue;
      auto& ref = is_early ? early[i - 200] : live[i < 200 ? i : i - 300];
      auto r = app->Append(ref, M(is_early ? "early" : "live", i),
                           m * kBatchesMin, m * 1000 + i);
      REQUIRE(r.ok());
      ref = *r;
    }
    REQUIRE(app->Commit().ok());
  }
}

TEST_CASE("NextBatch gives the series of Next, in order, batch by batch",
          "[storage][select_batches]") {
  testutil::TempDir dir;
  Options o;
  o.max_chunk_samples = 16;  // chunks cut and written to RocksDB too
  auto db = MustOpen(dir.path(), o);
  FillBatchesDb(db.get());
  REQUIRE(db->Flush().ok());
  for (auto [mint, maxt, want] :
       {std::tuple<Timestamp, Timestamp, size_t>{0, 61 * kBatchesMin, 1000},
        {30 * kBatchesMin, 45 * kBatchesMin, 700},  // the early ones drop out
        {10 * kBatchesMin, 10 * kBatchesMin, 1000},
        {70 * kBatchesMin, 80 * kBatchesMin, 0}}) {
    INFO("range [" << mint << ", " << maxt << "]");
    auto q = db->NewQuerier(mint, maxt);
    REQUIRE(q.ok());
    auto one = (*q)->SelectUnsorted({Eq("__name__", "m")});
    REQUIRE(one.ok());
    const auto oracle = ByNext(one->get());
    CHECK(oracle.size() == want);
    for (size_t max : {1, 7, 256, 300, 1024, 5000}) {
      INFO("batches of " << max);
      auto set = (*q)->SelectUnsorted({Eq("__name__", "m")});
      REQUIRE(set.ok());
      std::vector<size_t> sizes;
      CHECK(ByBatches(set->get(), max, &sizes) == oracle);
      for (size_t n : sizes) {
        CHECK(n > 0);
        CHECK(n <= max);
      }
      // Asking again after the end stays at the end.
      std::vector<const Series*> series;
      std::vector<Labels> labels;
      CHECK_FALSE((*set)->NextBatch(max, &series, &labels));
    }
  }
}

// "labels t v" of the series' Latest at the end of the range used below.
std::string LatestText(const Series& s, const Labels& labels) {
  bool found = false;
  Timestamp t = 0;
  double v = 0;
  REQUIRE(s.Latest(40 * kBatchesMin, &found, &t, &v).ok());
  REQUIRE(found);
  return labels.ToString() + " " + std::to_string(t) + " " + std::to_string(v);
}

TEST_CASE("NextBatch of SelectLatest answers Latest as Next does",
          "[storage][select_batches]") {
  testutil::TempDir dir;
  auto db = MustOpen(dir.path());
  FillBatchesDb(db.get());
  auto q = db->NewQuerier(25 * kBatchesMin, 40 * kBatchesMin);
  REQUIRE(q.ok());
  auto one = (*q)->SelectLatest({Eq("__name__", "m")});
  auto batched = (*q)->SelectLatest({Eq("__name__", "m")});
  REQUIRE(one.ok());
  REQUIRE(batched.ok());
  std::vector<std::string> want;
  while ((*one)->Next()) {
    want.push_back(LatestText((*one)->At(), (*one)->At().labels()));
  }
  CHECK(want.size() == 700);
  std::vector<std::string> got;
  std::vector<const Series*> series;
  std::vector<Labels> labels;
  while ((*batched)->NextBatch(100, &series, &labels)) {
    for (size_t i = 0; i < series.size(); ++i) {
      got.push_back(LatestText(*series[i], labels[i]));
    }
  }
  CHECK(got == want);
}

TEST_CASE("NextBatch reads cold series in ref order with hot ones",
          "[storage][select_batches]") {
  testutil::TempDir dir;
  Options o;
  o.retention_ms = 0;
  o.head_idle_ms = 10 * kBatchesMin;
  o.max_chunk_samples = 16;
  auto db = MustOpen(dir.path(), o);
  FillBatchesDb(db.get());
  // The early series are idle since minute 20: head GC makes them cold.
  REQUIRE(db->ApplyRetention(60 * kBatchesMin).ok());
  REQUIRE(db->Stats().cold_series == 300);
  auto q = db->NewQuerier(0, 61 * kBatchesMin);
  REQUIRE(q.ok());
  auto one = (*q)->SelectUnsorted({Eq("__name__", "m")});
  auto batched = (*q)->SelectUnsorted({Eq("__name__", "m")});
  REQUIRE(one.ok());
  REQUIRE(batched.ok());
  const auto oracle = ByNext(one->get());
  REQUIRE(oracle.size() == 1000);
  // Creation order: live 0-199, early 200-499, live 500-999.
  CHECK(oracle[0].labels == M("live", 0).ToString());
  CHECK(oracle[200].labels == M("early", 200).ToString());
  CHECK(oracle[500].labels == M("live", 500).ToString());
  CHECK(oracle[200].samples.size() == 20);
  std::vector<size_t> sizes;
  CHECK(ByBatches(batched->get(), 128, &sizes) == oracle);
}

TEST_CASE("NextBatch: each batch reads the data as of its own call",
          "[storage][select_batches]") {
  testutil::TempDir dir;
  auto db = MustOpen(dir.path());
  FillBatchesDb(db.get());
  auto q = db->NewQuerier(0, 100 * kBatchesMin);
  REQUIRE(q.ok());
  auto set = (*q)->SelectUnsorted({Eq("__name__", "m")});
  REQUIRE(set.ok());
  std::vector<const Series*> series;
  std::vector<Labels> labels;
  REQUIRE((*set)->NextBatch(10, &series, &labels));
  CHECK(labels.front() == M("live", 0));
  // The first batch was read: a commit now reaches the later batches only.
  {
    auto app = db->NewAppender();
    REQUIRE(app->Append(0, M("live", 0), 61 * kBatchesMin, 1).ok());
    REQUIRE(app->Append(0, M("live", 999), 61 * kBatchesMin, 2).ok());
    REQUIRE(app->Commit().ok());
  }
  CHECK(Read(*series.front()).size() == 60);
  std::vector<std::pair<Timestamp, double>> last;
  size_t total = series.size();
  while ((*set)->NextBatch(10, &series, &labels)) {
    total += series.size();
    if (labels.back() == M("live", 999)) last = Read(*series.back());
  }
  REQUIRE((*set)->err().ok());
  // No new series: the selection was made at Select().
  CHECK(total == 1000);
  REQUIRE(last.size() == 61);
  CHECK(last.back() == std::pair<Timestamp, double>{61 * kBatchesMin, 2});
}

}  // namespace
}  // namespace vigil::storage
