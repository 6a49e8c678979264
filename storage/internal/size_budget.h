// -----------------------------------------------------------------------------
// File: size_budget.h
// -----------------------------------------------------------------------------
//
// How a size limit (--storage.tsdb.retention.size) is shared out. The limit
// is for the whole directory at every moment, so the data retention keeps
// must leave room for what RocksDB writes before it deletes: a compaction's
// output exists beside its inputs until the compaction ends (and the inputs
// until they are purged after it), and a memtable flush writes its table
// before the log it replaces goes. Bounding the size of one compaction, of
// one table and of the logs to fractions of the limit bounds that room, and
// retention deletes down to the limit less that room.
#ifndef VIGIL_STORAGE_INTERNAL_SIZE_BUDGET_H_
#define VIGIL_STORAGE_INTERNAL_SIZE_BUDGET_H_

#include <algorithm>
#include <cstdint>

namespace vigil::storage::internal {

struct SizeBudget {
  // The chunks family's table size and compaction size.
  uint64_t target_file_bytes;
  uint64_t max_compaction_bytes;
  // The chunks family's memtable size.
  uint64_t write_buffer_bytes;
  // RocksDB's logs: past this, the oldest memtables are flushed.
  uint64_t max_wal_bytes;
  // Retention deletes until the directory holds at most this.
  int64_t retention_goal_bytes;
};

// RocksDB's defaults where there is no limit, but for the chunks
// memtable: 4 MiB, not 64, since it is resident memory that a server with
// a steady head otherwise grows by (two of them while one flushes). Sealed
// chunks arrive at ~2 MiB a minute (100 k series every 5 s, cut every ~100
// samples), so a 16 MiB memtable held ~8 MiB on average and its peak
// stayed in the heap after the flush; 4 MiB costs a flush every two
// minutes (bench/README.md, "The chunks memtable at 4 MiB"). With a limit,
// fractions of it (never less than RocksDB can work with, never more than
// these).
inline SizeBudget SizeBudgetFor(int64_t limit_bytes) {
  constexpr uint64_t kMiB = 1 << 20;
  SizeBudget b{64 * kMiB, 25 * 64 * kMiB, 4 * kMiB, 512 * kMiB, 0};
  if (limit_bytes <= 0) return b;
  const uint64_t limit = uint64_t(limit_bytes);
  b.target_file_bytes = std::clamp<uint64_t>(limit / 64, kMiB / 4, 64 * kMiB);
  b.max_compaction_bytes = std::clamp<uint64_t>(
      limit / 16, 2 * b.target_file_bytes, 25 * b.target_file_bytes);
  b.write_buffer_bytes = std::clamp<uint64_t>(limit / 16, kMiB, 4 * kMiB);
  b.max_wal_bytes = std::clamp<uint64_t>(limit / 8, 4 * kMiB, 512 * kMiB);
  // A compaction's output and inputs both on disk, plus a flushed table.
  const uint64_t room = 2 * b.max_compaction_bytes + b.write_buffer_bytes;
  b.retention_goal_bytes = int64_t(limit > 2 * room ? limit - room : limit / 2);
  return b;
}

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_SIZE_BUDGET_H_
