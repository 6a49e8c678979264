#include "core/process.h"

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

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
  mallopt(M_MMAP_THRESHOLD, 512 << 10);
#endif
}

TrimResult ReleaseFreeMemory(size_t max_free) {
  const auto start = std::chrono::steady_clock::now();
  TrimResult r;
#if defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 mi = mallinfo2();
  r.free_bytes = mi.fordblks;
  if (r.free_bytes > max_free) {
    malloc_trim(0);
    r.trimmed = true;
  }
#else
  (void)max_free;
#endif
  r.micros = static_cast<int64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::steady_clock::now() - start)
          .count());
  return r;
}

size_t AnonymousResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0, shared = 0;
  const int n = std::fscanf(f, "%lu %lu %lu", &size, &resident, &shared);
  std::fclose(f);
  if (n != 3 || shared > resident) return 0;
  return (resident - shared) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

void DisableLockGraph() {
#ifndef VIGIL_TSAN  // TSAN's vigil::Mutex has no lock graph (core/sync.h)
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
}

}  // namespace vigil
