#include "storage/internal/rocksdb_events.h"

namespace vigil::storage::internal {

void BackgroundJobCounter::OnFlushCompleted(rocksdb::DB*,
                                            const rocksdb::FlushJobInfo&) {
  flushes_.fetch_add(1);
}

void BackgroundJobCounter::OnCompactionBegin(
    rocksdb::DB*, const rocksdb::CompactionJobInfo&) {
  compactions_begun_.fetch_add(1);
}

void BackgroundJobCounter::OnCompactionCompleted(
    rocksdb::DB*, const rocksdb::CompactionJobInfo&) {
  compactions_.fetch_add(1);
}

uint64_t BackgroundJobCounter::compactions_running() const {
  // Ended is read first: a compaction ending between the reads can only
  // make the result larger, never wrap below zero.
  const uint64_t ended = compactions_.load();
  const uint64_t begun = compactions_begun_.load();
  return begun > ended ? begun - ended : 0;
}

}  // namespace vigil::storage::internal
