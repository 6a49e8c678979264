// The write health of DBImpl (db_health.h): classifying failed writes,
// resuming RocksDB after them, and DB::Health.
#include "storage/internal/db_health.h"

#include <cerrno>
#include <cstring>

#include "core/clock.h"
#include "fmt/format.h"
#include "storage/internal/db_impl.h"
#include "storage/internal/rocksdb_status.h"

namespace vigil::storage::internal {

namespace {

bool IsDiskFull(const rocksdb::Status& s) {
  // RocksDB's POSIX layer marks ENOSPC with the NoSpace subcode; a
  // background error it stopped writes for keeps it. The text is a
  // fallback for file systems that report it otherwise.
  return s.IsNoSpace() ||
         s.ToString().find(std::strerror(ENOSPC)) != std::string::npos;
}

class ManualNoSpaceRecovery final : public rocksdb::EventListener {
 public:
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason /*reason*/,
                            rocksdb::Status bg_error,
                            bool* auto_recovery) override {
    if (bg_error.IsNoSpace()) *auto_recovery = false;
  }
};

}  // namespace

std::shared_ptr<rocksdb::EventListener> NewManualNoSpaceRecovery() {
  return std::make_shared<ManualNoSpaceRecovery>();
}

bool WriteHealthState::NoteFailure(const absl::Status& s, bool disk_full) {
  (disk_full ? disk_full_ : other_).fetch_add(1, std::memory_order_relaxed);
  vigil::MutexLock l(&mu_);
  const bool was = writable_.exchange(false, std::memory_order_acq_rel);
  error_ = std::string(s.message());
  if (was) since_ms_ = Clock::Real()->NowMs();
  return was;
}

bool WriteHealthState::NoteSuccess() {
  if (writable()) return false;
  vigil::MutexLock l(&mu_);
  const bool was = writable_.exchange(true, std::memory_order_acq_rel);
  if (!was) {
    error_.clear();
    since_ms_ = 0;
  }
  return !was;
}

bool WriteHealthState::ResumeDue(int64_t now_ms) {
  vigil::MutexLock l(&mu_);
  if (now_ms - last_resume_ms_ < kResumeIntervalMs) return false;
  last_resume_ms_ = now_ms;
  return true;
}

WriteHealth WriteHealthState::Get() const {
  WriteHealth h;
  h.writable = writable();
  h.errors_disk_full = disk_full_.load(std::memory_order_relaxed);
  h.errors_other = other_.load(std::memory_order_relaxed);
  vigil::MutexLock l(&mu_);
  if (!h.writable) {
    h.error = error_;
    h.since_ms = since_ms_;
  }
  return h;
}

absl::Status DBImpl::WriteChecked(const rocksdb::WriteOptions& wo,
                                  rocksdb::WriteBatch* batch,
                                  std::string_view context) {
  if (!health_.writable() && health_.ResumeDue(Clock::Real()->NowMs())) {
    // Clears RocksDB's background error (it stops all writes after a
    // failed one) once the cause is gone; fails again, harmlessly, while
    // the disk is still full.
    rocksdb::Status r = db_->Resume();
    if (!r.ok()) {
      logger_->Debug("storage resume failed", {{"err", r.ToString()}});
    }
  }
  rocksdb::Status rs = db_->Write(wo, batch);
  if (rs.ok()) {
    if (health_.NoteSuccess()) {
      logger_->Info("storage is writable again", {{"path", dir_}});
    }
    return absl::OkStatus();
  }
  absl::Status s;
  const bool disk_full = IsDiskFull(rs);
  if (disk_full) {
    s = absl::ResourceExhaustedError(
        fmt::format("{}: disk full: no space left on device in {}: {}", context,
                    dir_, rs.ToString()));
  } else {
    s = FromRocks(rs, fmt::format("{} in {}", context, dir_));
  }
  if (health_.NoteFailure(s, disk_full)) {
    logger_->Error(
        "storage is not writable: ingestion stops until writes "
        "succeed again",
        {{"path", dir_}, {"err", std::string(s.message())}});
  }
  return s;
}

}  // namespace vigil::storage::internal
