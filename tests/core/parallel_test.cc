// ForEachBlock hands every block to exactly one call, on one thread or two;
// its helper threads are kept between calls and shared by concurrent ones.
#include "core/parallel.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
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

TEST_CASE("ForEachBlock keeps its helper threads between calls",
          "[parallel][concurrency]") {
  if (std::thread::hardware_concurrency() < 2) return;  // no helper there
  const auto caller = std::this_thread::get_id();
  std::atomic<int> by_helpers{0};
  for (int call = 0; call < 20; ++call) {
    // Slow blocks: a helper takes some of them before the caller is done.
    ForEachBlock(8, true, [&](size_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (std::this_thread::get_id() != caller) by_helpers++;
    });
  }
  CHECK(by_helpers > 0);
  // Twenty calls, at most a few threads ever started (one per call before).
  CHECK(parallel_internal::HelperThreadsStarted() >= 1);
  CHECK(parallel_internal::HelperThreadsStarted() <=
        parallel_internal::kMaxHelperThreads);
}

TEST_CASE("ForEachBlock from many threads at once calls every block once",
          "[parallel][concurrency]") {
  constexpr int kCallers = 8;
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 50; ++round) {
        const size_t blocks = 1 + static_cast<size_t>((c * 7 + round) % 40);
        std::vector<std::atomic<int>> calls(blocks);
        ForEachBlock(blocks, true, [&](size_t b) {
          calls[b]++;
          if (b % 5 == 0) std::this_thread::yield();
        });
        for (auto& n : calls) wrong += n != 1;
      }
    });
  }
  for (auto& t : callers) t.join();
  CHECK(wrong == 0);
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
