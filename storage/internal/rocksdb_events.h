// -----------------------------------------------------------------------------
// File: rocksdb_events.h
// -----------------------------------------------------------------------------
//
// Counts RocksDB's background work (memtable flushes and compactions, both
// the automatic ones and those Vigil asks for) for DB::Stats and the
// server's self-metrics. RocksDB calls the listener on its own threads.
#ifndef VIGIL_STORAGE_INTERNAL_ROCKSDB_EVENTS_H_
#define VIGIL_STORAGE_INTERNAL_ROCKSDB_EVENTS_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "rocksdb/listener.h"

namespace vigil::storage::internal {

class BackgroundJobCounter : public rocksdb::EventListener {
 public:
  void OnFlushCompleted(rocksdb::DB*, const rocksdb::FlushJobInfo&) override;
  void OnCompactionBegin(rocksdb::DB*,
                         const rocksdb::CompactionJobInfo&) override;
  void OnCompactionCompleted(rocksdb::DB*,
                             const rocksdb::CompactionJobInfo&) override;

  // Flushes that succeeded (RocksDB reports no failed flush to listeners)
  // and compactions that ended, failed ones included.
  uint64_t flushes() const { return flushes_.load(); }
  uint64_t compactions() const { return compactions_.load(); }
  // Compactions begun and not yet ended.
  uint64_t compactions_running() const;

 private:
  std::atomic<uint64_t> flushes_{0};
  std::atomic<uint64_t> compactions_begun_{0}, compactions_{0};
};

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_ROCKSDB_EVENTS_H_
