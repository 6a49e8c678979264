// RefSet (server/scrape/ref_set.h): the previous scrape's refs as varint
// gaps, walked against the current scrape's refs for staleness.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "server/scrape/ref_set.h"

namespace vigil::scrape {
namespace {

std::vector<storage::SeriesRef> Walk(
    const RefSet& s, const std::vector<storage::SeriesRef>* except) {
  std::vector<storage::SeriesRef> out;
  s.ForEachExcept(except, [&](storage::SeriesRef r) { out.push_back(r); });
  return out;
}

TEST_CASE("ref set: every ref comes back, gaps of any size", "[scrape]") {
  const std::vector<storage::SeriesRef> refs = {0,
                                                1,
                                                2,
                                                3,
                                                130,
                                                131,
                                                16'384,
                                                16'385,
                                                2'000'000,
                                                1ULL << 32,
                                                (1ULL << 32) + 1,
                                                1ULL << 62,
                                                UINT64_MAX - 1,
                                                UINT64_MAX};
  RefSet s;
  s.Assign(refs);
  CHECK(Walk(s, nullptr) == refs);
  // Consecutive refs cost a byte each.
  RefSet dense;
  std::vector<storage::SeriesRef> run;
  for (storage::SeriesRef r = 1000; r < 2000; ++r) run.push_back(r);
  dense.Assign(run);
  CHECK(dense.MemoryBytes() < run.size() + 16);
  CHECK(Walk(dense, nullptr) == run);
}

TEST_CASE("ref set: the refs not in the current scrape", "[scrape]") {
  RefSet s;
  s.Assign({2, 4, 6, 8, 10});
  const std::vector<storage::SeriesRef> cur = {1, 4, 5, 10, 11};
  CHECK(Walk(s, &cur) == std::vector<storage::SeriesRef>{2, 6, 8});
  const std::vector<storage::SeriesRef> all = {2, 4, 6, 8, 10};
  CHECK(Walk(s, &all).empty());
  const std::vector<storage::SeriesRef> none;
  CHECK(Walk(s, &none) == all);
  s.Assign({});
  CHECK(s.empty());
  CHECK(Walk(s, &cur).empty());
  s.Assign({7});
  s.Clear();
  CHECK(Walk(s, nullptr).empty());
}

}  // namespace
}  // namespace vigil::scrape
