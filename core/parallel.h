// -----------------------------------------------------------------------------
// File: parallel.h
// -----------------------------------------------------------------------------
//
// Splitting one query's work across the machine's cores. Work is cut into
// numbered blocks that the threads take in turn (so an uneven block costs
// little); a caller that needs a single-thread order (errors, annotations)
// keeps one result per block and combines them in block order afterwards.
#ifndef VIGIL_CORE_PARALLEL_H_
#define VIGIL_CORE_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <system_error>
#include <thread>

namespace vigil {

// Calls fn(b) once for every b in [0, blocks): on the calling thread alone
// if `parallel` is false or the machine has one core, otherwise on the
// calling thread and one helper thread at once. Returns when all are done.
// `fn` must be safe to call concurrently for different blocks.
template <typename Fn>
void ForEachBlock(size_t blocks, bool parallel, Fn fn) {
  if (!parallel || blocks < 2 || std::thread::hardware_concurrency() < 2) {
    for (size_t b = 0; b < blocks; ++b) fn(b);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t b; (b = next.fetch_add(1, std::memory_order_relaxed)) < blocks;)
      fn(b);
  };
  std::thread helper;
  try {
    helper = std::thread(work);
  } catch (const std::system_error&) {
    // No thread to be had (process limits): the caller does it all.
  }
  work();
  if (helper.joinable()) helper.join();
}

// The range [begin, end) of items in block `b` of `size`-item blocks.
struct BlockRange {
  size_t begin, end;
};
inline BlockRange BlockOf(size_t b, size_t block_size, size_t items) {
  return {std::min(items, b * block_size),
          std::min(items, (b + 1) * block_size)};
}

}  // namespace vigil

#endif  // VIGIL_CORE_PARALLEL_H_
