// -----------------------------------------------------------------------------
// File: heap_trimmer.h
// -----------------------------------------------------------------------------
//
// The server's periodic check of malloc's free heap: every 10 s, if malloc
// holds more free heap than a sixteenth of the process's anonymous
// resident memory (and at least 4 MiB), its whole free pages go back to
// the kernel (core/process.h, ReleaseFreeMemory), so neither the biggest
// query or rule evaluation so far nor the holes scraping leaves between the
// head's series stay resident. Counting the free heap walks every free
// chunk under the arenas' locks (milliseconds), so a check whose process
// has at most 4 MiB of anonymous memory resident, which cannot hold more
// free heap than that, skips it; the count still runs once a minute to
// keep the gauge current. Self-metrics:
//   vigil_malloc_free_bytes            free heap when last counted
//   vigil_malloc_trims_total           checks that trimmed
//   vigil_malloc_trim_seconds_total    time spent counting and trimming
// Thread-compatible: the server's main loop calls it.
#ifndef VIGIL_SERVER_HEAP_TRIMMER_H_
#define VIGIL_SERVER_HEAP_TRIMMER_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/metrics.h"
#include "core/time.h"

namespace vigil::server {

class HeapTrimmer {
 public:
  static constexpr int64_t kEveryMs = 10000;
  static constexpr int64_t kCountEveryMs = 60000;
  static constexpr size_t kAboveBytes = size_t{4} << 20;
  // The free heap it trims above is at least this share of the anonymous
  // resident memory: a trim gives back at most ~6 % of it, and the pages
  // the next scrapes and queries fault in again cost about as much.
  static constexpr size_t kAnonShare = 16;

  // Registers the metrics; the first check is due at once. `above_bytes`:
  // the least free heap it trims above (tests lower or raise it).
  explicit HeapTrimmer(metrics::Registry* reg,
                       size_t above_bytes = kAboveBytes);
  // Checks (and trims) if a check is due at `now`.
  void MaybeRun(Timestamp now);
  // When the next check is due (0 before the first).
  Timestamp next() const { return next_; }

 private:
  std::shared_ptr<metrics::Counter> trims_, seconds_;
  std::shared_ptr<metrics::Gauge> free_;
  const size_t above_bytes_;
  Timestamp next_ = 0;
  Timestamp next_count_ = 0;  // when the free heap is counted regardless
};

}  // namespace vigil::server

#endif  // VIGIL_SERVER_HEAP_TRIMMER_H_
