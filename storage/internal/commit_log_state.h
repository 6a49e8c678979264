// -----------------------------------------------------------------------------
// File: commit_log_state.h
// -----------------------------------------------------------------------------
//
// The commit log's bookkeeping (storage/commit_log.h; layouts in
// storage/FORMAT.md, "The commit log"): the checkpointed `wal` records kept
// for readers, as segments (one per checkpoint interval), each reader's
// durable position and unreported losses, and the hub a reader shares with
// its DB to wait for commits and to learn that the DB is closing.
#ifndef VIGIL_STORAGE_INTERNAL_COMMIT_LOG_STATE_H_
#define VIGIL_STORAGE_INTERNAL_COMMIT_LOG_STATE_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/sync.h"
#include "core/time.h"

namespace vigil::storage::internal {

// Optional within format 2, like `tombstones`: created by the first
// OpenCommitLogReader. DO NOT CHANGE.
inline constexpr char kCfCommitLog[] = "commitlog";
// Keys of the `commitlog` family. DO NOT CHANGE.
inline constexpr char kClCheckpointKey[] = "checkpoint";  // → u64 seq
inline constexpr char kClReaderPrefix[] = "r";   // "r" + name → reader
inline constexpr char kClSegmentPrefix[] = "s";  // "s" + u64 lo → segment

// The wal records [lo, hi) of one checkpoint interval, kept (whole) while
// a reader has not acknowledged all of them.
struct HeldSegment {
  uint64_t lo = 0;
  uint64_t hi = 0;
  uint64_t records = 0;
  uint64_t samples = 0;
  int64_t bytes = 0;                // encoded record bytes
  Timestamp max_t = kMinTimestamp;  // newest sample
};

// Deleted records below `hi` (and at or after the reader's position).
struct LostRecords {
  uint64_t hi = 0;
  uint64_t batches = 0;
  uint64_t samples = 0;
};

struct ReaderState {
  // Durable: the first position not acknowledged, and what was deleted at
  // or after it before the reader acknowledged it.
  uint64_t pos = 0;
  uint64_t lost_batches = 0;
  uint64_t lost_samples = 0;
  // In memory, while open: the highest `next` Read returned, and the
  // deleted records broken down by where they were (their sum is
  // lost_batches/samples): one entry per record the reader had read
  // before it went (hi = seq + 1), one per run it had not read yet (hi =
  // the first record kept after it), one for what was lost before the
  // reader was opened. A Read from `from` reports the entries above it.
  bool open = false;
  uint64_t read_pos = 0;
  // While a Read is between taking its iterator and publishing read_pos:
  // its `from` (else 0). Records at or after it are not deleted then, or
  // they would be both returned by that Read and counted lost.
  uint64_t reading = 0;
  std::vector<LostRecords> losses;
};

// Shared (shared_ptr) by a DB and its readers, so a reader outliving its
// DB fails cleanly instead of touching freed memory.
struct CommitLogHub {
  vigil::Mutex mu;
  vigil::CondVar cv;
  bool closed ABSL_GUARDED_BY(mu) = false;
  // Calls into the DB in progress (the DB waits for them when closing).
  int active ABSL_GUARDED_BY(mu) = 0;
  // Reads waiting for a commit: CommitBatch signals only if non-zero.
  std::atomic<int> waiters{0};
  // The position the next commit gets, published after its write.
  std::atomic<uint64_t> end{1};

  // Marks a call into the DB; false if the DB is closing.
  bool Enter() {
    vigil::MutexLock l(&mu);
    if (closed) return false;
    ++active;
    return true;
  }
  void Leave() {
    vigil::MutexLock l(&mu);
    if (--active == 0) cv.SignalAll();
  }
};

std::string EncodeReaderRecord(const ReaderState& r);
bool DecodeReaderRecord(std::string_view in, ReaderState* out);
std::string EncodeSegmentRecord(const HeldSegment& s);
bool DecodeSegmentRecord(uint64_t lo, std::string_view in, HeldSegment* out);
// The number of samples of an encoded wal record (false if malformed).
bool WalRecordSamples(std::string_view in, uint64_t* n);

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_COMMIT_LOG_STATE_H_
