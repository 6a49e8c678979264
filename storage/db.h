// -----------------------------------------------------------------------------
// File: db.h
// -----------------------------------------------------------------------------
//
// The embeddable time-series database: an in-memory head of columnar chunks
// persisted in RocksDB. Open one with DB::Open, append through NewAppender,
// read through NewQuerier. Thread-safe: any number of appenders and
// queriers may be used concurrently from different threads.
//
// Lifetimes: every Appender and Querier a DB hands out (and so every
// SeriesSet and SeriesIterator, see querier.h) must be destroyed before
// the DB. Which commits a querier sees is stated in querier.h.
//
// Example:
//   auto db = vigil::storage::DB::Open({}, "/var/lib/vigil");
//   auto app = (*db)->NewAppender();
//   app->Append(0, {{"__name__", "up"}, {"job", "x"}}, t, 1).IgnoreError();
//   if (auto s = app->Commit(); !s.ok()) ...
#ifndef VIGIL_STORAGE_DB_H_
#define VIGIL_STORAGE_DB_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/matcher.h"
#include "storage/appender.h"
#include "storage/commit_log.h"
#include "storage/options.h"
#include "storage/querier.h"

namespace vigil::storage {

// Metric metadata, as exposed by the text format and /api/v1/metadata.
struct Metadata {
  std::string type;  // "counter", "gauge", "histogram", "summary", "unknown"...
  std::string help;
  std::string unit;
};

struct DBStats {
  uint64_t num_series = 0;  // series in the head (in memory)
  // Head GC (Options::head_idle_ms): series moved out of memory and still
  // queryable from disk; moved out / brought back since Open.
  uint64_t cold_series = 0;
  uint64_t head_gc_evicted = 0;
  uint64_t head_gc_revived = 0;
  uint64_t head_samples = 0;      // samples in open head chunks
  uint64_t head_chunks = 0;       // chunks in memory (open and not yet
                                  // written), of series not deleted
  uint64_t appended_samples = 0;  // samples accepted since Open
  uint64_t out_of_order = 0;      // samples rejected as out of order
  uint64_t duplicate = 0;         // same timestamp, different value
  // Samples refused because their series would be new beyond
  // Options::max_series, since Open.
  uint64_t series_refused = 0;
  int64_t min_time = 0;  // over all data; 0 if empty
  int64_t max_time = 0;
  // Live tables and every other file directly in the directory (logs,
  // manifest, options): what size retention counts.
  uint64_t disk_bytes = 0;
  // RocksDB's background work since Open: memtable flushes that
  // succeeded, compactions ended (failed ones too), compactions running.
  uint64_t rocksdb_flushes = 0;
  uint64_t rocksdb_compactions = 0;
  uint64_t rocksdb_compactions_running = 0;
  uint64_t head_memory_bytes = 0;     // estimate of head heap usage
  uint64_t rocksdb_memory_bytes = 0;  // memtables, table readers, block cache
  // The process's slab of series records and open-chunk buffers (shared
  // by every DB of the process): resident pages, the slots in use within
  // them, and buffers moved out of sparse pages since start-up.
  uint64_t slab_resident_bytes = 0;
  uint64_t slab_object_bytes = 0;
  uint64_t slab_moves = 0;
  // The commit log (commit_log.h): registered readers, the checkpointed
  // `wal` records kept for them, and samples deleted (retention, the hold
  // cap) before a reader acknowledged them, since Open.
  uint64_t commit_log_readers = 0;
  uint64_t commit_log_held_records = 0;
  uint64_t commit_log_held_bytes = 0;
  uint64_t commit_log_lost_samples = 0;
};

// Whether writes currently succeed (DB::Health). A write that fails
// (a full disk, an I/O error) makes the DB not writable: commits fail
// fast with that error, and once a second one of them first asks
// RocksDB to resume first, so the first write that succeeds again (space
// returned) makes it writable without a restart. Reads are unaffected.
struct WriteHealth {
  bool writable = true;
  // While not writable: the error of the last failed write, naming the
  // directory ("commit: write to WAL: disk full: no space left on device
  // in /data: ..."), and since when (ms since the epoch).
  std::string error;
  int64_t since_ms = 0;
  // Failed writes since Open, by reason: ENOSPC, or any other I/O error.
  uint64_t errors_disk_full = 0;
  uint64_t errors_other = 0;
};

// One chunk of one series, without its samples: what DB::ForEachChunk
// reports.
struct ChunkMeta {
  SeriesRef ref = 0;       // the series (see DB::ForEachSeries)
  Timestamp min_time = 0;  // first and last sample
  Timestamp max_time = 0;
  uint32_t num_samples = 0;
  // Encoded chunk bytes (FORMAT.md), before RocksDB's block compression.
  uint64_t encoded_bytes = 0;
  // Still in memory: the series' open chunk, or a cut one not yet written
  // to the `chunks` column family. Its samples are durable through the WAL
  // or the `head` family all the same.
  bool in_head = false;
};

class DB : public Appendable, public Queryable {
 public:
  // Opens (or creates) the database in `dir`, replaying committed batches
  // that were not yet checkpointed. Errors: Unavailable (I/O, locked by
  // another process), DataLoss (corruption, naming the damaged record, or
  // an on-disk format version this build does not know), InvalidArgument
  // (not a Vigil directory, bad options).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DB>> Open(
      const Options& options, const std::string& dir);

  // There is no Close(): destruction closes. Unless read-only, it first
  // checkpoints (writes every changed open head chunk to the `head` family
  // and truncates the `wal` family) so the next Open() replays nothing; a
  // failed checkpoint is logged, not returned, and loses nothing that the
  // WAL holds. Skipping destruction (a crash, kill -9) loses no committed
  // sample either, as long as Options::write_wal is on; with it off, a
  // crash loses what was committed since the last checkpoint or Flush().
  // REQUIRES: every Appender and Querier of this DB was destroyed.
  ~DB() override = default;

  // A DB owns its directory: neither copyable nor movable (hold it by the
  // std::unique_ptr Open returns).
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;

  // Cuts every open head chunk, persists it and truncates the WAL, so the
  // directory holds only sealed chunks. Appending may continue afterwards.
  // FailedPrecondition on a read-only DB.
  [[nodiscard]] virtual absl::Status Flush() = 0;

  // Writes a consistent copy of the database into `dir`, which must not
  // exist (its parent must), hard-linking immutable files where the file
  // system allows (RocksDB's Checkpoint). Every commit that returned before
  // the call is in the copy; DB::Open on `dir` opens it like the original.
  // AlreadyExists if `dir` exists; Unavailable on I/O errors.
  [[nodiscard]] virtual absl::Status Snapshot(const std::string& dir) = 0;

  // Compacts RocksDB fully (after a bulk import). Removes tombstoned
  // samples first, as CleanTombstones() does.
  [[nodiscard]] virtual absl::Status Compact() = 0;

  // --- Deletion (Prometheus's admin delete_series / clean_tombstones) ---

  // Marks deleted the samples in [mint, maxt] (inclusive, ms) of every
  // series matching all `matchers` (Prometheus semantics; matchers that all
  // accept "" select every series). Durable before it returns (one synced
  // RocksDB write); from then on no Select(), LabelNames(), LabelValues(),
  // ForEachSeries() or ForEachChunk() reports the deleted samples, and a
  // series left without samples is absent from all of them (also from
  // Stats().num_series). Only data existing at the call is covered: the
  // interval is clamped to each series' newest sample, so samples appended
  // afterwards (always newer, appends are in order) stay visible. The
  // samples stay on disk until CleanTombstones() or Compact().
  // mint > maxt deletes nothing. Errors: InvalidArgument without matchers,
  // FailedPrecondition on a read-only DB, Unavailable on I/O errors.
  [[nodiscard]] virtual absl::Status DeleteSeries(
      std::span<const Matcher> matchers, Timestamp mint, Timestamp maxt) = 0;

  // Rewrites every chunk that holds tombstoned samples without them,
  // forgets series left with no sample (their series record and index
  // entries go; appending to them again brings them back), and removes the
  // tombstones, then compacts what it rewrote (the small families, and
  // the days of the `chunks` family that had deleted samples) so the data
  // is gone from disk. Blocks commits while it rewrites; its cost grows
  // with the tombstoned series' data and the days they span. A crash in the
  // middle loses nothing and hides nothing deleted: the tombstones go last.
  // FailedPrecondition on a read-only DB; Unavailable/DataLoss from RocksDB.
  [[nodiscard]] virtual absl::Status CleanTombstones() = 0;

  // Deletes data outside the retention limits (time and size). Called
  // periodically by the server; `now` is the reference "newest" time.
  [[nodiscard]] virtual absl::Status ApplyRetention(Timestamp now) = 0;

  // Sets the metadata of a metric family (last write wins; persisted).
  [[nodiscard]] virtual absl::Status SetMetadata(const std::string& metric,
                                                 const Metadata& md) = 0;
  // All metadata, keyed by metric name, sorted.
  virtual std::vector<std::pair<std::string, Metadata>> GetMetadata() = 0;

  // --- Small durable state (the built-in Alertmanager's silences and
  // notification log; the `state` family of FORMAT.md) ---

  // Stores `value` under `key` (non-empty), replacing any value; synced to
  // disk before it returns OK. FailedPrecondition on a read-only DB,
  // Unavailable on I/O errors.
  [[nodiscard]] virtual absl::Status PutState(std::string_view key,
                                              std::string_view value) = 0;
  // Removes `key` (OK if absent); synced like PutState.
  [[nodiscard]] virtual absl::Status DeleteState(std::string_view key) = 0;
  // Calls f(key, value) for every key starting with `prefix`, in bytewise
  // key order. `f` must not call back into this DB.
  [[nodiscard]] virtual absl::Status ScanState(
      std::string_view prefix,
      const std::function<void(std::string_view key, std::string_view value)>&
          f) = 0;

  // --- The commit log, for shipping committed samples (commit_log.h) ---

  // Opens the reader registered as `name` (non-empty, at most 200 bytes;
  // InvalidArgument otherwise), registering it durably on first use. At
  // most one open reader per name (AlreadyExists otherwise).
  // FailedPrecondition on a read-only DB or with Options::write_wal off.
  // The first registration creates the optional `commitlog` column family
  // (FORMAT.md): older builds then open the directory read-only only.
  [[nodiscard]] virtual absl::StatusOr<std::unique_ptr<CommitLogReader>>
  OpenCommitLogReader(std::string_view name) {
    (void)name;
    return absl::UnimplementedError("commit log: not supported");
  }
  // Forgets the registration of `name` (a remote removed from the
  // configuration) so the batches it held can go (at the next
  // checkpoint). OK if unknown; FailedPrecondition while that reader is
  // open or on a read-only DB.
  [[nodiscard]] virtual absl::Status DropCommitLogReader(
      std::string_view name) {
    (void)name;
    return absl::UnimplementedError("commit log: not supported");
  }
  // The registered names, sorted (also on a read-only DB).
  virtual std::vector<std::string> CommitLogReaders() { return {}; }

  // Whether writes succeed, and the write failures since Open (see
  // WriteHealth). Cheap; thread-safe.
  virtual WriteHealth Health() { return {}; }

  // Counters and gauges (see DBStats). One pass over the series in
  // memory, no disk reads beyond listing the directory; with
  // Options::stats_walk_max_age_ms a recent pass is reused for
  // head_samples, head_chunks and head_memory_bytes.
  virtual DBStats Stats() = 0;

  // --- Read-only listings for tools (`vigil tsdb analyze`, debugging) ---
  // Both read everything they list, so their cost grows with the data;
  // memory stays constant. Both may run concurrently with appenders; `f`
  // must not call back into this DB.

  // Calls f(ref, labels) for every series the DB knows, in ascending ref
  // order, also for series without samples (e.g. all deleted by retention)
  // and for series created by an Append whose batch is not committed yet,
  // but not for series whose every sample DeleteSeries deleted. (A Querier
  // lists only series with samples in its range.)
  virtual void ForEachSeries(
      const std::function<void(SeriesRef, const Labels&)>& f) = 0;
  // ForEachSeries over the series in memory only (Stats().num_series; head
  // GC moved the others out, see Options::head_idle_ms), as Prometheus's
  // head statistics count. By default, every series.
  virtual void ForEachHeadSeries(
      const std::function<void(SeriesRef, const Labels&)>& f) {
    ForEachSeries(f);
  }

  // Calls f for every chunk with samples in [mint, maxt] (tombstoned
  // samples do not count: a chunk holding only those is skipped, and a
  // partly deleted one reports what is left): first the head's
  // (in_head, in ref order), then the persisted ones (in day, ref, time
  // order). Without concurrent commits each chunk is reported once; a
  // chunk written by a commit during the call may be reported twice (in
  // the head, then persisted), never missed. DataLoss on a damaged chunk;
  // chunks reported before it stay reported.
  [[nodiscard]] virtual absl::Status ForEachChunk(
      Timestamp mint, Timestamp maxt,
      const std::function<void(const ChunkMeta&)>& f) = 0;

 protected:
  DB() = default;
};

}  // namespace vigil::storage

#endif  // VIGIL_STORAGE_DB_H_
