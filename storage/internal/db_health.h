// -----------------------------------------------------------------------------
// File: db_health.h
// -----------------------------------------------------------------------------
//
// WriteHealthState: whether DBImpl's writes currently succeed, what the
// last failure was, and how many failed by reason (DB::Health). Writes go
// through DBImpl::WriteChecked (db_health.cc), which classifies a failure
// (ENOSPC -> ResourceExhausted naming the directory) and, while the DB is
// not writable, asks RocksDB to resume at most once per kResumeIntervalMs
// before writing, so ingestion comes back by itself once space returns.
// Thread-safe.
#ifndef VIGIL_STORAGE_INTERNAL_DB_HEALTH_H_
#define VIGIL_STORAGE_INTERNAL_DB_HEALTH_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "core/sync.h"
#include "rocksdb/listener.h"
#include "storage/db.h"

namespace vigil::storage::internal {

class WriteHealthState {
 public:
  // How often a DB that is not writable retries RocksDB's Resume().
  static constexpr int64_t kResumeIntervalMs = 1000;

  bool writable() const { return writable_.load(std::memory_order_acquire); }
  // Records a failed write; returns true if it just became unwritable.
  bool NoteFailure(const absl::Status& s, bool disk_full);
  // Records a successful write; returns true if it was unwritable.
  bool NoteSuccess();
  // True (and remembers `now_ms`) if a resume attempt is due.
  bool ResumeDue(int64_t now_ms);
  WriteHealth Get() const;

 private:
  std::atomic<bool> writable_{true};
  std::atomic<uint64_t> disk_full_{0}, other_{0};
  mutable vigil::Mutex mu_;
  std::string error_ ABSL_GUARDED_BY(mu_);
  int64_t since_ms_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t last_resume_ms_ ABSL_GUARDED_BY(mu_) = 0;
};

// A RocksDB listener that turns off RocksDB's own recovery from a full
// disk: its SstFileManager waits for as much free space as the largest
// write buffer (64 MiB), which a small disk never has, and while it waits
// it refuses DB::Resume. WriteChecked resumes instead, as soon as a write
// can succeed.
std::shared_ptr<rocksdb::EventListener> NewManualNoSpaceRecovery();

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_DB_HEALTH_H_
