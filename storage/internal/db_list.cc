// DBImpl::ForEachSeries and DBImpl::ForEachChunk: the read-only listings of
// storage/db.h.
#include <algorithm>

#include "core/status_macros.h"
#include "fmt/format.h"
#include "storage/internal/db_impl.h"
#include "storage/internal/keys.h"
#include "storage/internal/rocksdb_status.h"

namespace vigil::storage::internal {

void DBImpl::ForEachHeadSeries(
    const std::function<void(SeriesRef, const Labels&)>& f) {
  EpochManager::Guard pin = head_->Pin();
  head_->ForEach([&](MemSeries* s) {
    // Skipped: series CleanTombstones forgot, and ones tombstones emptied.
    if (!s->Has(MemSeries::kIndexed, std::memory_order_acquire) || Hidden(s))
      return;
    f(s->ref, head_->LabelsOf(*s));
  });
}

void DBImpl::ForEachSeries(
    const std::function<void(SeriesRef, const Labels&)>& f) {
  // No series moves between head and cold meanwhile.
  vigil::ReaderMutexLock l(&series_mu_);
  auto cold = SelectCold({}, kMinTimestamp);
  if (!cold.ok()) {
    logger_->Error("listing cold series failed",
                   {{"err", std::string(cold.status().message())}});
    cold = std::vector<ColdSeries>();
  }
  // Merged with the head's in ref order (SelectCold's order).
  size_t next = 0;
  auto cold_before = [&](uint64_t ref) {
    for (; next < cold->size() && (*cold)[next].ref < ref; ++next) {
      if (!tombstones_.empty()) {
        Tombstone t;
        if (tombstones_.Get((*cold)[next].ref, &t) &&
            t.hidden_until != kMinTimestamp) {
          continue;
        }
      }
      f((*cold)[next].ref, (*cold)[next].labels);
    }
  };
  ForEachHeadSeries([&](SeriesRef ref, const Labels& labels) {
    cold_before(ref);
    f(ref, labels);
  });
  cold_before(UINT64_MAX);
}

namespace {

// Applies ref's tombstones to a chunk's listing: false if none of its
// samples is left, else `c` counts (and spans) only the ones left.
absl::Status ApplyTombstones(const TombstoneIndex& tombs,
                             std::string_view bytes, storage::ChunkMeta* c,
                             bool* keep) {
  *keep = true;
  Tombstone t;
  if (tombs.empty() || !tombs.Get(c->ref, &t) ||
      !Overlaps(t.intervals, c->min_time, c->max_time)) {
    return absl::OkStatus();
  }
  std::vector<Timestamp> ts;
  std::vector<double> vs;
  VIGIL_RETURN_IF_ERROR(DecodeChunk(bytes, &ts, &vs));
  FilterSamples(t.intervals, &ts, &vs);
  *keep = !ts.empty();
  if (*keep) {
    c->min_time = ts.front();
    c->max_time = ts.back();
    c->num_samples = uint32_t(ts.size());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status DBImpl::ForEachChunk(
    Timestamp mint, Timestamp maxt,
    const std::function<void(const storage::ChunkMeta&)>& f) {
  if (mint > maxt) return absl::OkStatus();
  // The head first, then RocksDB: a chunk cut and written in between is
  // then seen twice rather than not at all (it leaves the head only after
  // it is in RocksDB). Infos are copied under the series lock and reported
  // outside it.
  std::vector<storage::ChunkMeta> infos;
  std::vector<std::string> head_bytes;  // copied only for tombstoned series
  absl::Status err;
  EpochManager::Guard pin = head_->Pin();
  head_->ForEach([&](MemSeries* s) {
    if (!err.ok()) return;
    infos.clear();
    head_bytes.clear();
    Tombstone t;
    const bool tomb = !tombstones_.empty() && tombstones_.Get(s->ref, &t);
    {
      SpinLockHolder l(&s->mu);
      for (const auto& p : s->pending) {
        ChunkIterator ci(p.bytes);
        infos.push_back({s->ref, p.mint, p.maxt, uint32_t(ci.num_samples()),
                         p.bytes.size(), true});
        if (tomb) head_bytes.push_back(p.bytes);
      }
      if (s->chunk.num_samples() > 0) {
        infos.push_back({s->ref, s->chunk.min_time(), s->chunk.max_time(),
                         uint32_t(s->chunk.num_samples()),
                         s->chunk.bytes().size(), true});
        if (tomb) head_bytes.emplace_back(s->chunk.bytes());
      }
    }
    for (size_t i = 0; i < infos.size(); ++i) {
      storage::ChunkMeta& c = infos[i];
      bool keep = true;
      if (tomb) {
        err = ApplyTombstones(tombstones_, head_bytes[i], &c, &keep);
        if (!err.ok()) return;
      }
      if (keep && c.max_time >= mint && c.min_time <= maxt) f(c);
    }
  });
  VIGIL_RETURN_IF_ERROR(err);
  // As the querier does, bound the scan by the data's time range (which
  // also keeps DayOf() away from the extremes of int64).
  Timestamp lo = std::max(mint, min_time_.load());
  Timestamp hi = std::min(maxt, max_time_.load());
  if (lo > hi) return absl::OkStatus();
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf_chunks_));
  // Chunks never cross a chunk-range boundary (FORMAT.md), so none that
  // holds samples >= lo starts before lo's range.
  const int64_t range = options_.chunk_range_ms;
  Timestamp start = lo - ((lo % range) + range) % range;
  const uint32_t last_day = DayOf(hi);
  for (it->Seek(DayPrefix(DayOf(start))); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key();
    if (k.size() != kChunkKeySize) {
      return absl::DataLossError("chunks: malformed key");
    }
    if (GetBE32(k.data()) > last_day) break;
    storage::ChunkMeta c;
    c.ref = GetBE64(k.data() + 4);
    c.min_time = GetOrderedI64(k.data() + 12);
    std::string_view bytes;
    if (!DecodeChunkValue(
            std::string_view(it->value().data(), it->value().size()),
            c.min_time, &c.max_time, &bytes)) {
      return absl::DataLossError(fmt::format(
          "chunk of series {} at {}: checksum mismatch", c.ref, c.min_time));
    }
    if (c.max_time < mint || c.min_time > maxt) continue;
    ChunkIterator ci(bytes);
    VIGIL_RETURN_IF_ERROR(Annotate(
        ci.err(), fmt::format("chunk of series {} at {}", c.ref, c.min_time)));
    c.num_samples = uint32_t(ci.num_samples());
    c.encoded_bytes = bytes.size();
    bool keep = true;
    VIGIL_RETURN_IF_ERROR(
        Annotate(ApplyTombstones(tombstones_, bytes, &c, &keep),
                 fmt::format("chunk of series {} at {}", c.ref, c.min_time)));
    if (keep) f(c);
  }
  return FromRocks(it->status(), "read chunks");
}

}  // namespace vigil::storage::internal
