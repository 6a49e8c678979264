#include "storage/internal/db_impl.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>

#include "absl/time/clock.h"
#include "core/parallel.h"
#include "core/status_macros.h"
#include "core/thread_name.h"
#include "fmt/format.h"
#include "rocksdb/convenience.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/options.h"
#include "rocksdb/rate_limiter.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/checkpoint.h"
#include "rocksdb/write_batch.h"
#include "storage/internal/keys.h"
#include "storage/internal/rocksdb_logger.h"
#include "storage/internal/rocksdb_status.h"
#include "storage/internal/size_budget.h"
#include "storage/internal/verify_internal.h"

namespace vigil::storage {

namespace internal {

namespace {

// Every family reads through the DB's one block cache, and keeps its index
// and filter blocks there too: without that each table reader holds its
// index in memory for as long as the table is open, which grows with the
// directory (Options::block_cache_bytes, docs/tsdb.md "RocksDB's memory").
rocksdb::BlockBasedTableOptions TableOptions(
    const std::shared_ptr<rocksdb::Cache>& cache) {
  rocksdb::BlockBasedTableOptions bto;
  bto.block_size = 32 << 10;
  bto.format_version = 5;
  bto.block_cache = cache;
  bto.cache_index_and_filter_blocks = true;
  // Index and filter blocks go to the cache's high-priority pool, so that
  // a long scan of chunk blocks does not push them out; level 0's stay
  // pinned (its tables are few, small and read by every lookup).
  bto.cache_index_and_filter_blocks_with_high_priority = true;
  bto.pin_l0_filter_and_index_blocks_in_cache = true;
  return bto;
}

// Options of the families of small records (all but `chunks`).
rocksdb::ColumnFamilyOptions SmallCfOptions(
    const std::shared_ptr<rocksdb::Cache>& cache, bool bloom = false) {
  rocksdb::BlockBasedTableOptions bto = TableOptions(cache);
  if (bloom) {
    // Point reads (head GC's and appends' lookups of a labels hash among
    // the cold series) check a table's bloom filter first. One filter block
    // per table grows with the table: ~2 MB once the cold family holds a
    // few hundred thousand series, more than a shard of the block cache
    // (32 MiB in 64 shards), so it was read from the file and checksummed
    // again on every lookup (21.9 s to move 37 k series out of the head
    // with 300 k cold, bench/storage_bench BM_EvictIntoCold). Partitioned,
    // a lookup reads one 4 KiB partition through a small pinned index.
    bto.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    bto.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
    bto.partition_filters = true;
    bto.pin_top_level_index_and_filter = true;
  }
  rocksdb::ColumnFamilyOptions small_cf;
  // Series records (labels), head records and metadata repeat the same
  // names and values from record to record: ZSTD over 32 KiB blocks once
  // they reach the bottom level halves them against LZ4 over 4 KiB, which
  // matters for small directories where they rival the chunks in size.
  small_cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(bto));
  small_cf.compression = rocksdb::kLZ4Compression;
  small_cf.bottommost_compression = rocksdb::kZSTD;
  small_cf.level_compaction_dynamic_level_bytes = true;
  // Series are written once per series; small memtables keep their share
  // of RSS low (they are flushed, not kept, once full).
  small_cf.write_buffer_size = 4 << 20;
  return small_cf;
}

}  // namespace

rocksdb::ColumnFamilyOptions DBImpl::SmallOptions(bool bloom) const {
  return SmallCfOptions(block_cache_, bloom);
}

rocksdb::ColumnFamilyOptions DBImpl::CommitLogOptions() const {
  rocksdb::ColumnFamilyOptions o;
  o.table_factory.reset(
      rocksdb::NewBlockBasedTableFactory(TableOptions(block_cache_)));
  return o;
}

DBImpl::DBImpl(const Options& options, std::string dir)
    : options_(options),
      dir_(std::move(dir)),
      logger_(options.logger ? options.logger : Logger::Default()),
      head_(std::make_unique<Head>(options_, &symbols_, &postings_)),
      block_cache_(rocksdb::NewLRUCache(
          static_cast<size_t>(
              std::max<int64_t>(options.block_cache_bytes, 1 << 20)),
          /*num_shard_bits=*/-1, /*strict_capacity_limit=*/false,
          /*high_pri_pool_ratio=*/0.5)),
      hub_(std::make_shared<CommitLogHub>()) {}

DBImpl::~DBImpl() {
  {
    // Waiting reads return Cancelled; calls in progress finish first.
    vigil::MutexLock l(&hub_->mu);
    hub_->closed = true;
    hub_->cv.SignalAll();
    while (hub_->active > 0) hub_->cv.Wait(&hub_->mu);
  }
  if (db_ && !options_.read_only) {
    vigil::MutexLock l(&commit_mu_);
    absl::Status s = CheckpointLocked();
    if (!s.ok())
      logger_->Error("checkpoint on close failed",
                     {{"err", std::string(s.message())}});
    // Write the memtables out as (compressed) tables, so that a stopped
    // server's directory holds no uncompressed log of what it last wrote
    // and the next open has nothing to replay.
    rocksdb::FlushOptions fo;
    fo.wait = true;
    rocksdb::Status fs = db_->Flush(fo, handles_);
    if (!fs.ok())
      logger_->Error("flush on close failed", {{"err", fs.ToString()}});
    // The checkpoint deleted every wal record; a compaction of the family
    // now drops the level-0 tables still holding them (DeleteFilesInRange
    // leaves level 0 alone), so they do not outlive the process.
    // Records held for commit-log readers are left as they are.
    if (fs.ok()) {
      uint64_t first;
      {
        vigil::MutexLock rl(&cl_mu_);
        first = first_seq_;
      }
      const std::string hi_key = WalKey(first);
      const rocksdb::Slice hi(hi_key);
      fs = db_->CompactRange(rocksdb::CompactRangeOptions(), cf_wal_, nullptr,
                             &hi);
      if (!fs.ok())
        logger_->Error("wal compaction on close failed",
                       {{"err", fs.ToString()}});
    }
  }
  for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
  if (db_) db_->Close().PermitUncheckedError();
}

absl::Status DBImpl::OpenImpl() {
  namespace fs = std::filesystem;
  const absl::Time open_start = absl::Now();
  std::error_code ec;
  if (!options_.read_only && options_.create_if_missing) {
    fs::create_directories(dir_, ec);
    if (ec) return absl::UnavailableError("create directory: " + ec.message());
  }
  if (!fs::exists(fs::path(dir_) / "CURRENT")) {
    if (options_.read_only || !options_.create_if_missing) {
      return absl::InvalidArgumentError(
          "not a Vigil data directory (no CURRENT file)");
    }
  }
  rocksdb::DBOptions dbo;
  dbo.create_if_missing = options_.create_if_missing;
  dbo.create_missing_column_families = true;
  dbo.max_background_jobs = 2;
  dbo.keep_log_file_num = 3;
  dbo.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  dbo.info_log = NewRocksLogger(logger_, dbo.info_log_level);
  dbo.listeners.push_back(NewManualNoSpaceRecovery());
  dbo.listeners.push_back(jobs_);
  if (options_.test_background_bytes_per_sec > 0) {
    dbo.rate_limiter.reset(
        rocksdb::NewGenericRateLimiter(options_.test_background_bytes_per_sec));
  }
  // With a size limit, tables, compactions, memtables and logs are sized
  // to leave retention room for them (size_budget.h).
  const SizeBudget budget = SizeBudgetFor(options_.retention_bytes);
  dbo.max_total_wal_size = budget.max_wal_bytes;
  // No preallocation: RocksDB would reserve a log's worth of space (1.1 x
  // the largest memtable) up front, so on a full disk appends kept going
  // into the reserve and the failure showed only at the next flush, minutes
  // later; without it the first append that finds no space fails and
  // /-/ready says so (the disk-full drills check within seconds).
  dbo.allow_fallocate = false;
  // A damaged RocksDB log record is an error naming the log (`vigil tsdb
  // repair` skips it), not the silent end of recovery; a torn last record
  // (power loss mid-write) is still dropped.
  dbo.wal_recovery_mode =
      rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;

  const rocksdb::BlockBasedTableOptions bto = TableOptions(block_cache_);
  rocksdb::ColumnFamilyOptions data_cf;
  data_cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(bto));
  data_cf.compression = rocksdb::kLZ4Compression;
  data_cf.bottommost_compression = rocksdb::kZSTD;
  data_cf.write_buffer_size = budget.write_buffer_bytes;
  data_cf.target_file_size_base = budget.target_file_bytes;
  data_cf.max_compaction_bytes = budget.max_compaction_bytes;
  data_cf.level_compaction_dynamic_level_bytes = true;
  rocksdb::ColumnFamilyOptions small_cf = SmallOptions();

  // WAL records live until the next checkpoint deletes them: compressing
  // them when a memtable is flushed, and again when flushed files are
  // compacted, is CPU spent on data that is about to go.
  rocksdb::ColumnFamilyOptions wal_cf = small_cf;
  wal_cf.compression = rocksdb::kNoCompression;
  wal_cf.bottommost_compression = rocksdb::kNoCompression;

  if (options_.test_write_buffer_bytes > 0) {
    for (auto* cf : {&data_cf, &small_cf, &wal_cf}) {
      cf->write_buffer_size = size_t(options_.test_write_buffer_bytes);
      cf->level0_file_num_compaction_trigger = 2;
    }
  }

  std::vector<rocksdb::ColumnFamilyDescriptor> cfs = {
      {rocksdb::kDefaultColumnFamilyName, small_cf},
      {kCfSeries, small_cf},
      {kCfChunks, data_cf},
      {kCfWal, wal_cf},
      {kCfHead, small_cf},
      {kCfMeta, small_cf}};
  // A format-1 directory still has `postings`; RocksDB opens a directory
  // for writing only with all its families, so open it to drop it. The
  // `tombstones` family exists once something was deleted.
  bool legacy_postings = false, tombstones = false, state = false,
       commitlog = false, cold = false;
  {
    std::vector<std::string> existing;
    if (rocksdb::DB::ListColumnFamilies(dbo, dir_, &existing).ok()) {
      for (const auto& name : existing) {
        if (name == kCfLegacyPostings && !options_.read_only)
          legacy_postings = true;
        if (name == kCfTombstones) tombstones = true;
        if (name == kCfState) state = true;
        if (name == kCfCommitLog) commitlog = true;
        if (name == kCfCold) cold = true;
      }
    }
    if (legacy_postings) cfs.push_back({kCfLegacyPostings, small_cf});
    if (tombstones) cfs.push_back({kCfTombstones, small_cf});
    if (state) cfs.push_back({kCfState, small_cf});
    if (commitlog) cfs.push_back({kCfCommitLog, CommitLogOptions()});
    if (cold) cfs.push_back({kCfCold, SmallOptions(/*bloom=*/true)});
  }
  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs =
      options_.read_only
          ? rocksdb::DB::OpenForReadOnly(dbo, dir_, cfs, &handles_, &raw)
          : rocksdb::DB::Open(dbo, dir_, cfs, &handles_, &raw);
  VIGIL_RETURN_IF_ERROR(NameOpenDamage(dir_, FromRocks(rs, "open rocksdb")));
  db_.reset(raw);
  cf_series_ = handles_[1];
  cf_chunks_ = handles_[2];
  cf_wal_ = handles_[3];
  cf_head_ = handles_[4];
  cf_meta_ = handles_[5];
  for (auto* h : handles_) {
    if (h->GetName() == kCfTombstones) cf_tombstones_ = h;
    if (h->GetName() == kCfState) cf_state_ = h;
    if (h->GetName() == kCfCommitLog) cf_commitlog_ = h;
    if (h->GetName() == kCfCold) cf_cold_ = h;
  }
  rocksdb::ColumnFamilyHandle* postings = nullptr;
  if (legacy_postings) {
    postings = handles_[6];
    handles_.erase(handles_.begin() + 6);
  }
  absl::Status format = CheckFormat(postings);
  if (postings) db_->DestroyColumnFamilyHandle(postings);
  VIGIL_RETURN_IF_ERROR(format);
  if (!options_.read_only) DeleteOldOptionsFiles();
  std::string range;
  if (db_->Get(rocksdb::ReadOptions(), cf_meta_, "timerange", &range).ok() &&
      range.size() == 16) {
    min_time_ = GetOrderedI64(range.data());
    max_time_ = GetOrderedI64(range.data() + 8);
  }
  // Each step's time goes to the log: the open's breakdown.
  auto step = [this, t = open_start](const char* what) mutable {
    const absl::Time now = absl::Now();
    logger_->Info("storage open",
                  {{"step", what},
                   {"ms", std::to_string(absl::ToInt64Milliseconds(now - t))}});
    t = now;
  };
  step("rocksdb");
  VIGIL_RETURN_IF_ERROR(LoadCold());
  VIGIL_RETURN_IF_ERROR(LoadSeries());
  step("series");
  VIGIL_RETURN_IF_ERROR(LoadTombstones());
  VIGIL_RETURN_IF_ERROR(LoadHead());
  step("head");
  VIGIL_RETURN_IF_ERROR(LoadCommitLog());
  VIGIL_RETURN_IF_ERROR(ReplayWal());
  step("wal");
  return absl::OkStatus();
}

absl::Status DBImpl::LoadTombstones() {
  if (cf_tombstones_ == nullptr) return absl::OkStatus();
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf_tombstones_));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key();
    uint64_t ref = k.size() == 8 ? GetBE64(k.data()) : 0;
    Tombstone t;
    if (ref == 0 ||
        !DecodeTombstone(
            std::string_view(it->value().data(), it->value().size()), &t)) {
      return absl::DataLossError(fmt::format(
          "tombstone record of series {}: checksum mismatch or malformed "
          "record",
          ref));
    }
    tombstones_.Set(ref, std::move(t));
  }
  return FromRocks(it->status(), "read tombstones");
}

absl::Status DBImpl::EnsureTombstonesFamily() {
  if (cf_tombstones_ != nullptr) return absl::OkStatus();
  rocksdb::ColumnFamilyHandle* h = nullptr;
  VIGIL_RETURN_IF_ERROR(
      FromRocks(db_->CreateColumnFamily(SmallOptions(), kCfTombstones, &h),
                "create tombstones family"));
  handles_.push_back(h);
  cf_tombstones_ = h;
  return absl::OkStatus();
}

absl::Status DBImpl::EnsureStateFamily() {
  vigil::MutexLock l(&commit_mu_);
  if (cf_state_.load() != nullptr) return absl::OkStatus();
  rocksdb::ColumnFamilyHandle* h = nullptr;
  VIGIL_RETURN_IF_ERROR(
      FromRocks(db_->CreateColumnFamily(SmallOptions(), kCfState, &h),
                "create state family"));
  handles_.push_back(h);
  cf_state_.store(h);
  return absl::OkStatus();
}

absl::Status DBImpl::CheckFormat(rocksdb::ColumnFamilyHandle* legacy_postings) {
  std::string fmtv;
  rocksdb::Status rs =
      db_->Get(rocksdb::ReadOptions(), cf_meta_, kFormatKey, &fmtv);
  uint32_t version = kFormatVersion;
  if (rs.IsNotFound()) {
    if (options_.read_only) return absl::OkStatus();  // empty directory
    version = 0;                                      // write it below
  } else {
    VIGIL_RETURN_IF_ERROR(FromRocks(rs, "read format version"));
    version = fmtv.size() == 4 ? GetBE32(fmtv.data()) : 0;
    if (version != kFormatVersion && version != kFormatVersionWithPostings) {
      return absl::DataLossError(fmt::format(
          "meta/format: unknown on-disk format version {} (this build reads "
          "{} and {})",
          fmtv.size() == 4 ? std::to_string(version) : "(malformed)",
          kFormatVersionWithPostings, kFormatVersion));
    }
  }
  if (options_.read_only) return absl::OkStatus();
  // The postings family goes first, so a crash in between leaves a
  // format-1 directory without it, which is upgraded again at next open.
  if (legacy_postings) {
    VIGIL_RETURN_IF_ERROR(FromRocks(db_->DropColumnFamily(legacy_postings),
                                    "drop legacy postings"));
  }
  if (version == kFormatVersion) return absl::OkStatus();
  std::string v;
  PutBE32(&v, kFormatVersion);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return FromRocks(db_->Put(wo, cf_meta_, kFormatKey, v), "write format");
}

void DBImpl::DeleteOldOptionsFiles() {
  // RocksDB writes its options to a new OPTIONS-<n> file at every open and
  // keeps the previous one as well: a few kB per column family, each, which
  // dominate a small directory. Vigil never loads options from them (it
  // passes its own at every open), so only the newest is kept, for
  // RocksDB's tools.
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::pair<uint64_t, fs::path>> files;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("OPTIONS-", 0) != 0 || name.size() == 8) continue;
    if (name.find_first_not_of("0123456789", 8) != std::string::npos) continue;
    files.push_back({std::stoull(name.substr(8)), e.path()});
  }
  std::sort(files.begin(), files.end());
  for (size_t i = 0; i + 1 < files.size(); ++i) fs::remove(files[i].second, ec);
}

absl::Status DBImpl::LoadSeries() {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf_series_));
  // Cold series (head GC) stay out of memory: their `s` records walk
  // along in ref order.
  std::unique_ptr<rocksdb::Iterator> cold;
  if (cf_cold_.load() != nullptr) {
    cold.reset(db_->NewIterator(rocksdb::ReadOptions(), cf_cold_.load()));
    cold->Seek("s");
  }
  auto is_cold = [&cold](rocksdb::Slice k) {
    if (!cold || k.size() != 8) return false;
    const uint64_t ref = GetBE64(k.data());
    while (cold->Valid() && cold->key().starts_with("s") &&
           cold->key().size() == 9 && GetBE64(cold->key().data() + 1) < ref) {
      cold->Next();
    }
    return cold->Valid() && cold->key().starts_with("s") &&
           cold->key().size() == 9 && GetBE64(cold->key().data() + 1) == ref;
  };
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key();
    if (is_cold(k)) continue;
    Labels labels;
    if (k.size() != 8 ||
        !DecodeLabels(std::string_view(it->value().data(), it->value().size()),
                      &labels)) {
      return absl::DataLossError(
          fmt::format("series record {}: checksum mismatch or malformed record",
                      k.size() == 8 ? GetBE64(k.data()) : 0));
    }
    MemSeries* s = head_->CreateWithRef(GetBE64(k.data()), labels);
    s->Set(MemSeries::kPersisted, true);
  }
  return FromRocks(it->status(), "read series");
}

absl::Status DBImpl::LoadHead() {
  // A head record with the encoder state of its open chunk restores by
  // copying the bytes (OpenChunk::Restore). One without (written before
  // states were stored) or whose state does not fit its bytes is decoded
  // and its samples appended to a new chunk, which re-encodes them; that is
  // independent from series to series and most of such an open's time at
  // 1 M series: workers restore batches of records while this thread reads
  // the next ones. Re-encoded series are marked dirty, so the next
  // checkpoint (at the latest the one at close) stores their state.
  // The records' values lie end to end in one buffer: a string each made
  // this thread's heap arena and the workers' frees contend for its lock
  // (~2,400 waits in a 1 M series open).
  struct Batch {
    std::vector<uint64_t> refs;
    std::string values;
    std::vector<uint32_t> ends;  // values[i] = [ends[i-1], ends[i])
    std::string_view value(size_t i) const {
      const uint32_t from = i == 0 ? 0 : ends[i - 1];
      return std::string_view(values).substr(from, ends[i] - from);
    }
  };
  constexpr size_t kBatch = 1024;
  const size_t workers =
      std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::mutex mu;
  std::condition_variable work_cv, space_cv;
  std::deque<Batch> queue;
  bool done = false;
  uint64_t err_ref = UINT64_MAX;  // the lowest failing ref wins
  absl::Status err;
  std::atomic<uint64_t> resumed{0}, reencoded{0}, rejected{0};
  uint64_t rejected_ref = UINT64_MAX;  // the lowest one is logged
  absl::Status rejected_err;
  auto fail = [&](uint64_t ref, absl::Status st) {
    std::lock_guard<std::mutex> l(mu);
    if (ref < err_ref) {
      err_ref = ref;
      err = std::move(st);
    }
  };
  auto restore = [&](uint64_t ref, std::string_view value,
                     std::vector<Timestamp>* ts, std::vector<double>* vs) {
    MemSeries* s = head_->GetByRef(ref);
    Timestamp last_t;
    double last_v;
    std::string_view chunk;
    OpenChunkState state;
    bool has_state = false;
    if (!s || !DecodeHeadRecord(value, &last_t, &last_v, &chunk, &state,
                                &has_state)) {
      return fail(ref, absl::DataLossError(fmt::format(
                           "head record of series {}: checksum mismatch or "
                           "unknown series",
                           ref)));
    }
    if (has_state) {
      absl::StatusOr<OpenChunk> c = OpenChunk::Restore(chunk, state);
      if (c.ok()) {
        SpinLockHolder l(&s->mu);
        // The chunk's last sample is the record's (last_t, last_v).
        s->chunk = std::move(*c);
        resumed.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      rejected.fetch_add(1, std::memory_order_relaxed);
      std::lock_guard<std::mutex> l(mu);
      if (ref < rejected_ref) {
        rejected_ref = ref;
        rejected_err = c.status();
      }
    }
    ts->clear();
    vs->clear();
    if (!chunk.empty()) {
      absl::Status st = DecodeChunk(chunk, ts, vs);
      if (!st.ok()) {
        return fail(ref,
                    Annotate(st, fmt::format("head chunk of series {}", ref)));
      }
      reencoded.fetch_add(1, std::memory_order_relaxed);
    }
    SpinLockHolder l(&s->mu);
    if (ts->empty()) s->chunk.ResetTo(last_t, last_v);
    for (size_t i = 0; i < ts->size(); ++i) s->chunk.Append((*ts)[i], (*vs)[i]);
    if (!ts->empty()) s->Set(MemSeries::kDirty, true);
  };
  std::vector<std::thread> pool;
  for (size_t w = 0; w < workers; ++w) {
    pool.emplace_back([&] {
      SetCurrentThreadName("vigil-open");
      std::vector<Timestamp> ts;
      std::vector<double> vs;
      for (;;) {
        Batch b;
        {
          std::unique_lock<std::mutex> l(mu);
          work_cv.wait(l, [&] { return !queue.empty() || done; });
          if (queue.empty()) return;
          b = std::move(queue.front());
          queue.pop_front();
        }
        space_cv.notify_one();
        for (size_t i = 0; i < b.refs.size(); ++i)
          restore(b.refs[i], b.value(i), &ts, &vs);
      }
    });
  }
  auto push = [&](Batch* b) {
    {
      std::unique_lock<std::mutex> l(mu);
      space_cv.wait(l, [&] { return queue.size() < 2 * workers; });
      queue.push_back(std::move(*b));
    }
    work_cv.notify_one();
    *b = Batch();
  };
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf_head_));
  Batch b;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key();
    b.refs.push_back(k.size() == 8 ? GetBE64(k.data()) : 0);
    b.values.append(it->value().data(), it->value().size());
    b.ends.push_back(static_cast<uint32_t>(b.values.size()));
    if (b.refs.size() == kBatch) push(&b);
  }
  if (!b.refs.empty()) push(&b);
  {
    std::lock_guard<std::mutex> l(mu);
    done = true;
  }
  work_cv.notify_all();
  for (auto& t : pool) t.join();
  VIGIL_RETURN_IF_ERROR(err);
  logger_->Info("storage open: head chunks",
                {{"resumed", std::to_string(resumed.load())},
                 {"reencoded", std::to_string(reencoded.load())}});
  if (rejected.load() > 0) {
    logger_->Warn("storage open: head chunk states rejected, chunks re-encoded",
                  {{"count", std::to_string(rejected.load())},
                   {"first_series", std::to_string(rejected_ref)},
                   {"err", std::string(rejected_err.message())}});
  }
  return FromRocks(it->status(), "read head");
}

void DBImpl::NoteTime(Timestamp t) {
  int64_t cur = min_time_.load(std::memory_order_relaxed);
  while (t < cur && !min_time_.compare_exchange_weak(cur, t)) {
  }
  cur = max_time_.load(std::memory_order_relaxed);
  while (t > cur && !max_time_.compare_exchange_weak(cur, t)) {
  }
}

namespace {

// Seals the unsealed pending chunks (a WAL replay's cuts) of `series`, on
// two threads (ForEachBlock) when there are many: the checkpoint after an open
// that replayed a whole interval (at the latest the one at close) finds ~300 k
// of them at 1 M series, ~10 us of encoding each.
void SealUnsealed(const std::vector<MemSeries*>& series) {
  std::vector<MemSeries*> todo;
  for (MemSeries* s : series) {
    if (s->Has(MemSeries::kUnsealed, std::memory_order_relaxed))
      todo.push_back(s);
  }
  constexpr size_t kBlock = 1024;
  ForEachBlock((todo.size() + kBlock - 1) / kBlock, todo.size() >= 4 * kBlock,
               [&todo](size_t b) {
                 const BlockRange r = BlockOf(b, kBlock, todo.size());
                 for (size_t i = r.begin; i < r.end; ++i) {
                   SpinLockHolder l(&todo[i]->mu);
                   for (auto& p : todo[i]->pending) SealPending(&p);
                 }
               });
}

}  // namespace

absl::Status DBImpl::WritePending(const std::vector<MemSeries*>& series) {
  SealUnsealed(series);
  rocksdb::WriteBatch batch;
  size_t n = 0;
  for (MemSeries* s : series) {
    SpinLockHolder l(&s->mu);
    for (auto& p : s->pending) {
      SealPending(&p);
      std::string v = EncodeChunkValue(p.mint, p.maxt, p.bytes);
      batch.Put(cf_chunks_, ChunkKey(DayOf(p.mint), s->ref, p.mint), v);
      ++n;
    }
  }
  if (n == 0) return absl::OkStatus();
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync_commits;
  VIGIL_RETURN_IF_ERROR(WriteChecked(wo, &batch, "write chunks"));
  // Only now may the head forget them (queries read head, then RocksDB).
  chunk_writes_.fetch_add(1, std::memory_order_release);
  for (MemSeries* s : series) {
    SpinLockHolder l(&s->mu);
    s->pending.clear();
    s->Set(MemSeries::kHeadOnly, false);
    s->Set(MemSeries::kUnsealed, false, std::memory_order_relaxed);
  }
  return absl::OkStatus();
}

absl::Status DBImpl::SaveTimeRange() {
  std::string v;
  PutOrderedI64(&v, min_time_.load());
  PutOrderedI64(&v, max_time_.load());
  return FromRocks(db_->Put(rocksdb::WriteOptions(), cf_meta_, "timerange", v),
                   "write time range");
}

absl::Status DBImpl::CheckpointLocked() {
  std::vector<MemSeries*> all;
  head_->ForEach([&](MemSeries* s) { all.push_back(s); });
  VIGIL_RETURN_IF_ERROR(WritePending(all));
  rocksdb::WriteBatch batch;
  std::vector<MemSeries*> written;
  for (MemSeries* s : all) {
    SpinLockHolder l(&s->mu);
    if (!s->Has(MemSeries::kDirty)) continue;
    if (s->chunk.num_samples() == 0) {
      batch.Put(cf_head_, SeriesKey(s->ref),
                EncodeHeadRecord(s->last_t(), s->last_v(), std::string_view()));
    } else {
      const OpenChunkState state = s->chunk.ExportState();
      batch.Put(
          cf_head_, SeriesKey(s->ref),
          EncodeHeadRecord(s->last_t(), s->last_v(), s->chunk.bytes(), &state));
    }
    written.push_back(s);
  }
  // The records since the last checkpoint are now in `head`; those a
  // commit-log reader has not acknowledged stay, a whole segment (one
  // checkpoint interval) at a time, and replay starts at c_new.
  const uint64_t c_new = next_wal_seq_;
  rocksdb::ColumnFamilyHandle* cl = cf_commitlog_.load();
  uint64_t min_pos = UINT64_MAX;
  if (cl != nullptr) {
    vigil::MutexLock rl(&cl_mu_);
    for (const auto& [name, r] : readers_) min_pos = std::min(min_pos, r.pos);
  }
  size_t passed = 0;
  while (passed < held_.size() && held_[passed].hi <= min_pos) ++passed;
  const bool hold_new =
      cl != nullptr && min_pos < c_new && c_new > checkpoint_seq_;
  const uint64_t bound = passed < held_.size() ? held_[passed].lo
                         : hold_new            ? checkpoint_seq_
                                               : c_new;
  const HeldSegment seg{checkpoint_seq_, c_new,      seg_records_,
                        seg_samples_,    wal_bytes_, seg_max_t_};
  const std::string wal_lo = WalKey(0), wal_hi = WalKey(bound);
  batch.DeleteRange(cf_wal_, wal_lo, wal_hi);
  if (cl != nullptr) {
    for (size_t i = 0; i < passed; ++i) {
      std::string k = kClSegmentPrefix;
      PutBE64(&k, held_[i].lo);
      batch.Delete(cl, k);
    }
    if (hold_new) {
      std::string k = kClSegmentPrefix;
      PutBE64(&k, seg.lo);
      batch.Put(cl, k, EncodeSegmentRecord(seg));
    }
    std::string v;
    PutBE64(&v, c_new);
    batch.Put(cl, kClCheckpointKey, v);
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync_commits;
  VIGIL_RETURN_IF_ERROR(WriteChecked(wo, &batch, "checkpoint"));
  for (size_t i = 0; i < passed; ++i) {
    held_bytes_ -= held_[i].bytes;
    held_records_ -= held_[i].records;
  }
  held_.erase(held_.begin(), held_.begin() + passed);
  if (hold_new) {
    held_.push_back(seg);
    held_bytes_ += seg.bytes;
    held_records_ += seg.records;
  }
  {
    vigil::MutexLock rl(&cl_mu_);
    first_seq_ = std::max(first_seq_, bound);
  }
  checkpoint_seq_ = c_new;
  seg_records_ = seg_samples_ = 0;
  seg_max_t_ = kMinTimestamp;
  // The range tombstone hides the old records, but the tables they were
  // flushed to (every 4 MiB of commits) stay on disk until a compaction
  // happens to pick them: up to checkpoint_wal_bytes of dead data. Every
  // key they hold is now deleted, so drop the files outright (RocksDB does
  // this below level 0; level 0 compacts on its own after four flushes).
  const rocksdb::Slice lo(wal_lo), hi(wal_hi);
  rocksdb::Status drop =
      rocksdb::DeleteFilesInRange(db_.get(), cf_wal_, &lo, &hi, false);
  if (!drop.ok()) {
    logger_->Warn("dropping checkpointed wal tables failed",
                  {{"err", drop.ToString()}});
  }
  for (MemSeries* s : written) {
    SpinLockHolder l(&s->mu);
    s->Set(MemSeries::kDirty, false);
  }
  wal_bytes_ = 0;
  VIGIL_RETURN_IF_ERROR(EnforceHoldCap());
  return SaveTimeRange();
}

absl::Status DBImpl::Flush() {
  if (options_.read_only)
    return absl::FailedPreconditionError("flush: read-only");
  vigil::MutexLock l(&commit_mu_);
  head_->ForEach([&](MemSeries* s) {
    SpinLockHolder sl(&s->mu);
    head_->CutLocked(s);
    s->Set(MemSeries::kDirty, true);
  });
  VIGIL_RETURN_IF_ERROR(CheckpointLocked());
  rocksdb::FlushOptions fo;
  return FromRocks(db_->Flush(fo, handles_), "flush memtables");
}

absl::Status DBImpl::Snapshot(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) {
    return absl::AlreadyExistsError("snapshot: " + dir + " already exists");
  }
  // Commits write the WAL family and the head under commit_mu_, so holding
  // it gives the checkpoint a commit boundary; the copy replays the WAL
  // family on open like the original.
  vigil::MutexLock l(&commit_mu_);
  rocksdb::Checkpoint* raw = nullptr;
  VIGIL_RETURN_IF_ERROR(
      FromRocks(rocksdb::Checkpoint::Create(db_.get(), &raw), "snapshot"));
  std::unique_ptr<rocksdb::Checkpoint> cp(raw);
  return FromRocks(cp->CreateCheckpoint(dir, /*log_size_for_flush=*/0),
                   "snapshot " + dir);
}

absl::Status DBImpl::Compact() {
  if (options_.read_only)
    return absl::FailedPreconditionError("compact: read-only");
  if (!tombstones_.empty()) {
    vigil::MutexLock l(&commit_mu_);
    VIGIL_RETURN_IF_ERROR(CleanTombstonesLocked());
  }
  rocksdb::CompactRangeOptions co;
  co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  for (auto* h : handles_) {
    VIGIL_RETURN_IF_ERROR(FromRocks(db_->CompactRange(co, h, nullptr, nullptr),
                                    "compact " + h->GetName()));
  }
  return absl::OkStatus();
}

absl::Status DBImpl::ApplyRetention(Timestamp now) {
  if (options_.read_only) return absl::OkStatus();
  uint32_t first_day = DayOf(min_time_.load());
  uint32_t cut_day = 0;
  if (options_.retention_ms > 0) cut_day = DayOf(now - options_.retention_ms);
  auto delete_before = [&](uint32_t day) -> absl::Status {
    std::string lo = DayPrefix(0), hi = DayPrefix(day);
    VIGIL_RETURN_IF_ERROR(
        FromRocks(db_->DeleteRange(rocksdb::WriteOptions(), cf_chunks_, lo, hi),
                  "retention"));
    rocksdb::Slice slo(lo), shi(hi);
    VIGIL_RETURN_IF_ERROR(
        FromRocks(db_->CompactRange(rocksdb::CompactRangeOptions(), cf_chunks_,
                                    &slo, &shi),
                  "retention compaction"));
    int64_t mt = DayStart(day);
    if (min_time_.load() < mt) min_time_ = mt;
    logger_->Info("retention: deleted partitions",
                  {{"before", std::to_string(mt)}});
    return absl::OkStatus();
  };
  const int64_t min_before = min_time_.load();
  if (cut_day > first_day) VIGIL_RETURN_IF_ERROR(delete_before(cut_day));
  if (options_.retention_bytes > 0) {
    const int64_t goal =
        SizeBudgetFor(options_.retention_bytes).retention_goal_bytes;
    for (int guard = 0; guard < 10000; ++guard) {
      if (int64_t(Stats().disk_bytes) <= goal) break;
      uint32_t oldest = DayOf(min_time_.load());
      if (oldest >= DayOf(max_time_.load())) break;  // keep the newest day
      VIGIL_RETURN_IF_ERROR(delete_before(oldest + 1));
    }
  }
  // Cold series with nothing left are forgotten; idle ones leave memory.
  if (min_time_.load() != min_before) {
    VIGIL_RETURN_IF_ERROR(ForgetExpiredCold(min_time_.load()));
  }
  if (options_.head_idle_ms > 0) {
    VIGIL_RETURN_IF_ERROR(EvictIdle(now - options_.head_idle_ms).status());
  }
  vigil::MutexLock l(&commit_mu_);
  VIGIL_RETURN_IF_ERROR(TrimTombstones(min_time_.load()));
  // Held commit-log records whose newest sample is outside the retention.
  if (options_.retention_ms > 0) {
    size_t n = 0;
    while (n < held_.size() && held_[n].max_t < now - options_.retention_ms)
      ++n;
    VIGIL_RETURN_IF_ERROR(DropHeldSegments(n, "retention"));
  }
  VIGIL_RETURN_IF_ERROR(EnforceHoldCap());
  return SaveTimeRange();
}

absl::Status DBImpl::SetMetadata(const std::string& metric,
                                 const Metadata& md) {
  if (options_.read_only)
    return absl::FailedPreconditionError("metadata: read-only");
  std::string v;
  PutLengthPrefixed(&v, md.type);
  PutLengthPrefixed(&v, md.help);
  PutLengthPrefixed(&v, md.unit);
  return FromRocks(
      db_->Put(rocksdb::WriteOptions(), cf_meta_, MetadataKey(metric), v),
      "write metadata");
}

std::vector<std::pair<std::string, Metadata>> DBImpl::GetMetadata() {
  std::vector<std::pair<std::string, Metadata>> out;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf_meta_));
  for (it->Seek("m"); it->Valid() && it->key().starts_with("m"); it->Next()) {
    std::string_view v(it->value().data(), it->value().size());
    std::string_view type, help, unit;
    if (!GetLengthPrefixed(&v, &type) || !GetLengthPrefixed(&v, &help) ||
        !GetLengthPrefixed(&v, &unit)) {
      continue;
    }
    out.push_back(
        {it->key().ToString().substr(1),
         Metadata{std::string(type), std::string(help), std::string(unit)}});
  }
  return out;
}

}  // namespace internal
}  // namespace vigil::storage
