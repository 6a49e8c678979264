#include "server/cli/tsdb_analyze.h"

#include <algorithm>
#include <filesystem>

#include "absl/container/flat_hash_map.h"
#include "core/labels.h"
#include "core/status_macros.h"
#include "core/time.h"
#include "fmt/format.h"

namespace vigil::cli {

namespace {

void SortDesc(std::vector<std::pair<std::string, uint64_t>>* v) {
  std::sort(v->begin(), v->end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
}

}  // namespace

absl::StatusOr<AnalyzeReport> Analyze(storage::DB& db, const std::string& dir) {
  AnalyzeReport r;
  storage::DBStats st = db.Stats();
  r.num_series = st.num_series;
  r.min_time = st.min_time;
  r.max_time = st.max_time;
  VIGIL_RETURN_IF_ERROR(db.ForEachChunk(kMinTimestamp, kMaxTimestamp,
                                        [&](const storage::ChunkMeta& c) {
                                          r.num_chunks++;
                                          r.num_samples += c.num_samples;
                                          r.chunk_bytes += c.encoded_bytes;
                                        }));

  // Series counts per metric and per label pair, over every series the DB
  // knows (also those without samples, as the label names and values are).
  absl::flat_hash_map<std::string, uint64_t> per_pair;
  db.ForEachSeries([&](storage::SeriesRef, const Labels& labels) {
    r.postings_entries += labels.size();
    for (const auto& l : labels) ++per_pair[l.name + "=" + l.value];
  });

  VIGIL_ASSIGN_OR_RETURN(auto q, db.NewQuerier(kMinTimestamp, kMaxTimestamp));
  VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> names, q->LabelNames({}));
  for (const std::string& name : names) {
    VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> values,
                           q->LabelValues(name, {}));
    r.label_names++;
    r.label_pairs += values.size();
    r.label_cardinality.push_back({name, values.size()});
    for (const std::string& value : values) {
      auto it = per_pair.find(name + "=" + value);
      uint64_t count = it == per_pair.end() ? 0 : it->second;
      if (name == kMetricName) r.series_per_metric.push_back({value, count});
      r.series_per_label_pair.push_back({name + "=" + value, count});
    }
  }
  SortDesc(&r.series_per_metric);
  SortDesc(&r.label_cardinality);
  SortDesc(&r.series_per_label_pair);

  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec)) r.disk_bytes += e.file_size(ec);
  }
  return r;
}

std::string FormatAnalyzeReport(const AnalyzeReport& r, const std::string& dir,
                                size_t limit) {
  std::string out;
  out += fmt::format("Directory: {}\n", dir);
  if (r.num_samples > 0) {
    out += fmt::format("Time range: {} .. {} ({})\n",
                       FormatRfc3339Seconds(r.min_time),
                       FormatRfc3339Seconds(r.max_time),
                       FormatDurationMs(r.max_time - r.min_time));
  }
  out += fmt::format("Series: {}\n", r.num_series);
  out += fmt::format("Samples: {}\n", r.num_samples);
  out += fmt::format("Chunks: {} ({:.1f} samples/chunk)\n", r.num_chunks,
                     r.num_chunks ? double(r.num_samples) / r.num_chunks : 0.0);
  out += fmt::format("Disk bytes: {}\n", r.disk_bytes);
  if (r.num_samples > 0) {
    out += fmt::format(
        "Bytes per sample: {:.3f} (on disk), {:.3f} (chunk payload)\n",
        double(r.disk_bytes) / r.num_samples,
        double(r.chunk_bytes) / r.num_samples);
  }
  out += fmt::format("Label names: {}\n", r.label_names);
  out += fmt::format("Postings (unique label pairs): {}\n", r.label_pairs);
  out += fmt::format("Postings entries (total label pairs): {}\n",
                     r.postings_entries);
  auto section = [&](const char* title, const auto& rows) {
    out += fmt::format("\n{}:\n", title);
    for (size_t i = 0; i < rows.size() && i < limit; ++i) {
      out += fmt::format("{} {}\n", rows[i].second, rows[i].first);
    }
  };
  section("Highest cardinality metric names (series)", r.series_per_metric);
  section("Highest cardinality labels (distinct values)", r.label_cardinality);
  section("Most common label pairs (series)", r.series_per_label_pair);
  return out;
}

}  // namespace vigil::cli
