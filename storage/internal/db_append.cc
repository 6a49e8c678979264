// The Appender and Commit of DBImpl.
#include <algorithm>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/status_macros.h"
#include "fmt/format.h"
#include "rocksdb/write_batch.h"
#include "storage/internal/db_impl.h"
#include "storage/internal/keys.h"
#include "storage/internal/rocksdb_status.h"
#include "storage/internal/series_prefetch.h"

namespace vigil::storage::internal {

namespace {

inline bool SameBits(double a, double b) {
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

class DBAppender : public Appender {
 public:
  explicit DBAppender(DBImpl* db)
      : db_(db), pool_(db->append_scratch()), scratch_(pool_->Get()) {}
  ~DBAppender() override {
    Unmark();
    pool_->Put(std::move(scratch_));
  }

  absl::StatusOr<SeriesRef> Append(SeriesRef ref, const Labels& labels,
                                   Timestamp t, double v) override;
  absl::Status Commit() override;
  void Rollback() override {
    Unmark();
    scratch_->Clear();
    pin_.Release();
  }

 private:
  // Clears kInBatch of the series whose bit this batch set (committed or
  // dropped: their samples are no longer pending here).
  void Unmark() {
    AppendScratch& b = *scratch_;
    const size_t n = b.tracking ? b.track_from : b.series.size();
    for (size_t i = 0; i < n; ++i) {
      b.series[i]->Set(MemSeries::kInBatch, false, std::memory_order_relaxed);
    }
    for (MemSeries* s : b.marked_late) {
      s->Set(MemSeries::kInBatch, false, std::memory_order_relaxed);
    }
  }
  absl::StatusOr<MemSeries*> Resolve(SeriesRef ref, const Labels& labels);
  // Options::max_series: a series CleanTombstones forgot counts as new.
  bool OverLimit(const MemSeries& s) const;
  absl::Status Refuse(const Labels& labels);

  DBImpl* db_;
  // Pinned while the batch holds series pointers (head GC, epoch.h).
  EpochManager::Guard pin_;
  // The batch: samples, their series, and the newest buffered sample per
  // series; from the DB's pool, returned to it by the destructor.
  std::shared_ptr<AppendScratchPool> pool_;
  std::unique_ptr<AppendScratch> scratch_;
};

bool DBAppender::OverLimit(const MemSeries& s) const {
  const int64_t limit = db_->options().max_series;
  return limit > 0 && !s.Has(MemSeries::kIndexed, std::memory_order_relaxed) &&
         db_->head().NumSeries() >= uint64_t(limit);
}

absl::Status DBAppender::Refuse(const Labels& labels) {
  db_->series_refused_.fetch_add(1, std::memory_order_relaxed);
  return absl::ResourceExhaustedError(fmt::format(
      "storage: head series limit {} (--storage.tsdb.max-series) reached; "
      "new series refused: {}",
      db_->options().max_series, labels.ToString()));
}

absl::StatusOr<MemSeries*> DBAppender::Resolve(SeriesRef ref,
                                               const Labels& labels) {
  const int64_t limit = db_->options().max_series;
  if (ref != 0) {
    if (MemSeries* s = db_->head().GetByRef(ref)) {
      if (OverLimit(*s)) return Refuse(db_->head().LabelsOf(*s));
      return s;
    }
    // Head GC moved it out of memory: bring it back under the same ref.
    VIGIL_ASSIGN_OR_RETURN(
        MemSeries * s, db_->ReviveRef(ref, limit > 0 ? uint64_t(limit) : 0));
    if (s != nullptr) return s;
    if (labels.empty()) {
      return absl::NotFoundError(fmt::format("unknown series ref {}", ref));
    }
  }
  if (labels.empty()) {
    return absl::InvalidArgumentError("append: empty label set");
  }
  const Labels* ls = &labels;
  Labels cleaned;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0 && labels[i].name == labels[i - 1].name) {
      return absl::InvalidArgumentError(
          fmt::format("append {}: duplicate label name \"{}\"",
                      labels.ToString(), labels[i].name));
    }
    if (labels[i].value.empty() && ls == &labels) {
      cleaned = LabelsBuilder(labels).Build();  // empty value == absent
      ls = &cleaned;
    }
  }
  if (ls->empty()) return absl::InvalidArgumentError("append: empty label set");
  bool created;
  VIGIL_ASSIGN_OR_RETURN(
      MemSeries * s,
      db_->SeriesForAppend(*ls, &created, limit > 0 ? uint64_t(limit) : 0));
  if (s == nullptr || OverLimit(*s)) return Refuse(*ls);
  return s;
}

absl::StatusOr<SeriesRef> DBAppender::Append(SeriesRef ref,
                                             const Labels& labels, Timestamp t,
                                             double v) {
  if (!pin_.pinned()) pin_ = db_->head().Pin();
  VIGIL_ASSIGN_OR_RETURN(MemSeries * s, Resolve(ref, labels));
  Timestamp last_t;
  double last_v = 0;
  // In-batch order without a table lookup per sample: the batch that sets
  // a series' kInBatch owns the bit until it commits or drops its samples,
  // so a series whose bit this Append sets has no sample in this batch.
  // Found set, the series may have one here (or in another appender's
  // batch): from then on this batch keeps its newest sample per series in
  // a table and checks against that. Only the owner clears the bit, so a
  // batch that has a sample of a series and does not track holds its bit.
  const bool owner = s->Mark(MemSeries::kInBatch);
  if (!owner && !scratch_->tracking) scratch_->StartTracking();
  auto refused = [&](absl::Status st) {
    if (owner) s->Set(MemSeries::kInBatch, false, std::memory_order_relaxed);
    return st;
  };
  const LastSampleTable::Entry* e =
      scratch_->tracking ? scratch_->last.Find(s) : nullptr;
  if (e != nullptr) {
    last_t = e->t;
    last_v = e->v;
  } else {
    SpinLockHolder l(&s->mu);
    last_t = s->last_t();
    // Decoded from the open chunk (a division for a decimal column): only
    // a sample at the same time needs it.
    if (t == last_t) last_v = s->last_v();
  }
  if (t <= last_t) {
    if (t == last_t) {
      if (SameBits(v, last_v)) {  // exact duplicate: no-op
        (void)refused(absl::OkStatus());
        return s->ref;
      }
      db_->duplicate_.fetch_add(1, std::memory_order_relaxed);
      return refused(absl::AlreadyExistsError(fmt::format(
          "duplicate sample for timestamp {} with different value, series {}",
          t, db_->head().LabelsOf(*s).ToString())));
    }
    db_->out_of_order_.fetch_add(1, std::memory_order_relaxed);
    return refused(absl::FailedPreconditionError(
        fmt::format("out of order sample: timestamp {} is before {}, series {}",
                    t, last_t, db_->head().LabelsOf(*s).ToString())));
  }
  const auto& opt = db_->options();
  Timestamp maxt = db_->max_time_.load(std::memory_order_relaxed);
  if (opt.retention_ms > 0 && maxt != kMinTimestamp &&
      t < maxt - opt.retention_ms) {
    db_->out_of_order_.fetch_add(1, std::memory_order_relaxed);
    return refused(absl::FailedPreconditionError(fmt::format(
        "out of bounds: timestamp {} is older than the retention window "
        "(newest sample {}), series {}",
        t, maxt, db_->head().LabelsOf(*s).ToString())));
  }
  scratch_->samples.push_back({s->ref, t, v});
  scratch_->series.push_back(s);
  if (scratch_->tracking) {
    scratch_->last.Put(s, t, v);
    if (owner) scratch_->marked_late.push_back(s);
  }
  return s->ref;
}

absl::Status DBAppender::Commit() {
  if (db_->options().read_only) {
    Rollback();
    return absl::FailedPreconditionError("commit: database is read-only");
  }
  absl::Status s = db_->CommitBatch(scratch_->samples, scratch_->series);
  Rollback();
  return s;
}

}  // namespace

std::unique_ptr<Appender> DBImpl::NewAppender() {
  return std::make_unique<DBAppender>(this);
}

absl::Status DBImpl::CommitBatch(const std::vector<WalSample>& samples_in,
                                 const std::vector<MemSeries*>& series_in) {
  if (samples_in.empty()) return absl::OkStatus();
  vigil::MutexLock cl(&commit_mu_);
  // Head GC may have moved a series of the batch out of memory since it
  // was buffered (the batch's pin keeps its memory): find it again, which
  // revives it under its ref.
  const std::vector<WalSample>* samples_p = &samples_in;
  const std::vector<MemSeries*>* series_p = &series_in;
  std::vector<WalSample> samples_re;
  std::vector<MemSeries*> series_re;
  for (size_t i = 0; i < series_in.size(); ++i) {
    if (!series_in[i]->Has(MemSeries::kEvicted, std::memory_order_acquire))
      continue;
    samples_re = samples_in;
    series_re = series_in;
    absl::flat_hash_map<MemSeries*, MemSeries*> found;
    for (size_t j = i; j < series_re.size(); ++j) {
      MemSeries* z = series_re[j];
      if (!z->Has(MemSeries::kEvicted, std::memory_order_acquire)) continue;
      auto it = found.find(z);
      if (it == found.end()) {
        bool created;
        VIGIL_ASSIGN_OR_RETURN(MemSeries * s,
                               SeriesForAppend(head_->LabelsOf(*z), &created,
                                               uint64_t(std::max<int64_t>(
                                                   options_.max_series, 0))));
        if (s == nullptr) {
          return absl::ResourceExhaustedError(
              "commit: head series limit reached while bringing back a "
              "series head GC moved out of memory");
        }
        it = found.emplace(z, s).first;
      }
      series_re[j] = it->second;
      samples_re[j].ref = it->second->ref;
    }
    samples_p = &samples_re;
    series_p = &series_re;
    break;
  }
  const std::vector<WalSample>& samples = *samples_p;
  const std::vector<MemSeries*>& series = *series_p;
  rocksdb::WriteBatch batch;
  std::vector<MemSeries*> fresh;
  absl::flat_hash_set<MemSeries*> seen;
  // Profiled at 100 k series, the first read of a series' chunk was ~23 %
  // of the scrape path's CPU, then the record load ~10 % of the process:
  // both are loaded ahead (series_prefetch.h).
  constexpr size_t kAhead = kChunkPrefetchAhead;
  constexpr size_t kRecordAhead = kRecordPrefetchAhead;
  // One pass over the records before the appends: new series get their
  // record written, and samples another appender's commit has overtaken
  // meanwhile are found. The record holds what the head will accept, so
  // neither replay nor a commit-log reader sees those. last_t only changes
  // under commit_mu_ (held), so it is read here without the series' lock.
  // The records are loaded kRecordAhead series ahead and their chunks
  // kAhead, so that this light pass keeps many loads in flight and the
  // appends below find both cached.
  bool overtaken = false;
  for (size_t i = 0; i < std::min(kRecordAhead, series.size()); ++i) {
    PrefetchRecord(series[i]);
  }
  for (size_t i = 0; i < series.size(); ++i) {
    if (i + kRecordAhead < series.size())
      PrefetchRecord(series[i + kRecordAhead]);
    if (i + kAhead < series.size()) PrefetchChunk(series[i + kAhead]);
    MemSeries* s = series[i];
    overtaken |= samples[i].t <= s->last_t();
    if (s->Has(MemSeries::kPersisted, std::memory_order_acquire)) continue;
    if (!seen.insert(s).second) continue;
    fresh.push_back(s);
    batch.Put(cf_series_, SeriesKey(s->ref), EncodeLabels(head_->LabelsOf(*s)));
  }
  const std::vector<WalSample>* logged = &samples;
  std::vector<WalSample> accepted_only;
  if (overtaken) {
    for (size_t j = 0; j < samples.size(); ++j) {
      if (samples[j].t > series[j]->last_t())
        accepted_only.push_back(samples[j]);
    }
    logged = &accepted_only;
  }
  const uint64_t seq_before = next_wal_seq_;
  const int64_t wal_bytes_before = wal_bytes_;
  if (options_.write_wal && !logged->empty()) {
    std::string rec = EncodeWalRecord(*logged);
    wal_bytes_ += int64_t(rec.size());
    batch.Put(cf_wal_, WalKey(next_wal_seq_++), rec);
  }
  if (batch.Count() > 0) {
    rocksdb::WriteOptions wo;
    wo.sync = options_.sync_commits;
    if (absl::Status ws = WriteChecked(wo, &batch, "commit: write to WAL");
        !ws.ok()) {
      // Nothing of the batch was written (a full disk): the next commit
      // reuses the sequence number.
      next_wal_seq_ = seq_before;
      wal_bytes_ = wal_bytes_before;
      return ws;
    }
  }
  if (options_.write_wal && !logged->empty()) {
    ++seg_records_;
    seg_samples_ += logged->size();
    // Commit-log readers: publish the end, then wake waiting reads (an
    // atomic load when nobody waits; see CommitLogReader::Read).
    hub_->end.store(next_wal_seq_);
    if (hub_->waiters.load() > 0) {
      vigil::MutexLock hl(&hub_->mu);
      hub_->cv.SignalAll();
    }
  }
  for (MemSeries* s : fresh) {
    s->Set(MemSeries::kPersisted, true, std::memory_order_release);
    // CleanTombstones forgot it; its record is back, so is its index entry.
    if (!s->Has(MemSeries::kIndexed, std::memory_order_relaxed))
      head_->Reindex(s);
  }

  std::vector<MemSeries*> cut;
  uint64_t accepted = 0;
  // The pass above has started loading every record and chunk; the same
  // prefetches here are hits for a page whose records and chunks stayed
  // cached, and cover those evicted meanwhile on a large batch. (This is
  // the configuration measured: 3-7 % less CPU than prefetching here
  // alone; prefetching only in the pass is not measured yet.)
  const size_t n = samples.size();
  for (size_t i = 0; i < std::min(kRecordAhead, n); ++i) {
    PrefetchRecord(series[i]);
  }
  for (size_t i = 0; i < std::min(kAhead, n); ++i) {
    PrefetchChunk(series[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    if (i + kRecordAhead < n) PrefetchRecord(series[i + kRecordAhead]);
    if (i + kAhead < n) PrefetchChunk(series[i + kAhead]);
    MemSeries* s = series[i];
    const WalSample& w = samples[i];
    SpinLockHolder l(&s->mu);
    if (w.t <= s->last_t()) {
      // Another appender committed a newer sample meanwhile.
      if (!(w.t == s->last_t() && SameBits(w.v, s->last_v()))) {
        out_of_order_.fetch_add(1, std::memory_order_relaxed);
      }
      continue;
    }
    size_t before = s->pending.size();
    head_->AppendLocked(s, w.t, w.v);
    if (before == 0) {
      if (!s->pending.empty()) cut.push_back(s);
    } else if (s->Has(MemSeries::kUnsealed, std::memory_order_relaxed)) {
      // The WAL replay's cuts of this series, written (and sealed) now:
      // each target's first commit after an open takes its own series'.
      s->Set(MemSeries::kUnsealed, false, std::memory_order_relaxed);
      cut.push_back(s);
    }
    NoteTime(w.t);
    seg_max_t_ = std::max(seg_max_t_, w.t);
    ++accepted;
  }
  appended_.fetch_add(accepted, std::memory_order_relaxed);
  absl::Status ws = WritePending(cut);
  if (!ws.ok()) {
    // The samples are in the WAL (or the caller disabled it); the chunks
    // stay pending and are retried at the next commit or checkpoint.
    logger_->Error("writing cut chunks failed",
                   {{"err", std::string(ws.message())}});
    if (!options_.write_wal) return ws;
  }
  if (options_.write_wal && wal_bytes_ > options_.checkpoint_wal_bytes) {
    VIGIL_RETURN_IF_ERROR(CheckpointLocked());
  }
  return absl::OkStatus();
}

}  // namespace vigil::storage::internal
