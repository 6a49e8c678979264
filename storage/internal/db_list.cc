// DBImpl::ForEachSeries and DBImpl::ForEachChunk: the read-only listings of
// storage/db.h.
#include <algorithm>

#include "core/status_macros.h"
#include "fmt/format.h"
#include "storage/internal/db_impl.h"
#include "storage/internal/keys.h"
#include "storage/internal/rocksdb_status.h"

namespace vigil::storage::internal {

void DBImpl::ForEachSeries(
    const std::function<void(SeriesRef, const Labels&)>& f) {
  head_->ForEach([&](MemSeries* s) { f(s->ref, head_->LabelsOf(*s)); });
}

absl::Status DBImpl::ForEachChunk(
    Timestamp mint, Timestamp maxt,
    const std::function<void(const storage::ChunkMeta&)>& f) {
  if (mint > maxt) return absl::OkStatus();
  // The head first, then RocksDB: a chunk cut and written in between is
  // then seen twice rather than not at all (it leaves the head only after
  // it is in RocksDB). Infos are copied under the series lock and reported
  // outside it.
  std::vector<storage::ChunkMeta> infos;
  head_->ForEach([&](MemSeries* s) {
    infos.clear();
    {
      SpinLockHolder l(&s->mu);
      for (const auto& p : s->pending) {
        ChunkIterator ci(p.bytes);
        infos.push_back({s->ref, p.mint, p.maxt, uint32_t(ci.num_samples()),
                         p.bytes.size(), true});
      }
      if (s->chunk.num_samples() > 0) {
        infos.push_back({s->ref, s->chunk.min_time(), s->chunk.max_time(),
                         uint32_t(s->chunk.num_samples()),
                         s->chunk.bytes().size(), true});
      }
    }
    for (const storage::ChunkMeta& c : infos) {
      if (c.max_time >= mint && c.min_time <= maxt) f(c);
    }
  });
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
    f(c);
  }
  return FromRocks(it->status(), "read chunks");
}

}  // namespace vigil::storage::internal
