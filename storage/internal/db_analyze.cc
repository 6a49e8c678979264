// DBImpl::Analyze: whole-directory statistics for `vigil tsdb analyze`.
#include <algorithm>
#include <filesystem>

#include "core/status_macros.h"
#include "fmt/format.h"
#include "storage/internal/db_impl.h"
#include "storage/internal/keys.h"
#include "storage/internal/rocksdb_status.h"

namespace vigil::storage::internal {

namespace {
void SortDesc(std::vector<std::pair<std::string, uint64_t>>* v) {
  std::sort(v->begin(), v->end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
}
}  // namespace

absl::StatusOr<AnalyzeReport> DBImpl::Analyze() {
  AnalyzeReport r;
  r.num_series = head_->NumSeries();
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf_chunks_));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key();
    if (k.size() != kChunkKeySize) {
      return absl::DataLossError("chunks: malformed key");
    }
    Timestamp mint = GetOrderedI64(k.data() + 12), maxt;
    std::string_view bytes;
    if (!DecodeChunkValue(
            std::string_view(it->value().data(), it->value().size()), mint,
            &maxt, &bytes)) {
      return absl::DataLossError(
          fmt::format("chunk of series {} at {}: checksum mismatch",
                      GetBE64(k.data() + 4), mint));
    }
    ChunkIterator ci(bytes);
    VIGIL_RETURN_IF_ERROR(Annotate(
        ci.err(),
        fmt::format("chunk of series {} at {}", GetBE64(k.data() + 4), mint)));
    r.num_chunks++;
    r.num_samples += ci.num_samples();
    r.chunk_bytes += bytes.size();
  }
  VIGIL_RETURN_IF_ERROR(FromRocks(it->status(), "read chunks"));
  head_->ForEach([&](MemSeries* s) {
    SpinLockHolder l(&s->mu);
    if (s->chunk.num_samples() > 0) {
      r.num_chunks++;
      r.num_samples += s->chunk.num_samples();
      r.chunk_bytes += s->chunk.bytes().size();
    }
    for (const auto& p : s->pending) {
      ChunkIterator ci(p.bytes);
      r.num_chunks++;
      r.num_samples += ci.num_samples();
      r.chunk_bytes += p.bytes.size();
    }
    r.postings_entries += s->num_labels;
  });
  DBStats st = Stats();
  r.disk_bytes = 0;
  std::error_code ec;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(dir_, ec)) {
    if (e.is_regular_file(ec)) r.disk_bytes += e.file_size(ec);
  }
  r.min_time = st.min_time;
  r.max_time = st.max_time;
  uint32_t name_sym = symbols_.Find(kMetricName);
  for (uint32_t n : postings_.Names()) {
    r.label_names++;
    std::vector<uint32_t> values = postings_.Values(n);
    r.label_pairs += values.size();
    std::string name(symbols_.Get(n));
    r.label_cardinality.push_back({name, values.size()});
    for (uint32_t v : values) {
      Matcher m = *Matcher::Make(MatchType::kEqual, name, symbols_.Get(v));
      uint64_t count = postings_.Select(symbols_, {m}).size();
      std::string value(symbols_.Get(v));
      if (n == name_sym) r.series_per_metric.push_back({value, count});
      r.series_per_label_pair.push_back({name + "=" + value, count});
    }
  }
  SortDesc(&r.series_per_metric);
  SortDesc(&r.label_cardinality);
  SortDesc(&r.series_per_label_pair);
  return r;
}

}  // namespace vigil::storage::internal
