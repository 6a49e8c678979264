// DBImpl::DeleteSeries and DBImpl::CleanTombstones: deletion with
// tombstones (storage/internal/tombstones.h, FORMAT.md "tombstones").
//
// A delete writes one tombstone record per matched series and updates the
// in-memory TombstoneIndex, which every read consults. A clean rewrites,
// under the commit mutex, first the head (in memory, then a checkpoint that
// also truncates the WAL, which holds deleted samples), then the persisted
// chunks, the records of series left empty and the tombstones in one
// atomic batch, so a crash at any point keeps every deleted sample hidden.
#include <algorithm>

#include "core/status_macros.h"
#include "fmt/format.h"
#include "storage/internal/db_impl.h"
#include "storage/internal/keys.h"
#include "storage/internal/rocksdb_status.h"

namespace vigil::storage::internal {

namespace {

// Rewrites a sealed or open chunk's samples without the deleted ones.
absl::Status Filtered(std::string_view bytes, const Intervals& deleted,
                      std::vector<Timestamp>* ts, std::vector<double>* vs) {
  ts->clear();
  vs->clear();
  VIGIL_RETURN_IF_ERROR(DecodeChunk(bytes, ts, vs));
  FilterSamples(deleted, ts, vs);
  return absl::OkStatus();
}

}  // namespace

bool DBImpl::Hidden(MemSeries* s) const {
  if (tombstones_.num_hidden() == 0) return false;
  Timestamp until = tombstones_.HiddenUntil(s->ref);
  if (until == kMinTimestamp) return false;
  SpinLockHolder l(&s->mu);
  return s->last_t() <= until;
}

absl::StatusOr<bool> DBImpl::Survives(MemSeries* s, const Tombstone& t,
                                      Timestamp last_t) {
  // The newest sample survives unless deleted: the common partial delete.
  if (!CoveredBy(t.intervals, last_t, last_t)) return true;
  // One interval from before all data to the newest sample: nothing left.
  // Head samples may predate min_time_ (retention deletes persisted days
  // only), so the head's oldest counts too.
  Timestamp oldest = min_time_.load();
  {
    SpinLockHolder l(&s->mu);
    for (const auto& p : s->pending) oldest = std::min(oldest, p.mint);
    if (s->chunk.num_samples() > 0)
      oldest = std::min(oldest, s->chunk.min_time());
  }
  if (CoveredBy(t.intervals, oldest, last_t)) return false;
  // Otherwise look: gaps between intervals, or a start after some data.
  return AnySample(s, t.intervals, kMinTimestamp, last_t);
}

absl::Status DBImpl::DeleteSeries(std::span<const Matcher> matchers,
                                  Timestamp mint, Timestamp maxt) {
  if (options_.read_only) {
    return absl::FailedPreconditionError("delete series: read-only");
  }
  if (matchers.empty()) {
    return absl::InvalidArgumentError("delete series: no matchers");
  }
  if (mint > maxt) return absl::OkStatus();
  const std::vector<Matcher> ms(matchers.begin(), matchers.end());
  // Cold series (head GC) that match come back into the head first, so
  // they are deleted like the others; idle, they leave it again later.
  if (cold_series_.load() > 0) {
    std::vector<ColdSeries> cold;
    {
      vigil::ReaderMutexLock sl(&series_mu_);
      VIGIL_ASSIGN_OR_RETURN(cold, SelectCold(ms, kMinTimestamp));
    }
    for (const ColdSeries& c : cold) {
      VIGIL_RETURN_IF_ERROR(ReviveRef(c.ref, 0).status());
    }
  }
  // Under the commit mutex, each series' newest sample cannot move while
  // its interval is clamped to it (and head GC cannot run).
  vigil::MutexLock l(&commit_mu_);
  Postings ids = postings_.Select(symbols_, ms);
  rocksdb::WriteBatch batch;
  std::vector<std::pair<uint64_t, Tombstone>> changed;
  for (uint32_t id : ids) {
    MemSeries* s = head_->GetByRef(id);
    if (s == nullptr) continue;
    Timestamp last_t;
    {
      SpinLockHolder sl(&s->mu);
      last_t = s->last_t();
    }
    if (last_t == kMinTimestamp || mint > last_t) continue;  // nothing there
    Tombstone t;
    tombstones_.Get(id, &t);
    if (t.hidden_until >= last_t) continue;  // already wholly deleted
    AddInterval(&t.intervals, {mint, std::min(maxt, last_t)});
    VIGIL_ASSIGN_OR_RETURN(bool survives, Survives(s, t, last_t));
    t.hidden_until = survives ? kMinTimestamp : last_t;
    changed.push_back({id, std::move(t)});
  }
  if (changed.empty()) return absl::OkStatus();
  VIGIL_RETURN_IF_ERROR(EnsureTombstonesFamily());
  for (const auto& [ref, t] : changed) {
    batch.Put(cf_tombstones_, SeriesKey(ref), EncodeTombstone(t));
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;
  VIGIL_RETURN_IF_ERROR(
      FromRocks(db_->Write(wo, &batch), "delete series: write tombstones"));
  for (auto& [ref, t] : changed) tombstones_.Set(ref, std::move(t));
  logger_->Info("deleted series", {{"series", std::to_string(changed.size())},
                                   {"mint", std::to_string(mint)},
                                   {"maxt", std::to_string(maxt)}});
  return absl::OkStatus();
}

absl::Status DBImpl::CleanTombstones() {
  if (options_.read_only) {
    return absl::FailedPreconditionError("clean tombstones: read-only");
  }
  Timestamp lo = kMaxTimestamp, hi = kMinTimestamp;
  for (const auto& [ref, t] : tombstones_.All()) {
    lo = std::min(lo, t.intervals.front().mint);
    hi = std::max(hi, t.intervals.back().maxt);
  }
  {
    vigil::MutexLock l(&commit_mu_);
    VIGIL_RETURN_IF_ERROR(CleanTombstonesLocked());
  }
  if (lo > hi) return absl::OkStatus();
  // Deleted records stay in SST files (and in RocksDB's WAL) until
  // compacted: compact the families of small records and the days of
  // `chunks` that were rewritten, so the data is gone from disk.
  VIGIL_RETURN_IF_ERROR(
      FromRocks(db_->Flush(rocksdb::FlushOptions(), handles_), "flush"));
  rocksdb::CompactRangeOptions co;
  co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  for (auto* h : {cf_series_, cf_head_, cf_wal_, cf_tombstones_}) {
    VIGIL_RETURN_IF_ERROR(FromRocks(db_->CompactRange(co, h, nullptr, nullptr),
                                    "compact " + h->GetName()));
  }
  lo = std::max(lo, min_time_.load());
  hi = std::min(hi, max_time_.load());
  if (lo > hi) return absl::OkStatus();
  std::string from = DayPrefix(DayOf(lo)), to = DayPrefix(DayOf(hi) + 1);
  rocksdb::Slice sfrom(from), sto(to);
  return FromRocks(db_->CompactRange(co, cf_chunks_, &sfrom, &sto),
                   "compact chunks");
}

absl::Status DBImpl::CleanTombstonesLocked() {
  const auto all = tombstones_.All();
  if (all.empty()) return absl::OkStatus();
  // 1. The head, in memory: pending and open chunks without the samples.
  std::vector<MemSeries*> forget;
  std::vector<Timestamp> ts;
  std::vector<double> vs;
  for (const auto& [ref, t] : all) {
    MemSeries* s = head_->GetByRef(ref);
    if (s == nullptr) continue;
    SpinLockHolder sl(&s->mu);
    if (!s->pending.empty()) {
      std::vector<PendingChunk> kept;
      for (const auto& p : s->pending) {
        if (!Overlaps(t.intervals, p.mint, p.maxt)) {
          kept.push_back(p);
          continue;
        }
        VIGIL_RETURN_IF_ERROR(Annotate(
            Filtered(p.bytes, t.intervals, &ts, &vs),
            fmt::format("clean tombstones: head chunk of series {}", ref)));
        if (ts.empty()) continue;
        kept.push_back({ts.front(), ts.back(),
                        EncodeSealed(ts.data(), vs.data(), ts.size())});
      }
      s->pending.clear();
      for (auto& p : kept) s->pending.push_back(std::move(p));
    }
    if (s->chunk.num_samples() > 0 &&
        Overlaps(t.intervals, s->chunk.min_time(), s->chunk.max_time())) {
      VIGIL_RETURN_IF_ERROR(Annotate(
          Filtered(s->chunk.bytes(), t.intervals, &ts, &vs),
          fmt::format("clean tombstones: open chunk of series {}", ref)));
      // The series keeps its newest sample (appends stay in order) even
      // when the tombstones took it: the open chunk then holds none of the
      // rest, which goes to the pending chunks as a sealed one.
      const Timestamp last_t = s->last_t();
      const double last_v = s->last_v();
      s->chunk.ResetTo(last_t, last_v);
      if (!ts.empty() && ts.back() == last_t) {
        for (size_t i = 0; i < ts.size(); ++i) s->chunk.Append(ts[i], vs[i]);
      } else if (!ts.empty()) {
        s->pending.push_back({ts.front(), ts.back(),
                              EncodeSealed(ts.data(), vs.data(), ts.size())});
      }
      s->Set(MemSeries::kDirty, true);
    }
    if (s->last_t() <= t.hidden_until) forget.push_back(s);
  }
  // 2. A checkpoint: head records without the samples, and the WAL (which
  // still holds them) truncated. Commits are blocked, so none follows.
  VIGIL_RETURN_IF_ERROR(CheckpointLocked());
  // 3. Persisted chunks, series left empty and the tombstones: one batch.
  rocksdb::WriteBatch batch;
  for (const auto& [ref, t] : all) {
    VIGIL_RETURN_IF_ERROR(RewriteChunks(ref, t.intervals, &batch));
    batch.Delete(cf_tombstones_, SeriesKey(ref));
  }
  for (MemSeries* s : forget) {
    batch.Delete(cf_series_, SeriesKey(s->ref));
    batch.Delete(cf_head_, SeriesKey(s->ref));
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;
  VIGIL_RETURN_IF_ERROR(
      FromRocks(db_->Write(wo, &batch), "clean tombstones: write"));
  // Queriers refresh their chunk iterators before they can miss the
  // tombstones (they look tombstones up first, chunks second).
  chunk_writes_.fetch_add(1, std::memory_order_release);
  head_->Unindex(forget);
  for (MemSeries* s : forget) {
    s->Set(MemSeries::kPersisted, false, std::memory_order_release);
  }
  for (const auto& [ref, t] : all) tombstones_.Erase(ref);
  logger_->Info("cleaned tombstones",
                {{"series", std::to_string(all.size())},
                 {"forgotten", std::to_string(forget.size())}});
  return absl::OkStatus();
}

absl::Status DBImpl::RewriteChunks(uint64_t ref, const Intervals& deleted,
                                   rocksdb::WriteBatch* batch) {
  if (deleted.empty()) return absl::OkStatus();
  Timestamp lo = std::max(deleted.front().mint, min_time_.load());
  Timestamp hi = std::min(deleted.back().maxt, max_time_.load());
  if (lo > hi) return absl::OkStatus();
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf_chunks_));
  std::vector<Timestamp> ts;
  std::vector<double> vs;
  const int64_t range = options_.chunk_range_ms;
  Timestamp start = lo - ((lo % range) + range) % range;
  for (uint32_t day = DayOf(start); day <= DayOf(hi); ++day) {
    for (it->Seek(ChunkKey(day, ref, kMinTimestamp)); it->Valid(); it->Next()) {
      rocksdb::Slice k = it->key();
      if (k.size() != kChunkKeySize || GetBE32(k.data()) != day ||
          GetBE64(k.data() + 4) != ref) {
        break;
      }
      Timestamp cmint = GetOrderedI64(k.data() + 12), cmaxt;
      std::string_view bytes;
      if (!DecodeChunkValue(
              std::string_view(it->value().data(), it->value().size()), cmint,
              &cmaxt, &bytes)) {
        return absl::DataLossError(fmt::format(
            "chunk of series {} at {}: checksum mismatch", ref, cmint));
      }
      if (!Overlaps(deleted, cmint, cmaxt)) continue;
      VIGIL_RETURN_IF_ERROR(
          Annotate(Filtered(bytes, deleted, &ts, &vs),
                   fmt::format("chunk of series {} at {}", ref, cmint)));
      batch->Delete(cf_chunks_, k);
      if (ts.empty()) continue;
      // The first sample may be later now; it stays in the same chunk
      // range, so in the same day.
      batch->Put(
          cf_chunks_, ChunkKey(day, ref, ts.front()),
          EncodeChunkValue(ts.front(), ts.back(),
                           EncodeSealed(ts.data(), vs.data(), ts.size())));
    }
    VIGIL_RETURN_IF_ERROR(
        FromRocks(it->status(), "read chunks of series {}", ref));
  }
  return absl::OkStatus();
}

absl::Status DBImpl::TrimTombstones(Timestamp before) {
  if (tombstones_.empty() || cf_tombstones_ == nullptr) {
    return absl::OkStatus();
  }
  // Intervals wholly before `before` cover only data retention deleted,
  // unless the head still holds older samples (an idle series' open
  // chunk), which they must keep hiding.
  rocksdb::WriteBatch batch;
  std::vector<std::pair<uint64_t, Tombstone>> changed;
  std::vector<uint64_t> erased;
  for (auto& [ref, t] : tombstones_.All()) {
    // A wholly deleted series keeps its tombstone until a clean forgets it.
    if (t.intervals.front().maxt >= before || t.hidden_until != kMinTimestamp)
      continue;
    MemSeries* s = head_->GetByRef(ref);
    if (s != nullptr) {
      SpinLockHolder sl(&s->mu);
      bool old_head =
          s->chunk.num_samples() > 0 && s->chunk.min_time() < before;
      for (const auto& p : s->pending) old_head |= p.mint < before;
      if (old_head) continue;
    }
    std::erase_if(t.intervals,
                  [before](const Interval& iv) { return iv.maxt < before; });
    if (t.intervals.empty()) {
      batch.Delete(cf_tombstones_, SeriesKey(ref));
      erased.push_back(ref);
    } else {
      batch.Put(cf_tombstones_, SeriesKey(ref), EncodeTombstone(t));
      changed.push_back({ref, std::move(t)});
    }
  }
  if (batch.Count() == 0) return absl::OkStatus();
  VIGIL_RETURN_IF_ERROR(FromRocks(db_->Write(rocksdb::WriteOptions(), &batch),
                                  "trim tombstones"));
  for (auto& [ref, t] : changed) tombstones_.Set(ref, std::move(t));
  for (uint64_t ref : erased) tombstones_.Erase(ref);
  return absl::OkStatus();
}

}  // namespace vigil::storage::internal
