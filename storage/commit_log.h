// -----------------------------------------------------------------------------
// File: commit_log.h
// -----------------------------------------------------------------------------
//
// Reading what the storage has committed, in commit order, for shipping it
// elsewhere (remote write). Every committed batch is a record of the `wal`
// column family (FORMAT.md) with a sequence number; a CommitLogReader reads
// those records and acknowledges what it has delivered. The storage keeps a
// record until every registered reader has acknowledged it (and the head
// checkpoint no longer needs it), so a reader that falls behind costs disk,
// never memory, and resumes where it stopped after a restart.
//
// Readers are registered by name, durably: a reader opened once keeps its
// records held across restarts until DB::DropCommitLogReader(name), even
// while nobody has it open. Held records are bounded by the DB's time
// retention (a record whose newest sample falls outside it is deleted by
// ApplyRetention) and by Options::commit_log_max_hold_bytes; what a
// reader loses that way is reported by Read (lost_batches, lost_samples),
// never skipped silently.
//
// Requires Options::write_wal (the default): with it off there is no log
// and OpenCommitLogReader fails with FailedPrecondition.
#ifndef VIGIL_STORAGE_COMMIT_LOG_H_
#define VIGIL_STORAGE_COMMIT_LOG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/labels.h"
#include "core/time.h"
#include "storage/appender.h"

namespace vigil::storage {

struct CommittedSample {
  SeriesRef ref = 0;
  Timestamp t = 0;
  double v = 0;
};

// One committed batch (one Appender::Commit), as the log holds it.
struct CommittedBatch {
  uint64_t seq = 0;  // its position in the log (ascending, no reuse)
  std::vector<CommittedSample> samples;
};

struct CommitLogRead {
  // Whole batches, seq ascending, the first with seq >= the `from` asked.
  std::vector<CommittedBatch> batches;
  // The position to read from next (last batch's seq + 1, or `from` when
  // nothing was read; past the records deleted before the log's first
  // kept record when `from` is below it).
  uint64_t next = 0;
  // Batches in [from, first batch read) that were deleted (retention or
  // the hold cap) before this reader acknowledged them, and their samples.
  // Reading on from `next` does not report them again; reading again from
  // the same `from` does (so does resuming from Position() after a
  // restart, until they are acknowledged past: at-least-once).
  uint64_t lost_batches = 0;
  uint64_t lost_samples = 0;
};

// Thread-compatible: one thread uses a reader at a time (the remote's
// queue); different readers may be used concurrently with each other and
// with appenders. Destroy readers before their DB. Destroying the DB wakes
// a Read waiting in another thread (it returns Cancelled) and waits for
// calls in progress; after that every call returns Cancelled (End and
// Position the last known values), and destroying the reader is safe.
class CommitLogReader {
 public:
  virtual ~CommitLogReader() = default;
  CommitLogReader(const CommitLogReader&) = delete;
  CommitLogReader& operator=(const CommitLogReader&) = delete;

  // The registered name.
  virtual const std::string& name() const = 0;

  // Where this reader resumes: the first position not acknowledged, as
  // persisted (a new reader starts at the end of the log: it ships what is
  // committed after it was first opened).
  virtual uint64_t Position() const = 0;

  // The position the next commit will get (the end of the log).
  virtual uint64_t End() const = 0;

  // Reads whole batches with seq >= `from`, in order, until they hold at
  // least `max_samples` samples or the log ends (always at least one batch
  // when one exists). With nothing to read it waits up to `wait` for a
  // commit (absl::ZeroDuration(): no wait). Errors: DataLoss naming the
  // damaged record; Cancelled if the DB is closing.
  [[nodiscard]] virtual absl::StatusOr<CommitLogRead> Read(
      uint64_t from, size_t max_samples, absl::Duration wait) = 0;

  // The labels of a series a batch names. NotFound for a ref this DB does
  // not know (never for a ref read from this log).
  [[nodiscard]] virtual absl::StatusOr<Labels> SeriesLabels(SeriesRef ref) = 0;

  // Everything before `next` was delivered. Persists the position (not
  // synced: after a crash the reader may resend up to a few seconds of
  // batches — at-least-once) and lets the storage delete batches no
  // reader needs any more (at its next checkpoint, a whole checkpoint
  // interval at a time). A position going backwards is ignored; one
  // beyond End() is InvalidArgument. Losses a Read reported are
  // forgotten once acknowledged past; after a crash before that, they are
  // reported again (at-least-once, like the batches).
  [[nodiscard]] virtual absl::Status Acknowledge(uint64_t next) = 0;

 protected:
  CommitLogReader() = default;
};

}  // namespace vigil::storage

#endif  // VIGIL_STORAGE_COMMIT_LOG_H_
