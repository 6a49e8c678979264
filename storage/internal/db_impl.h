// -----------------------------------------------------------------------------
// File: db_impl.h
// -----------------------------------------------------------------------------
//
// DBImpl: the DB of storage/db.h over RocksDB. Split by concern:
//   db_impl.cc     open, recovery, checkpoint, flush, retention, stats
//   db_append.cc   the Appender and Commit
//   db_read.cc     the Querier
//   db_list.cc     ForEachSeries, ForEachChunk
//   db_delete.cc   DeleteSeries, CleanTombstones (tombstones.h)
//   state.cc       PutState, DeleteState, ScanState
//   records.cc     encodings of series, WAL and head records
//   size_budget.h  how --storage.tsdb.retention.size shares out the disk
//
// Durability: Commit writes one RocksDB WriteBatch (new series records,
// plus the sample batch in the `wal` family) before the head sees
// the samples. Chunks cut from the head are written to the `chunks` family
// at the end of the commit that cut them. A checkpoint writes every open
// head chunk to the `head` family and deletes the `wal` records it covers,
// in one atomic WriteBatch. Start-up loads series and head chunks, then
// replays the remaining `wal` records.
#ifndef VIGIL_STORAGE_INTERNAL_DB_IMPL_H_
#define VIGIL_STORAGE_INTERNAL_DB_IMPL_H_

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/sync.h"
#include "rocksdb/cache.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "storage/db.h"
#include "storage/internal/append_scratch.h"
#include "storage/internal/chunk.h"
#include "storage/internal/commit_log_state.h"
#include "storage/internal/db_health.h"
#include "storage/internal/head.h"
#include "storage/internal/postings.h"
#include "storage/internal/rocksdb_events.h"
#include "storage/internal/symbols.h"
#include "storage/internal/tombstones.h"

namespace vigil::storage::internal {

// Series moved out of memory by head GC (db_cold.cc, FORMAT.md). Optional
// within format 2, created by the first eviction.
inline constexpr char kCfCold[] = "cold";
// Its options: DBImpl::SmallOptions with a whole-key bloom filter (a new
// series looks its labels' hash up there).

// key → value of DB::PutState. Optional within format 2, like
// `tombstones`: created by the first PutState (state.cc).
inline constexpr char kCfState[] = "state";

// Record codecs (records.cc).
std::string EncodeLabels(const Labels& labels);
bool DecodeLabels(std::string_view in, Labels* out);
std::string EncodeWalRecord(const std::vector<WalSample>& samples);
bool DecodeWalRecord(std::string_view in, std::vector<WalSample>* out);
// A head record: the series' last sample and its open chunk, with the
// chunk's encoder state if `state` is given and the chunk is not empty
// (storage/FORMAT.md, "head"). Decoding sets *has_state to whether the
// record has one and, if so and `state` is given, fills *state (not yet
// checked against the chunk: OpenChunk::Restore does that). Records
// without a state decode as before. false: checksum mismatch or malformed.
std::string EncodeHeadRecord(Timestamp last_t, double last_v,
                             std::string_view chunk,
                             const OpenChunkState* state = nullptr);
bool DecodeHeadRecord(std::string_view in, Timestamp* last_t, double* last_v,
                      std::string_view* chunk, OpenChunkState* state = nullptr,
                      bool* has_state = nullptr);
std::string EncodeChunkValue(Timestamp mint, Timestamp maxt,
                             std::string_view chunk);
bool DecodeChunkValue(std::string_view in, Timestamp mint, Timestamp* maxt,
                      std::string_view* chunk);

class DBImpl : public DB {
 public:
  DBImpl(const Options& options, std::string dir);
  ~DBImpl() override;

  absl::Status OpenImpl();

  std::unique_ptr<Appender> NewAppender() override;
  // Batch buffers the appenders reuse (db_append.cc). Shared: an appender
  // destroyed after the DB (against db.h's contract, but harmless before
  // the pool existed) still has a pool to return its buffers to.
  const std::shared_ptr<AppendScratchPool>& append_scratch() {
    return append_scratch_;
  }
  absl::StatusOr<std::unique_ptr<Querier>> NewQuerier(Timestamp mint,
                                                      Timestamp maxt) override;
  absl::Status Flush() override;
  absl::Status Snapshot(const std::string& dir) override;
  absl::Status Compact() override;
  absl::Status ApplyRetention(Timestamp now) override;
  absl::Status DeleteSeries(std::span<const Matcher> matchers, Timestamp mint,
                            Timestamp maxt) override;
  absl::Status CleanTombstones() override;
  absl::Status SetMetadata(const std::string& metric,
                           const Metadata& md) override;
  std::vector<std::pair<std::string, Metadata>> GetMetadata() override;
  DBStats Stats() override;
  WriteHealth Health() override { return health_.Get(); }
  absl::Status PutState(std::string_view key, std::string_view value) override;
  absl::Status DeleteState(std::string_view key) override;
  absl::Status ScanState(
      std::string_view prefix,
      const std::function<void(std::string_view, std::string_view)>& f)
      override;
  void ForEachSeries(
      const std::function<void(SeriesRef, const Labels&)>& f) override;
  void ForEachHeadSeries(
      const std::function<void(SeriesRef, const Labels&)>& f) override;
  absl::Status ForEachChunk(
      Timestamp mint, Timestamp maxt,
      const std::function<void(const storage::ChunkMeta&)>& f) override;
  absl::StatusOr<std::unique_ptr<CommitLogReader>> OpenCommitLogReader(
      std::string_view name) override;
  absl::Status DropCommitLogReader(std::string_view name) override;
  std::vector<std::string> CommitLogReaders() override;

  // --- used by the appender and querier -----------------------------------
  const Options& options() const { return options_; }
  Head& head() { return *head_; }
  SymbolTable& symbols() { return symbols_; }
  PostingsIndex& postings() { return postings_; }
  rocksdb::DB* rocks() { return db_.get(); }
  rocksdb::ColumnFamilyHandle* cf_chunks() { return cf_chunks_; }
  const TombstoneIndex& tombstones() const { return tombstones_; }
  // True if the tombstones delete every sample of `s` (so listings skip
  // it). Cheap when there are no such tombstones.
  bool Hidden(MemSeries* s) const;
  // True if `s` has a sample in [mint, maxt] outside `deleted` (db_read.cc).
  absl::StatusOr<bool> AnySample(MemSeries* s, const Intervals& deleted,
                                 Timestamp mint, Timestamp maxt);
  Logger* logger() const { return logger_; }

  // Commits a buffered batch (see Appender::Commit). Serialised.
  absl::Status CommitBatch(const std::vector<WalSample>& samples,
                           const std::vector<MemSeries*>& series_of_sample)
      ABSL_LOCKS_EXCLUDED(commit_mu_);

  std::atomic<int64_t> min_time_{kMaxTimestamp};
  std::atomic<int64_t> max_time_{kMinTimestamp};
  std::atomic<uint64_t> appended_{0}, out_of_order_{0}, duplicate_{0};
  std::atomic<uint64_t> series_refused_{0};  // Options::max_series
  std::atomic<uint64_t> evicted_total_{0}, revived_total_{0};  // head GC
  // Bumped after cut chunks reach RocksDB and before the head forgets
  // them: a querier whose chunk iterator predates a bump must refresh it.
  std::atomic<uint64_t> chunk_writes_{0};

  // Writes `batch`, recording the outcome in the write health (a failure
  // classified, ENOSPC as ResourceExhausted naming the directory, all
  // prefixed by `context`); while not writable, first asks RocksDB to
  // resume (at most once per WriteHealthState::kResumeIntervalMs).
  // Used by every write of data (db_health.cc).
  absl::Status WriteChecked(const rocksdb::WriteOptions& wo,
                            rocksdb::WriteBatch* batch,
                            std::string_view context);

  // --- used by the commit-log reader (commit_log.cc) ----------------------
  absl::StatusOr<CommitLogRead> CommitLogReadImpl(const std::string& name,
                                                  uint64_t from,
                                                  size_t max_samples)
      ABSL_LOCKS_EXCLUDED(cl_mu_);
  absl::Status CommitLogAck(const std::string& name, uint64_t next)
      ABSL_LOCKS_EXCLUDED(cl_mu_);
  uint64_t CommitLogPosition(const std::string& name)
      ABSL_LOCKS_EXCLUDED(cl_mu_);
  void CommitLogClosed(const std::string& name) ABSL_LOCKS_EXCLUDED(cl_mu_);
  absl::StatusOr<Labels> LabelsOfRef(SeriesRef ref);

  // --- head GC (db_cold.cc) ------------------------------------------------
  // Moves series without a sample since `idle_before` out of memory into
  // the `cold` family (and drops series CleanTombstones forgot). Returns
  // how many left the head. Takes commit_mu_.
  absl::StatusOr<size_t> EvictIdle(Timestamp idle_before)
      ABSL_LOCKS_EXCLUDED(commit_mu_);
  // The head series of `labels` for an appender; a cold one is revived,
  // else one is created. nullptr: refused by `limit` (Options::max_series).
  absl::StatusOr<MemSeries*> SeriesForAppend(const Labels& labels,
                                             bool* created, uint64_t limit)
      ABSL_LOCKS_EXCLUDED(series_mu_);
  // Cold series `ref` revived; nullptr if `ref` is not cold (or `limit`).
  absl::StatusOr<MemSeries*> ReviveRef(uint64_t ref, uint64_t limit)
      ABSL_LOCKS_EXCLUDED(series_mu_);
  struct ColdSeries {
    uint64_t ref;
    Labels labels;
  };
  // Whether cold series may have samples at or after `mint`.
  bool MayHaveCold(Timestamp mint) const {
    return cold_series_.load() > 0 && mint <= cold_max_t_.load();
  }
  // Cold series matching `matchers` whose newest sample is >= mint.
  // Readers that also select from the head read cold first, then the
  // head, between GcReadBegin and GcReadValid (a seqlock): a revival makes
  // the series hot before it stops being cold, and an eviction, which does
  // the reverse, makes the reader retry.
  absl::StatusOr<std::vector<ColdSeries>> SelectCold(
      const std::vector<Matcher>& matchers, Timestamp mint);
  // Label names / values of `name` of cold series with samples >= mint
  // (unsorted, possibly repeated).
  absl::Status ColdLabelNames(Timestamp mint, std::vector<std::string>* out);
  absl::Status ColdLabelValues(const std::string& name, Timestamp mint,
                               std::vector<std::string>* out);
  // The seqlock of the head/cold moves (see SelectCold): Begin waits
  // while an eviction runs; Valid says none ran since Begin.
  uint64_t GcReadBegin() const;
  bool GcReadValid(uint64_t begin) const { return gc_seq_.load() == begin; }
  uint64_t cold_series() const { return cold_series_.load(); }

 private:
  // Column family options over block_cache_: the families of small
  // records (all but `chunks` and `commitlog`), with a bloom filter or not;
  // the `commitlog` family's.
  rocksdb::ColumnFamilyOptions SmallOptions(bool bloom = false) const;
  rocksdb::ColumnFamilyOptions CommitLogOptions() const;
  // Loads the `commitlog` family, if any (before ReplayWal).
  absl::Status LoadCommitLog();
  // Creates the `commitlog` family on first use (FORMAT.md).
  absl::Status EnsureCommitLogFamily()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(commit_mu_);
  // Deletes the oldest `n` held segments, counting what each reader had
  // not acknowledged as lost (retention, the hold cap).
  absl::Status DropHeldSegments(size_t n, const char* why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(commit_mu_);
  // Drops held segments over Options::commit_log_max_hold_bytes.
  absl::Status EnforceHoldCap() ABSL_EXCLUSIVE_LOCKS_REQUIRED(commit_mu_);
  // Checks meta "format"; writes it in a new directory and upgrades a
  // format-1 one (dropping `legacy_postings`, which may be null).
  absl::Status CheckFormat(rocksdb::ColumnFamilyHandle* legacy_postings);
  // Deletes RocksDB's OPTIONS files but the newest (see OpenImpl).
  void DeleteOldOptionsFiles();
  absl::Status LoadSeries();
  absl::Status LoadHead();
  absl::Status ReplayWal();
  absl::Status LoadTombstones();
  // Creates the `tombstones` family on first use (FORMAT.md).
  absl::Status EnsureTombstonesFamily()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(commit_mu_);
  // Creates the `state` family on first use (FORMAT.md). Takes commit_mu_.
  absl::Status EnsureStateFamily() ABSL_LOCKS_EXCLUDED(commit_mu_);
  absl::Status EnsureColdFamily() ABSL_EXCLUSIVE_LOCKS_REQUIRED(commit_mu_);
  // EvictIdle's parts: whether `s` had no sample since idle_before, and
  // moving one slice of candidates (counts added to *moved/*forgotten).
  static bool IdleSince(MemSeries* s, Timestamp idle_before);
  absl::Status EvictSlice(std::span<const uint64_t> refs, Timestamp idle_before,
                          size_t* moved, size_t* forgotten)
      ABSL_LOCKS_EXCLUDED(commit_mu_);
  absl::Status LoadCold();
  // Rewrites first-layout cold postings ("p") as "q" (cold_keys.h); a
  // read-only DB reads them as they are (legacy_postings_).
  absl::Status MigrateColdPostings();
  // ColdLabelNames (name null) / ColdLabelValues over "p" postings.
  absl::Status LegacyColdLabels(Timestamp mint, const std::string* name,
                                std::vector<std::string>* out);
  absl::StatusOr<bool> IsColdRef(uint64_t ref);
  absl::StatusOr<uint64_t> FindColdLocked(const Labels& labels)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(series_mu_);
  absl::StatusOr<MemSeries*> ReviveLocked(uint64_t ref, const Labels& labels,
                                          uint64_t limit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(series_mu_);
  // Retention: forgets cold series whose newest sample is before `before`
  // (series record included: nothing of them is left).
  absl::Status ForgetExpiredCold(Timestamp before)
      ABSL_LOCKS_EXCLUDED(series_mu_);
  absl::Status CleanTombstonesLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(commit_mu_);
  // Whether samples of `s` other than those in `t.intervals` exist, with
  // `last_t` its newest sample.
  absl::StatusOr<bool> Survives(MemSeries* s, const Tombstone& t,
                                Timestamp last_t);
  // Adds to `batch` the rewrite of ref's persisted chunks without the
  // samples in `deleted`.
  absl::Status RewriteChunks(uint64_t ref, const Intervals& deleted,
                             rocksdb::WriteBatch* batch);
  // Drops tombstone intervals whose data retention deleted.
  absl::Status TrimTombstones(Timestamp before)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(commit_mu_);
  // Writes cut chunks of `series` and clears their pending lists.
  absl::Status WritePending(const std::vector<MemSeries*>& series)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(commit_mu_);
  absl::Status CheckpointLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(commit_mu_);
  void NoteTime(Timestamp t);
  absl::Status SaveTimeRange() ABSL_EXCLUSIVE_LOCKS_REQUIRED(commit_mu_);

  const Options options_;
  const std::string dir_;
  Logger* logger_;
  SymbolTable symbols_;
  PostingsIndex postings_;
  std::unique_ptr<Head> head_;
  // One block cache for every family's data, index and filter blocks
  // (Options::block_cache_bytes).
  std::shared_ptr<rocksdb::Cache> block_cache_;
  std::shared_ptr<BackgroundJobCounter> jobs_ =
      std::make_shared<BackgroundJobCounter>();

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  rocksdb::ColumnFamilyHandle* cf_series_ = nullptr;
  rocksdb::ColumnFamilyHandle* cf_chunks_ = nullptr;
  rocksdb::ColumnFamilyHandle* cf_wal_ = nullptr;
  rocksdb::ColumnFamilyHandle* cf_head_ = nullptr;
  rocksdb::ColumnFamilyHandle* cf_meta_ = nullptr;
  // Null until the first DeleteSeries (or if the directory has none).
  rocksdb::ColumnFamilyHandle* cf_tombstones_ = nullptr;
  TombstoneIndex tombstones_;
  // Null until the first PutState (or if the directory has none); set
  // once under commit_mu_ (EnsureStateFamily).
  std::atomic<rocksdb::ColumnFamilyHandle*> cf_state_{nullptr};

  const std::shared_ptr<AppendScratchPool> append_scratch_ =
      std::make_shared<AppendScratchPool>();
  vigil::Mutex commit_mu_;
  uint64_t next_wal_seq_ ABSL_GUARDED_BY(commit_mu_) = 1;
  int64_t wal_bytes_ ABSL_GUARDED_BY(commit_mu_) = 0;
  // The wal records since the last checkpoint: [checkpoint_seq_,
  // next_wal_seq_), with their counts (the next held segment).
  uint64_t checkpoint_seq_ ABSL_GUARDED_BY(commit_mu_) = 1;
  uint64_t seg_records_ ABSL_GUARDED_BY(commit_mu_) = 0;
  uint64_t seg_samples_ ABSL_GUARDED_BY(commit_mu_) = 0;
  Timestamp seg_max_t_ ABSL_GUARDED_BY(commit_mu_) = kMinTimestamp;
  // Checkpointed wal records kept for commit-log readers, oldest first,
  // contiguous, all below checkpoint_seq_.
  std::deque<HeldSegment> held_ ABSL_GUARDED_BY(commit_mu_);
  // Null until the first OpenCommitLogReader (or if the directory has
  // none); set under commit_mu_.
  std::atomic<rocksdb::ColumnFamilyHandle*> cf_commitlog_{nullptr};

  // The registered readers (lock order: commit_mu_, then cl_mu_).
  vigil::Mutex cl_mu_;
  std::map<std::string, ReaderState, std::less<>> readers_
      ABSL_GUARDED_BY(cl_mu_);
  // The first wal record kept (records below it are gone).
  uint64_t first_seq_ ABSL_GUARDED_BY(cl_mu_) = 1;
  std::atomic<int64_t> held_bytes_{0};
  std::atomic<uint64_t> held_records_{0};
  std::atomic<uint64_t> lost_samples_total_{0};
  // Shared with the readers: waiting for commits, and closing.
  std::shared_ptr<CommitLogHub> hub_;

  // Head GC (db_cold.cc). Null until the first eviction. series_mu_
  // serialises evictions, revivals, creations while cold series exist and
  // ForEachSeries. Lock order: commit_mu_, series_mu_, the head's locks.
  std::atomic<rocksdb::ColumnFamilyHandle*> cf_cold_{nullptr};
  vigil::Mutex series_mu_;
  std::atomic<uint64_t> cold_series_{0};
  std::atomic<int64_t> cold_max_t_{kMinTimestamp};
  // Read-only with first-layout cold postings (MigrateColdPostings).
  bool legacy_postings_ = false;
  // Odd while an eviction moves series from the head to cold.
  std::atomic<uint64_t> gc_seq_{0};

  vigil::Mutex meta_mu_;
  WriteHealthState health_;

  // Stats()'s walk of the head, reused while younger than
  // Options::stats_walk_max_age_ms and no series is hidden.
  struct HeadWalk {
    uint64_t hidden = 0, head_samples = 0, head_chunks = 0;
    size_t series_bytes = 0;
  };
  HeadWalk WalkHead(bool* any_hidden);
  vigil::Mutex walk_mu_;
  HeadWalk walk_ ABSL_GUARDED_BY(walk_mu_);
  int64_t walk_at_ms_ ABSL_GUARDED_BY(walk_mu_) = 0;
  bool walk_valid_ ABSL_GUARDED_BY(walk_mu_) = false;
};

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_DB_IMPL_H_
