// PostingList (storage/internal/posting_list.h): a compressed sorted set
// of series ids that behaves as a sorted vector under every change, and
// costs little for the shapes a head's ids take (runs, strides).
#include "storage/internal/posting_list.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <iterator>
#include <random>
#include <set>
#include <vector>

namespace vigil::storage::internal {
namespace {

std::vector<uint32_t> Sorted(const std::set<uint32_t>& s) {
  return {s.begin(), s.end()};
}

TEST_CASE("posting list: random appends, merges and removals match a set",
          "[storage][postings]") {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 200; ++round) {
    PostingList list;
    std::set<uint32_t> model;
    // Ids near each other (runs and small gaps) and, now and then, far.
    uint32_t next = static_cast<uint32_t>(rng() % 3);
    for (int step = 0; step < 300; ++step) {
      const int op = static_cast<int>(rng() % 10);
      if (op < 6) {
        const uint32_t gap = rng() % 4 == 0
                                 ? static_cast<uint32_t>(rng() % 5000)
                                 : static_cast<uint32_t>(rng() % 2);
        next += gap + (model.empty() ? 0 : 1);
        if (!model.empty() && next <= *model.rbegin())
          next = *model.rbegin() + 1;
        list.Append(next);
        model.insert(next);
      } else if (op < 8) {
        std::set<uint32_t> add;
        for (int k = 0; k < 5; ++k)
          add.insert(static_cast<uint32_t>(rng() % (next + 10)));
        list.Merge(Sorted(add));
        model.insert(add.begin(), add.end());
        if (!model.empty()) next = std::max(next, *model.rbegin());
      } else {
        std::set<uint32_t> drop;
        for (int k = 0; k < 5; ++k) {
          if (!model.empty() && rng() % 2 == 0) {
            auto it = model.begin();
            std::advance(it, static_cast<long>(rng() % model.size()));
            drop.insert(*it);
          } else {
            drop.insert(static_cast<uint32_t>(rng() % (next + 10)));
          }
        }
        list.Subtract(Sorted(drop));
        for (uint32_t d : drop) model.erase(d);
      }
      REQUIRE(list.size() == model.size());
      if (!model.empty()) REQUIRE(list.back() == *model.rbegin());
    }
    REQUIRE(list.Decode() == Sorted(model));
    for (uint32_t probe = 0; probe < next + 5; probe += 1 + probe / 50) {
      REQUIRE(list.Contains(probe) == model.contains(probe));
    }
  }
}

TEST_CASE("posting list: runs cost a few bytes, strides a byte an id",
          "[storage][postings]") {
  PostingList run, stride, far;
  for (uint32_t id = 1000; id < 101000; ++id) run.Append(id);
  for (uint32_t id = 3; id < 8003 * 8; id += 8) stride.Append(id);
  for (uint32_t id = 1; id < 1000 * 100000; id += 100000) far.Append(id);
  // One token for the first id; the run is counted, not encoded.
  CHECK(run.EncodedBytes() <= 3);
  CHECK(run.HeapBytes() == 0);  // in the object
  CHECK(run.size() == 100000);
  // A stride of 8: a one-byte token per id.
  CHECK(stride.EncodedBytes() == stride.size());
  // 100,000 apart: three bytes per id, still under the four of a vector.
  CHECK(far.EncodedBytes() <= 3 * far.size());
  CHECK(far.HeapBytes() <= far.EncodedBytes() * 9 / 8 + 16);
  // Runs between gaps: a target's 1,000 series at every 1,000,000.
  PostingList targets;
  for (uint32_t t = 0; t < 100; ++t) {
    for (uint32_t i = 0; i < 1000; ++i) targets.Append(t * 1000000 + i);
  }
  CHECK(targets.EncodedBytes() <= 100 * 6);
  const std::vector<uint32_t> ids = targets.Decode();
  REQUIRE(ids.size() == 100000);
  CHECK(std::is_sorted(ids.begin(), ids.end()));
  CHECK(ids[1000] == 1000000);
  CHECK(ids.back() == 99 * 1000000 + 999);
}

TEST_CASE("posting list: the extremes of the id range and moves",
          "[storage][postings]") {
  PostingList a;
  a.Append(0);
  a.Append(1);
  a.Append(UINT32_MAX - 1);
  a.Append(UINT32_MAX);
  CHECK(a.Decode() == std::vector<uint32_t>{0, 1, UINT32_MAX - 1, UINT32_MAX});
  CHECK(a.Contains(0));
  CHECK(a.Contains(UINT32_MAX));
  CHECK_FALSE(a.Contains(2));
  PostingList b = std::move(a);
  CHECK(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  CHECK(b.size() == 4);
  b.Subtract({0, 1, UINT32_MAX - 1, UINT32_MAX});
  CHECK(b.empty());
  CHECK(b.HeapBytes() == 0);
  // Growing out of the object and back.
  for (uint32_t id = 0; id < 2000; id += 3) b.Append(id);
  CHECK(b.HeapBytes() > 0);
  std::vector<uint32_t> all = b.Decode();
  all.erase(all.begin() + 1, all.end());
  b.Subtract(b.Decode());
  b.Merge(all);
  CHECK(b.Decode() == std::vector<uint32_t>{0});
  CHECK(b.HeapBytes() == 0);
}

}  // namespace
}  // namespace vigil::storage::internal
