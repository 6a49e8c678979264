#include "core/process.h"

#include <malloc.h>

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

void DisableLockGraph() {
#ifndef VIGIL_TSAN  // TSAN's vigil::Mutex has no lock graph (core/sync.h)
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
}

}  // namespace vigil
