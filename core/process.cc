#include "core/process.h"

#include <malloc.h>

#include <chrono>

#include "core/sync.h"

namespace vigil {

void InitProcess() {
  TuneMallocForQueries();
  DisableLockGraph();
}

void TuneMallocForQueries() {
#ifdef M_TRIM_THRESHOLD
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  mallopt(M_TOP_PAD, 4 << 20);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
}

void TuneMallocForServer() {
#ifdef M_ARENA_MAX
  mallopt(M_ARENA_MAX, 2);
  mallopt(M_TRIM_THRESHOLD, 16 << 20);
#endif
}

int64_t ReleaseFreeMemory(size_t keep_top) {
  const auto start = std::chrono::steady_clock::now();
#ifdef M_TRIM_THRESHOLD
  malloc_trim(keep_top);
#else
  (void)keep_top;
#endif
  return static_cast<int64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::steady_clock::now() - start)
          .count());
}

void DisableLockGraph() {
#ifndef VIGIL_TSAN  // TSAN's vigil::Mutex has no lock graph (core/sync.h)
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
}

}  // namespace vigil
