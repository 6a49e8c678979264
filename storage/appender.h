// -----------------------------------------------------------------------------
// File: appender.h
// -----------------------------------------------------------------------------
//
// Appending samples. An Appender buffers samples; none are visible to
// queriers until Commit(), which returns only after the batch is durable in
// RocksDB. Not thread-safe: use one Appender per thread (e.g. per scrape
// target). Many appenders may be used concurrently.
//
// Lifetime: an Appender refers to the DB that made it and must be
// destroyed before that DB. Destroying an Appender drops its buffered
// (uncommitted) samples, as Rollback() does.
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
// Refs stay below 2^32 (the DB's below 2^30): the scrape loops keep 32
// bits of each (server/scrape/series_cache.h).
using SeriesRef = uint64_t;

class Appender {
 public:
  virtual ~Appender() = default;
  // An appender is a handle on a DB's batch: neither copyable nor movable
  // (hold it by std::unique_ptr).
  Appender(const Appender&) = delete;
  Appender& operator=(const Appender&) = delete;

  // Buffers sample (t, v) for the series `labels`, or for `ref` when it is
  // non-zero (a ref returned earlier by this DB; `labels` is then ignored).
  // Returns the series ref to pass next time.
  // Errors (the batch stays usable; the sample is dropped):
  //   FailedPrecondition: out of order (t older than the newest committed or
  //     buffered sample of the series), or older than the retention window.
  //   AlreadyExists: same timestamp as the newest sample, different value.
  //   InvalidArgument: empty labels, no metric name, or duplicate names.
  //   ResourceExhausted: the series is new and the head already holds
  //     Options::max_series series (samples of existing series still go).
  // Same timestamp and same value is a silent no-op.
  [[nodiscard]] virtual absl::StatusOr<SeriesRef> Append(SeriesRef ref,
                                                         const Labels& labels,
                                                         Timestamp t,
                                                         double v) = 0;

  // Makes the buffered batch durable (one RocksDB write) and then visible:
  // once Commit() has returned OK, every Select() called afterwards, by any
  // querier (including one created before the commit), returns the
  // batch's samples. A Select() running concurrently with a Commit() may
  // see part of the batch (see querier.h).
  // On error nothing of the batch is visible and the appender is empty;
  // after either outcome the appender may be reused for a new batch.
  // Errors: FailedPrecondition on a read-only DB; Unavailable/DataLoss
  // (from RocksDB) when the write fails.
  [[nodiscard]] virtual absl::Status Commit() = 0;

  // Drops the buffered batch; the appender may be reused.
  virtual void Rollback() = 0;

 protected:
  Appender() = default;
};

// Something that hands out appenders (the DB, or a test fake).
// Thread-safe.
class Appendable {
 public:
  virtual ~Appendable() = default;
  // A new, empty appender. It must be destroyed before this Appendable.
  virtual std::unique_ptr<Appender> NewAppender() = 0;
};

}  // namespace vigil::storage

#endif  // VIGIL_STORAGE_APPENDER_H_
