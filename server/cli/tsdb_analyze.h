// -----------------------------------------------------------------------------
// File: tsdb_analyze.h
// -----------------------------------------------------------------------------
//
// `vigil tsdb analyze`: a summary of a data directory (sizes, samples,
// cardinality), computed through storage's public interfaces only: the
// Querier's label names and values, DB::Stats, DB::ForEachSeries and
// DB::ForEachChunk, and the directory's files.
#ifndef VIGIL_SERVER_CLI_TSDB_ANALYZE_H_
#define VIGIL_SERVER_CLI_TSDB_ANALYZE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/db.h"

namespace vigil::cli {

// Counts cover the whole directory.
struct AnalyzeReport {
  uint64_t num_series = 0;
  uint64_t num_chunks = 0;  // persisted chunks + non-empty head chunks
  uint64_t num_samples = 0;
  uint64_t chunk_bytes = 0;  // encoded chunk payload bytes (uncompressed)
  uint64_t disk_bytes = 0;   // every file under the directory
  int64_t min_time = 0, max_time = 0;
  uint64_t label_names = 0;
  uint64_t label_pairs = 0;       // distinct (name, value)
  uint64_t postings_entries = 0;  // sum over series of their label count
  // Descending by count, then ascending by name.
  std::vector<std::pair<std::string, uint64_t>> series_per_metric;
  std::vector<std::pair<std::string, uint64_t>> label_cardinality;
  std::vector<std::pair<std::string, uint64_t>> series_per_label_pair;
};

// Reads every chunk header of `db` (opened on `dir`); cost grows with the
// data, memory with the number of distinct label pairs. DataLoss on a
// damaged chunk.
[[nodiscard]] absl::StatusOr<AnalyzeReport> Analyze(storage::DB& db,
                                                    const std::string& dir);

// The report as `vigil tsdb analyze` prints it, `limit` rows per table.
std::string FormatAnalyzeReport(const AnalyzeReport& r, const std::string& dir,
                                size_t limit);

}  // namespace vigil::cli

#endif  // VIGIL_SERVER_CLI_TSDB_ANALYZE_H_
