// -----------------------------------------------------------------------------
// File: appender.h
// -----------------------------------------------------------------------------
//
// Appending samples. An Appender buffers samples; none are visible to
// queriers until Commit(), which returns only after the batch is durable in
// RocksDB. Not thread-safe: use one Appender per thread (e.g. per scrape
// target). Many appenders may be used concurrently.
#ifndef VIGIL_STORAGE_APPENDER_H_
#define VIGIL_STORAGE_APPENDER_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/labels.h"
#include "core/time.h"

namespace vigil::storage {

// Identifies a series within one DB. 0 means "unknown, look up by labels".
using SeriesRef = uint64_t;

class Appender {
 public:
  virtual ~Appender() = default;

  // Buffers sample (t, v) for the series `labels`, or for `ref` when it is
  // non-zero (a ref returned earlier by this DB; `labels` is then ignored).
  // Returns the series ref to pass next time.
  // Errors (the batch stays usable; the sample is dropped):
  //   FailedPrecondition: out of order (t older than the newest committed or
  //     buffered sample of the series), or older than the retention window.
  //   AlreadyExists: same timestamp as the newest sample, different value.
  //   InvalidArgument: empty labels, no metric name, or duplicate names.
  // Same timestamp and same value is a silent no-op.
  [[nodiscard]] virtual absl::StatusOr<SeriesRef> Append(SeriesRef ref,
                                                         const Labels& labels,
                                                         Timestamp t,
                                                         double v) = 0;

  // Makes the buffered batch durable (one RocksDB write) and then visible.
  // On error nothing of the batch is visible and the appender is empty.
  [[nodiscard]] virtual absl::Status Commit() = 0;

  // Drops the buffered batch.
  virtual void Rollback() = 0;
};

// Something that hands out appenders (the DB, or a test fake).
class Appendable {
 public:
  virtual ~Appendable() = default;
  virtual std::unique_ptr<Appender> NewAppender() = 0;
};

}  // namespace vigil::storage

#endif  // VIGIL_STORAGE_APPENDER_H_
