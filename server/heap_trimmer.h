// -----------------------------------------------------------------------------
// File: heap_trimmer.h
// -----------------------------------------------------------------------------
//
// The server's periodic check of malloc's free heap: every 10 s, if malloc
// holds more than 64 MiB free, its whole free pages go back to the kernel
// (core/process.h, ReleaseFreeMemory), so the biggest query or rule
// evaluation so far does not stay resident. Self-metrics:
//   vigil_malloc_free_bytes            free heap at the last check
//   vigil_malloc_trims_total           checks that trimmed
//   vigil_malloc_trim_seconds_total    time spent checking and trimming
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
  static constexpr size_t kAboveBytes = size_t{64} << 20;

  // Registers the metrics; the first check is due at once.
  explicit HeapTrimmer(metrics::Registry* reg);
  // Checks (and trims) if a check is due at `now`.
  void MaybeRun(Timestamp now);
  // When the next check is due (0 before the first).
  Timestamp next() const { return next_; }

 private:
  std::shared_ptr<metrics::Counter> trims_, seconds_;
  std::shared_ptr<metrics::Gauge> free_;
  Timestamp next_ = 0;
};

}  // namespace vigil::server

#endif  // VIGIL_SERVER_HEAP_TRIMMER_H_
