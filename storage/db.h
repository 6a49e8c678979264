// -----------------------------------------------------------------------------
// File: db.h
// -----------------------------------------------------------------------------
//
// The embeddable time-series database: an in-memory head of columnar chunks
// persisted in RocksDB. Open one with DB::Open, append through NewAppender,
// read through NewQuerier. Thread-safe: any number of appenders and
// queriers may be used concurrently from different threads.
//
// Example:
//   auto db = vigil::storage::DB::Open({}, "/var/lib/vigil");
//   auto app = (*db)->NewAppender();
//   app->Append(0, {{"__name__", "up"}, {"job", "x"}}, t, 1).IgnoreError();
//   if (auto s = app->Commit(); !s.ok()) ...
#ifndef VIGIL_STORAGE_DB_H_
#define VIGIL_STORAGE_DB_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/appender.h"
#include "storage/options.h"
#include "storage/querier.h"

namespace vigil::storage {

// Metric metadata, as exposed by the text format and /api/v1/metadata.
struct Metadata {
  std::string type;  // "counter", "gauge", "histogram", "summary", "unknown"...
  std::string help;
  std::string unit;
};

struct DBStats {
  uint64_t num_series = 0;        // series known (head + persisted)
  uint64_t head_samples = 0;      // samples in open head chunks
  uint64_t appended_samples = 0;  // samples accepted since Open
  uint64_t out_of_order = 0;      // samples rejected as out of order
  uint64_t duplicate = 0;         // same timestamp, different value
  int64_t min_time = 0;           // over all data; 0 if empty
  int64_t max_time = 0;
  uint64_t disk_bytes = 0;         // SST + RocksDB WAL bytes in the directory
  uint64_t head_memory_bytes = 0;  // estimate of head heap usage
  uint64_t rocksdb_memory_bytes = 0;  // memtables + table readers
};

// What `vigil tsdb analyze` prints. Counts cover the whole directory.
struct AnalyzeReport {
  uint64_t num_series = 0;
  uint64_t num_chunks = 0;  // persisted chunks + non-empty head chunks
  uint64_t num_samples = 0;
  uint64_t chunk_bytes = 0;  // encoded chunk payload bytes (uncompressed)
  uint64_t disk_bytes = 0;   // whole directory
  int64_t min_time = 0, max_time = 0;
  uint64_t label_names = 0;
  uint64_t label_pairs = 0;       // distinct (name, value)
  uint64_t postings_entries = 0;  // sum over series of their label count
  // Descending by count.
  std::vector<std::pair<std::string, uint64_t>> series_per_metric;
  std::vector<std::pair<std::string, uint64_t>> label_cardinality;
  std::vector<std::pair<std::string, uint64_t>> series_per_label_pair;
};

class DB : public Appendable, public Queryable {
 public:
  // Opens (or creates) the database in `dir`, replaying committed batches
  // that were not yet checkpointed. Errors: Unavailable (I/O, locked by
  // another process), DataLoss (corruption, naming the damaged record),
  // InvalidArgument (not a Vigil directory).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DB>> Open(
      const Options& options, const std::string& dir);

  // Checkpoints and closes. Safe to destroy without Close() (a crash is
  // equivalent).
  ~DB() override = default;

  // Cuts every open head chunk, persists it and truncates the WAL, so the
  // directory holds only sealed chunks. Appending may continue afterwards.
  [[nodiscard]] virtual absl::Status Flush() = 0;

  // Compacts RocksDB fully (after a bulk import).
  [[nodiscard]] virtual absl::Status Compact() = 0;

  // Deletes data outside the retention limits (time and size). Called
  // periodically by the server; `now` is the reference "newest" time.
  [[nodiscard]] virtual absl::Status ApplyRetention(Timestamp now) = 0;

  // Sets the metadata of a metric family (last write wins; persisted).
  [[nodiscard]] virtual absl::Status SetMetadata(const std::string& metric,
                                                 const Metadata& md) = 0;
  // All metadata, keyed by metric name, sorted.
  virtual std::vector<std::pair<std::string, Metadata>> GetMetadata() = 0;

  virtual DBStats Stats() = 0;

  // Scans every chunk (cost grows with the data) and summarises the
  // directory: sizes, samples, cardinality. DataLoss on a damaged chunk.
  [[nodiscard]] virtual absl::StatusOr<AnalyzeReport> Analyze() = 0;
};

}  // namespace vigil::storage

#endif  // VIGIL_STORAGE_DB_H_
