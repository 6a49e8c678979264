// -----------------------------------------------------------------------------
// File: options.h
// -----------------------------------------------------------------------------
//
// Options for storage::DB::Open. Every field states its default.
#ifndef VIGIL_STORAGE_OPTIONS_H_
#define VIGIL_STORAGE_OPTIONS_H_

#include <cstdint>

#include "core/logger.h"

namespace vigil::storage {

struct Options {
  // Create the directory and database if missing.
  // Default: true
  bool create_if_missing = true;

  // Open without writing anything (queries and CLI dump/analyze only).
  // NewAppender() on a read-only DB returns an appender whose Commit fails
  // with FailedPrecondition. An older on-disk format is read as it is, not
  // upgraded (storage/FORMAT.md, "Format versions").
  // Default: false
  bool read_only = false;

  // Samples older than (newest sample - retention_ms) are deleted, a whole
  // day partition at a time. 0 disables time retention.
  // Default: 15 days (Prometheus's --storage.tsdb.retention.time)
  int64_t retention_ms = 15LL * 24 * 3600 * 1000;

  // If > 0, the directory is kept under this many bytes
  // (--storage.tsdb.retention.size): oldest day partitions are deleted
  // until it holds the limit less the room RocksDB needs to compact and
  // flush (a quarter of the limit at 8 MiB, under 1/5 from 64 MiB, ~3 % at
  // 100 GiB), and tables, compactions and logs are sized to fit that room
  // (storage/internal/size_budget.h).
  // Default: 0 (no size limit)
  int64_t retention_bytes = 0;

  // A head chunk is cut when its samples would cross a multiple of this
  // range (aligned to the epoch), so no chunk spans two ranges.
  // Default: 2 hours
  int64_t chunk_range_ms = 2LL * 3600 * 1000;

  // A head chunk is also cut when it holds this many samples, less a
  // per-series offset below a quarter of it (for limits of 64 and more),
  // so that series appended together are cut over many commits rather
  // than all in one. Open chunks are the part of the head that grows
  // between cuts: at 480 samples a server scraping 100 k series every 5 s
  // reached ~1,000 bytes of RSS per series after 40 minutes, at 120 it
  // stays at ~800 (bench/README.md, "Open chunks cut at 120 samples").
  // Bulk imports, where memory matters less than bytes on disk, use 480
  // (smaller chunks cost ~12 % more disk on the generated LLM data).
  // Default: 120 (as Prometheus's head chunks; 10 minutes at 5 s)
  uint32_t max_chunk_samples = 120;

  // fsync the RocksDB WAL on every Commit. Without it a committed batch
  // survives a process crash (kill -9) but not a power loss.
  // Default: false
  bool sync_commits = false;

  // The head's open chunks are checkpointed (and the `wal` column family
  // truncated) once this many WAL bytes were written since the last one.
  // Default: 256 MiB
  int64_t checkpoint_wal_bytes = 256LL << 20;

  // Write each committed batch to the `wal` column family. Bulk importers
  // may turn it off: samples are then durable only after DB::Flush() (or
  // once their chunk is cut), and a crash loses the rest.
  // Default: true
  bool write_wal = true;

  // If > 0, commit-log records held only for lagging readers (see
  // commit_log.h) are deleted, oldest first, while they take more than
  // this many bytes; the readers are told what they lost.
  // Default: 0 (bounded by the time retention only)
  int64_t commit_log_max_hold_bytes = 0;

  // If > 0, the most series the head holds (--storage.tsdb.max-series).
  // Appending a sample of a series that does not exist yet fails with
  // ResourceExhausted once that many exist; samples of existing series keep
  // being accepted. Series forgotten by CleanTombstones() free their slot.
  // Default: 0 (no limit)
  int64_t max_series = 0;

  // DB::Stats() walks every head series for the chunk, sample and memory
  // figures; with this > 0 a walk younger than this is reused (the series
  // count stays exact: it is read live, and every call walks while a
  // tombstone hides series). A server answering a self-scrape every second
  // at a million series would otherwise spend a core-tenth on the walk.
  // Default: 0 (every call walks)
  int64_t stats_walk_max_age_ms = 0;

  // Head GC: a series without a sample for this long leaves memory at the
  // next ApplyRetention (its data stays queryable from RocksDB, and a new
  // sample brings it back under the same ref). 0 keeps every series in
  // memory until retention deletes its data.
  // Default: 3 hours (Prometheus's head holds about the last 2-3 hours)
  int64_t head_idle_ms = 3LL * 3600 * 1000;

  // RocksDB's block cache, shared by every column family: recently read
  // chunk blocks, and the index and filter blocks of the tables (held
  // there instead of per open table, so that memory stays bounded as the
  // directory grows). Reads of data not in it go to the page cache / disk.
  // Default: 32 MiB
  int64_t block_cache_bytes = 32LL << 20;

  // Crash-drill knobs (the server sets them from VIGIL_TEST_* variables,
  // server/storage_health.h); 0 in production.
  // If > 0, every family's memtable holds this many bytes (RocksDB's least
  // is 64 KiB) and two level-0 tables start a compaction, so flushes and
  // compactions run all the time.
  // Default: 0
  int64_t test_write_buffer_bytes = 0;
  // If > 0, flushes and compactions write at most this many bytes a
  // second, so that each lasts long enough for a kill to land in it.
  // Default: 0
  int64_t test_background_bytes_per_sec = 0;

  // Logger for background events. Not owned; must outlive the DB.
  // Default: Logger::Default()
  Logger* logger = nullptr;
};

}  // namespace vigil::storage

#endif  // VIGIL_STORAGE_OPTIONS_H_
