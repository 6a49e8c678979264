// topk/bottomk ties follow storage order, as in Prometheus: the engine
// selects without sorting, the DB hands series out in creation order, and
// the heap and Go's sort.Sort decide the rest (testdata/topk_ties.test has
// the detailed cases). Also Go's sort.Sort itself.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "promql/engine.h"
#include "promql/internal/gosort.h"
#include "promql/promqltest/storage.h"
#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::promql {
namespace {

std::vector<std::string> Gpus(const Vector& v) {
  std::vector<std::string> out;
  for (const Sample& s : v) out.emplace_back(s.metric.Get("gpu"));
  return out;
}

// Appends gpu_util for `gpus` in this order (so this is creation order).
void AppendGpus(storage::Appendable* db, const std::vector<std::string>& gpus,
                const std::vector<double>& values) {
  auto app = db->NewAppender();
  for (size_t i = 0; i < gpus.size(); i++) {
    Labels l{{"__name__", "gpu_util"}, {"gpu", gpus[i]}};
    REQUIRE(app->Append(0, l, 60000, values[i]).ok());
  }
  REQUIRE(app->Commit().ok());
}

TEST_CASE("the DB hands series to the engine in creation order",
          "[promql][topk]") {
  testutil::TempDir dir;
  auto db = storage::DB::Open(storage::Options{}, dir.path());
  REQUIRE(db.ok());
  // Created in an order unlike label order; every GPU at 90 %.
  AppendGpus(db->get(), {"7", "3", "5", "0", "2"}, {90, 90, 90, 90, 90});
  Engine e;
  auto r = e.InstantQuery(db->get(), "topk(1, gpu_util)", 60000);
  REQUIRE(r.ok());
  CHECK(Gpus(r->value.vector) == std::vector<std::string>{"7"});
  r = e.InstantQuery(db->get(), "bottomk(2, gpu_util)", 60000);
  REQUIRE(r.ok());
  CHECK(Gpus(r->value.vector) == std::vector<std::string>{"7", "3"});
  // An instant vector comes back in that order too, as from Prometheus.
  r = e.InstantQuery(db->get(), "gpu_util", 60000);
  REQUIRE(r.ok());
  CHECK(Gpus(r->value.vector) ==
        std::vector<std::string>{"7", "3", "5", "0", "2"});
  // Select itself still sorts by labels.
  auto q = (*db)->NewQuerier(0, 120000);
  REQUIRE(q.ok());
  auto set =
      (*q)->Select({*Matcher::Make(MatchType::kEqual, "__name__", "gpu_util")});
  REQUIRE(set.ok());
  std::vector<std::string> sorted;
  while ((*set)->Next()) sorted.emplace_back((*set)->At().labels().Get("gpu"));
  CHECK(sorted == std::vector<std::string>{"0", "2", "3", "5", "7"});
}

TEST_CASE("a tie goes to the series created first, also after a replacement",
          "[promql][topk]") {
  promqltest::MemStorage s;
  const std::vector<std::string> gpus = {"b", "d", "a", "c", "e"};
  const std::vector<double> vals = {10, 50, 50, 20, 50};
  for (size_t i = 0; i < gpus.size(); i++)
    s.Append(Labels{{"__name__", "gpu_util"}, {"gpu", gpus[i]}}, 0, vals[i]);
  Engine e;
  auto r = e.InstantQuery(&s, "topk(1, gpu_util)", 0);
  REQUIRE(r.ok());
  CHECK(Gpus(r->value.vector) == std::vector<std::string>{"d"});
  // k > 1: heap [b d a]; c (20) does not get in, e (50) replaces b (the
  // root); Go's sort.Sort of the heap then gives the output order.
  r = e.InstantQuery(&s, "topk(3, gpu_util)", 0);
  REQUIRE(r.ok());
  CHECK(Gpus(r->value.vector) == std::vector<std::string>{"e", "d", "a"});
  // k larger than the group returns every series, NaN last.
  s.Append(Labels{{"__name__", "gpu_util"}, {"gpu", "f"}}, 0, NAN);
  r = e.InstantQuery(&s, "topk(10, gpu_util)", 0);
  REQUIRE(r.ok());
  CHECK(Gpus(r->value.vector) ==
        std::vector<std::string>{"d", "e", "a", "c", "b", "f"});
  r = e.InstantQuery(&s, "bottomk(10, gpu_util)", 0);
  REQUIRE(r.ok());
  CHECK(Gpus(r->value.vector) ==
        std::vector<std::string>{"b", "c", "e", "d", "a", "f"});
}

TEST_CASE("GoSort is Go's sort.Sort, ties included", "[promql][topk]") {
  // 40 elements with many ties, sorted by the first member only: the order
  // of equal elements is pdqsort's (expected from a transcription of Go's
  // sort package, itself checked against Go on sort()'s output).
  std::vector<std::pair<int, int>> v;
  for (int i = 0; i < 40; i++) v.push_back({(i * 7) % 5, i});
  internal::GoSort(
      &v, [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int> order;
  for (const auto& p : v) order.push_back(p.second);
  CHECK(order == std::vector<int>{20, 10, 35, 30, 0,  5,  25, 15, 28, 3,
                                  8,  38, 33, 13, 18, 23, 26, 11, 1,  36,
                                  6,  21, 16, 31, 34, 14, 24, 39, 19, 29,
                                  9,  4,  7,  12, 22, 2,  32, 37, 17, 27});
  // Fewer than 13 elements: insertion sort, which is stable.
  std::vector<std::pair<int, int>> w = {{1, 0}, {0, 1}, {1, 2}, {0, 3}};
  internal::GoSort(
      &w, [](const auto& a, const auto& b) { return a.first < b.first; });
  CHECK(w == std::vector<std::pair<int, int>>{{0, 1}, {0, 3}, {1, 0}, {1, 2}});
}

}  // namespace
}  // namespace vigil::promql
