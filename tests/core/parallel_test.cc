// ForEachBlock hands every block to exactly one call, on one thread or two.
#include "core/parallel.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace vigil {
namespace {

TEST_CASE("ForEachBlock calls every block exactly once",
          "[parallel][concurrency]") {
  for (bool parallel : {false, true}) {
    for (size_t blocks :
         {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{1000}}) {
      INFO("parallel " << parallel << " blocks " << blocks);
      std::vector<std::atomic<int>> calls(blocks);
      std::mutex mu;
      std::set<std::thread::id> threads;
      ForEachBlock(blocks, parallel, [&](size_t b) {
        calls[b]++;
        std::lock_guard<std::mutex> l(mu);
        threads.insert(std::this_thread::get_id());
      });
      for (size_t b = 0; b < blocks; ++b) REQUIRE(calls[b] == 1);
      if (!parallel) REQUIRE(threads.size() <= 1);
      REQUIRE(threads.size() <= 2);
    }
  }
}

TEST_CASE("BlockOf covers the items without overlap", "[parallel]") {
  for (size_t items : {0, 1, 31, 32, 33, 1000}) {
    size_t next = 0;
    for (size_t b = 0; b * 32 < items || (items == 0 && b == 0); ++b) {
      BlockRange r = BlockOf(b, 32, items);
      REQUIRE(r.begin == next);
      REQUIRE(r.end <= items);
      REQUIRE(r.end - r.begin <= 32);
      next = r.end;
    }
    REQUIRE(next == items);
    BlockRange past = BlockOf(items / 32 + 1, 32, items);
    REQUIRE(past.begin == past.end);
  }
}

}  // namespace
}  // namespace vigil
