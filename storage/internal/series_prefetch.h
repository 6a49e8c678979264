// -----------------------------------------------------------------------------
// File: series_prefetch.h
// -----------------------------------------------------------------------------
//
// Loads ahead for loops that append to many series in turn (a commit, the
// WAL replay at open). Each series' open chunk is a slab block of its own,
// seldom still in the CPU cache since the series was last appended to, and
// its address is in the series record, itself seldom cached once the head
// has grown: starting both loads a few series ahead overlaps the waits.
// Neither changes anything.

#ifndef VIGIL_STORAGE_INTERNAL_SERIES_PREFETCH_H_
#define VIGIL_STORAGE_INTERNAL_SERIES_PREFETCH_H_

#include "absl/base/thread_annotations.h"
#include "storage/internal/head.h"

namespace vigil::storage::internal {

// How far ahead a loop loads chunks; records go twice as far, since a
// chunk's address is read from its record.
inline constexpr size_t kChunkPrefetchAhead = 8;
inline constexpr size_t kRecordPrefetchAhead = 2 * kChunkPrefetchAhead;

// OpenChunk::Prefetch without the series' lock. REQUIRES: the calling
// thread is the only one that changes this chunk's buffer (the commit path
// holding commit_mu_, or the replay worker that owns the series), so
// reading its pointer races with nothing but readers.
inline void PrefetchChunk(const MemSeries* s) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  s->chunk.Prefetch();
}

// Starts loading the series record itself (up to two cache lines):
// PrefetchChunk must read the chunk's address from it.
inline void PrefetchRecord(const MemSeries* s) {
  const char* p = reinterpret_cast<const char*>(s);
  __builtin_prefetch(p, 1);
  __builtin_prefetch(p + sizeof(MemSeries) - 1, 1);
}

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_SERIES_PREFETCH_H_
