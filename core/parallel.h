// -----------------------------------------------------------------------------
// File: parallel.h
// -----------------------------------------------------------------------------
//
// Splitting one query's work across the machine's cores. Work is cut into
// numbered blocks that the threads take in turn (so an uneven block costs
// little); a caller that needs a single-thread order (errors, annotations)
// keeps one result per block and combines them in block order afterwards.
// The helper threads are started once and kept (parallel.cc).
#ifndef VIGIL_CORE_PARALLEL_H_
#define VIGIL_CORE_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>

#include "absl/functional/function_ref.h"

namespace vigil {

namespace parallel_internal {

// One run of a function on a helper thread, which the caller takes back if
// no helper has picked it up by the time the caller is done.
class HelperJob {
 public:
  explicit HelperJob(absl::FunctionRef<void()> fn) : fn_(fn) {}
  // On the helper that took the job from the queue.
  void Run();
  // On the caller, once: returns at once if no helper took the job (none
  // will now), else when the helper's run has returned.
  void Finish();

 private:
  absl::FunctionRef<void()> fn_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

// Queues `job` for a helper of a small process-wide set of threads, started
// when first needed and kept (so a query does not start threads for each
// piece of its work). False if none can be had (no cores to spare, or the
// process may start no thread): then the caller does the work alone.
bool StartOnHelper(HelperJob* job);
// Takes `job` back if no helper has taken it from the queue yet.
bool Withdraw(HelperJob* job);
// The most helper threads the process starts, and how many it has.
inline constexpr int kMaxHelperThreads = 4;
int HelperThreadsStarted();

}  // namespace parallel_internal

// Calls fn(b) once for every b in [0, blocks): on the calling thread alone
// if `parallel` is false or the machine has one core, otherwise on the
// calling thread and a helper thread at once. Returns when all are done.
// `fn` must be safe to call concurrently for different blocks.
template <typename Fn>
void ForEachBlock(size_t blocks, bool parallel, Fn fn) {
  if (!parallel || blocks < 2) {
    for (size_t b = 0; b < blocks; ++b) fn(b);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t b; (b = next.fetch_add(1, std::memory_order_relaxed)) < blocks;)
      fn(b);
  };
  parallel_internal::HelperJob job(work);
  const bool helped = parallel_internal::StartOnHelper(&job);
  work();
  if (helped) job.Finish();
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
