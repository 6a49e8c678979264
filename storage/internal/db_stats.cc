// DB::Stats of DBImpl: the live counters, one walk of the head for the
// per-series figures (reused while recent, Options::stats_walk_max_age_ms),
// and RocksDB's and the directory's sizes.
#include <algorithm>
#include <chrono>
#include <filesystem>

#include "storage/internal/db_impl.h"
#include "storage/internal/slab.h"

namespace vigil::storage::internal {

DBImpl::HeadWalk DBImpl::WalkHead(bool* any_hidden) {
  HeadWalk w;
  *any_hidden = tombstones_.num_hidden() > 0;
  // One walk of the head for every per-series figure.
  head_->ForEach([&](MemSeries* s) {
    const bool hide =
        s->Has(MemSeries::kIndexed, std::memory_order_relaxed) && Hidden(s);
    if (hide) ++w.hidden;
    SpinLockHolder l(&s->mu);
    w.series_bytes += Head::SeriesBytesLocked(*s);
    w.head_samples += s->chunk.num_samples();
    if (!hide) {
      w.head_chunks += s->pending.size() + (s->chunk.num_samples() > 0);
    }
  });
  return w;
}

DBStats DBImpl::Stats() {
  DBStats st;
  EpochManager::Guard pin = head_->Pin();
  st.num_series = head_->NumSeries();
  st.cold_series = cold_series_.load();
  st.head_gc_evicted = evicted_total_.load();
  st.head_gc_revived = revived_total_.load();
  HeadWalk w;
  {
    vigil::MutexLock l(&walk_mu_);
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    const int64_t max_age = options_.stats_walk_max_age_ms;
    if (max_age > 0 && walk_valid_ && now - walk_at_ms_ < max_age &&
        tombstones_.num_hidden() == 0) {
      w = walk_;
    } else {
      bool any_hidden = false;
      w = WalkHead(&any_hidden);
      walk_ = w;
      walk_at_ms_ = now;
      // A walk that saw hidden series is not reused: its count goes stale
      // as soon as one of them gets a new sample.
      walk_valid_ = !any_hidden;
    }
  }
  st.num_series -= std::min(w.hidden, st.num_series);
  st.head_samples = w.head_samples;
  st.head_chunks = w.head_chunks;
  const size_t series_bytes = w.series_bytes;
  st.appended_samples = appended_.load();
  st.out_of_order = out_of_order_.load();
  st.duplicate = duplicate_.load();
  st.series_refused = series_refused_.load();
  if (min_time_.load() <= max_time_.load()) {
    st.min_time = min_time_.load();
    st.max_time = max_time_.load();
  }
  // Live tables (not those a finished compaction has yet to delete) and
  // every other file: logs, manifest, options.
  uint64_t sst = 0, other = 0;
  db_->GetAggregatedIntProperty(rocksdb::DB::Properties::kTotalSstFilesSize,
                                &sst);
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
    if (e.is_regular_file(ec) && e.path().extension() != ".sst")
      other += e.file_size(ec);
  }
  st.disk_bytes = sst + other;
  st.rocksdb_flushes = jobs_->flushes();
  st.rocksdb_compactions = jobs_->compactions();
  st.rocksdb_compactions_running = jobs_->compactions_running();
  uint64_t mem = 0, readers = 0;
  db_->GetAggregatedIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables,
                                &mem);
  db_->GetAggregatedIntProperty(
      rocksdb::DB::Properties::kEstimateTableReadersMem, &readers);
  st.rocksdb_memory_bytes = mem + readers + block_cache_->GetUsage();
  st.head_memory_bytes = series_bytes + head_->TableBytes() +
                         symbols_.MemoryBytes() + postings_.MemoryBytes();
  const Slab::Stats slab = Slab::Global().stats();
  st.slab_resident_bytes = slab.resident_bytes();
  st.slab_object_bytes = slab.object_bytes;
  st.slab_moves = slab.moves;
  {
    vigil::MutexLock cl(&cl_mu_);
    st.commit_log_readers = readers_.size();
  }
  st.commit_log_held_bytes = uint64_t(std::max<int64_t>(0, held_bytes_.load()));
  st.commit_log_held_records = held_records_.load();
  st.commit_log_lost_samples = lost_samples_total_.load();
  return st;
}

}  // namespace vigil::storage::internal
