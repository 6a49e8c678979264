// The commit-log reader of storage/commit_log.h: registration, Read,
// Acknowledge and SeriesLabels over the `wal` family. What is held for the
// readers, and dropped, is in commit_log_hold.cc.
#include <algorithm>
#include <memory>
#include <string>

#include "absl/cleanup/cleanup.h"
#include "core/status_macros.h"
#include "fmt/format.h"
#include "rocksdb/db.h"
#include "storage/internal/db_impl.h"
#include "storage/internal/keys.h"
#include "storage/internal/rocksdb_status.h"

namespace vigil::storage::internal {

namespace {

std::string ReaderKey(std::string_view name) {
  return kClReaderPrefix + std::string(name);
}

class DBCommitLogReader : public CommitLogReader {
 public:
  DBCommitLogReader(DBImpl* db, std::shared_ptr<CommitLogHub> hub,
                    std::string name, uint64_t pos)
      : db_(db), hub_(std::move(hub)), name_(std::move(name)), pos_(pos) {}
  ~DBCommitLogReader() override {
    if (!hub_->Enter()) return;  // the DB is gone
    db_->CommitLogClosed(name_);
    hub_->Leave();
  }

  const std::string& name() const override { return name_; }

  uint64_t Position() const override {
    if (!hub_->Enter()) return pos_;
    pos_ = db_->CommitLogPosition(name_);
    hub_->Leave();
    return pos_;
  }

  uint64_t End() const override { return hub_->end.load(); }

  absl::StatusOr<CommitLogRead> Read(uint64_t from, size_t max_samples,
                                     absl::Duration wait) override {
    if (wait > absl::ZeroDuration() && hub_->end.load() <= from) {
      const absl::Time deadline = absl::Now() + wait;
      vigil::MutexLock l(&hub_->mu);
      // Counted before `end` is checked again, so a commit publishing
      // `end` after that check sees the waiter and signals.
      hub_->waiters.fetch_add(1);
      while (!hub_->closed && hub_->end.load() <= from) {
        // WaitWithTimeout, not WaitWithDeadline: core/sync.h's TSAN CondVar
        // has only the former (a past deadline times out at once in both).
        if (hub_->cv.WaitWithTimeout(&hub_->mu, deadline - absl::Now())) break;
      }
      hub_->waiters.fetch_sub(1);
    }
    if (!hub_->Enter()) {
      return absl::CancelledError(
          fmt::format("commit log {}: the database is closing", name_));
    }
    auto r = db_->CommitLogReadImpl(name_, from, max_samples);
    hub_->Leave();
    return r;
  }

  absl::StatusOr<Labels> SeriesLabels(SeriesRef ref) override {
    if (!hub_->Enter()) {
      return absl::CancelledError(
          fmt::format("commit log {}: the database is closing", name_));
    }
    auto r = db_->LabelsOfRef(ref);
    hub_->Leave();
    return r;
  }

  absl::Status Acknowledge(uint64_t next) override {
    if (!hub_->Enter()) {
      return absl::CancelledError(
          fmt::format("commit log {}: the database is closing", name_));
    }
    absl::Status s = db_->CommitLogAck(name_, next);
    hub_->Leave();
    return s;
  }

 private:
  DBImpl* const db_;
  const std::shared_ptr<CommitLogHub> hub_;
  const std::string name_;
  mutable uint64_t pos_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CommitLogReader>> DBImpl::OpenCommitLogReader(
    std::string_view name) {
  if (name.empty() || name.size() > 200) {
    return absl::InvalidArgumentError(fmt::format(
        "commit log: reader name must be 1 to 200 bytes, got {} bytes",
        name.size()));
  }
  if (options_.read_only) {
    return absl::FailedPreconditionError(
        "commit log: the database is open read-only");
  }
  if (!options_.write_wal) {
    return absl::FailedPreconditionError(
        "commit log: there is none with Options::write_wal off");
  }
  vigil::MutexLock l(&commit_mu_);
  VIGIL_RETURN_IF_ERROR(EnsureCommitLogFamily());
  vigil::MutexLock cl(&cl_mu_);
  auto it = readers_.find(name);
  if (it != readers_.end() && it->second.open) {
    return absl::AlreadyExistsError(
        fmt::format("commit log: reader \"{}\" is already open", name));
  }
  if (it == readers_.end()) {
    // New: it starts at the end of the log. Held from now on, durably.
    ReaderState r;
    r.pos = next_wal_seq_;
    rocksdb::WriteOptions wo;
    wo.sync = true;
    VIGIL_RETURN_IF_ERROR(
        FromRocks(db_->Put(wo, cf_commitlog_.load(), ReaderKey(name),
                           EncodeReaderRecord(r)),
                  "commit log: register reader"));
    it = readers_.emplace(std::string(name), r).first;
    logger_->Info(
        "commit log: registered reader",
        {{"name", std::string(name)}, {"position", std::to_string(r.pos)}});
  }
  ReaderState& r = it->second;
  r.open = true;
  r.read_pos = r.pos;
  r.losses.clear();
  if (r.lost_batches > 0)
    r.losses.push_back({first_seq_, r.lost_batches, r.lost_samples});
  return std::unique_ptr<CommitLogReader>(
      new DBCommitLogReader(this, hub_, std::string(name), r.pos));
}

absl::Status DBImpl::DropCommitLogReader(std::string_view name) {
  if (options_.read_only) {
    return absl::FailedPreconditionError(
        "commit log: the database is open read-only");
  }
  vigil::MutexLock cl(&cl_mu_);
  auto it = readers_.find(name);
  if (it == readers_.end()) return absl::OkStatus();
  if (it->second.open) {
    return absl::FailedPreconditionError(fmt::format(
        "commit log: reader \"{}\" is open; close it before dropping it",
        name));
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;
  VIGIL_RETURN_IF_ERROR(
      FromRocks(db_->Delete(wo, cf_commitlog_.load(), ReaderKey(name)),
                "commit log: drop reader"));
  readers_.erase(it);
  logger_->Info("commit log: dropped reader", {{"name", std::string(name)}});
  return absl::OkStatus();
}

std::vector<std::string> DBImpl::CommitLogReaders() {
  vigil::MutexLock cl(&cl_mu_);
  std::vector<std::string> out;
  out.reserve(readers_.size());
  for (const auto& [name, r] : readers_) out.push_back(name);
  return out;
}

void DBImpl::CommitLogClosed(const std::string& name) {
  vigil::MutexLock cl(&cl_mu_);
  auto it = readers_.find(name);
  if (it == readers_.end()) return;
  it->second.open = false;
  it->second.losses.clear();
  it->second.read_pos = it->second.pos;
}

uint64_t DBImpl::CommitLogPosition(const std::string& name) {
  vigil::MutexLock cl(&cl_mu_);
  auto it = readers_.find(name);
  return it == readers_.end() ? 0 : it->second.pos;
}

absl::StatusOr<CommitLogRead> DBImpl::CommitLogReadImpl(const std::string& name,
                                                        uint64_t from,
                                                        size_t max_samples) {
  CommitLogRead out;
  out.next = from;
  // Only what is published: a record being committed is written before
  // `end` moves past it, so Read never returns a `next` beyond End().
  const std::string end_key = WalKey(hub_->end.load());
  const rocksdb::Slice upper(end_key);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it;
  {
    // The iterator and the loss counts are taken together: a deletion
    // writes its batch and counts under cl_mu_.
    vigil::MutexLock cl(&cl_mu_);
    auto r = readers_.find(name);
    if (r == readers_.end()) {
      return absl::FailedPreconditionError(
          fmt::format("commit log: reader \"{}\" is not registered", name));
    }
    it.reset(db_->NewIterator(ro, cf_wal_));
    r->second.reading = std::max<uint64_t>(from, 1);
    if (from < first_seq_) {
      for (const auto& l : r->second.losses) {
        if (l.hi <= from) continue;
        out.lost_batches += l.batches;
        out.lost_samples += l.samples;
      }
      // Nothing read: the next read starts past what is gone.
      out.next = first_seq_;
    }
  }
  // However the read ends, it no longer pins the records it may return.
  absl::Cleanup unpin = [this, &name, &out] {
    vigil::MutexLock cl(&cl_mu_);
    auto r = readers_.find(name);
    if (r == readers_.end()) return;
    r->second.read_pos = std::max(r->second.read_pos, out.next);
    r->second.reading = 0;
  };
  std::vector<WalSample> samples;
  size_t total = 0;
  for (it->Seek(WalKey(from)); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key();
    const uint64_t seq = k.size() == 8 ? GetBE64(k.data()) : 0;
    samples.clear();
    if (seq == 0 || !DecodeWalRecord(std::string_view(it->value().data(),
                                                      it->value().size()),
                                     &samples)) {
      return absl::DataLossError(fmt::format(
          "commit log: wal record {}: checksum mismatch or malformed record",
          seq));
    }
    CommittedBatch& b = out.batches.emplace_back();
    b.seq = seq;
    b.samples.reserve(samples.size());
    for (const auto& w : samples) b.samples.push_back({w.ref, w.t, w.v});
    total += samples.size();
    out.next = seq + 1;
    if (total >= max_samples) break;
  }
  VIGIL_RETURN_IF_ERROR(FromRocks(it->status(), "commit log: read wal"));
  return out;
}

absl::Status DBImpl::CommitLogAck(const std::string& name, uint64_t next) {
  const uint64_t end = hub_->end.load();
  if (next > end) {
    return absl::InvalidArgumentError(fmt::format(
        "commit log {}: acknowledged position {} is beyond the end of the "
        "log ({})",
        name, next, end));
  }
  vigil::MutexLock cl(&cl_mu_);
  auto it = readers_.find(name);
  if (it == readers_.end()) {
    return absl::FailedPreconditionError(
        fmt::format("commit log: reader \"{}\" is not registered", name));
  }
  ReaderState& r = it->second;
  if (next <= r.pos) return absl::OkStatus();
  // Losses below `next` were delivered (read before they went) or
  // reported (by the Read that returned a `next` past them).
  ReaderState updated = r;
  updated.pos = next;
  updated.read_pos = std::max(r.read_pos, next);
  updated.losses.clear();
  updated.lost_batches = updated.lost_samples = 0;
  for (const auto& l : r.losses) {
    if (l.hi <= next) continue;
    updated.losses.push_back(l);
    updated.lost_batches += l.batches;
    updated.lost_samples += l.samples;
  }
  VIGIL_RETURN_IF_ERROR(
      FromRocks(db_->Put(rocksdb::WriteOptions(), cf_commitlog_.load(),
                         ReaderKey(name), EncodeReaderRecord(updated)),
                "commit log: acknowledge"));
  r = std::move(updated);
  return absl::OkStatus();
}

absl::StatusOr<Labels> DBImpl::LabelsOfRef(SeriesRef ref) {
  {
    EpochManager::Guard pin = head_->Pin();
    if (MemSeries* s = head_->GetByRef(ref)) return head_->LabelsOf(*s);
  }
  std::string v;
  rocksdb::Status rs =
      db_->Get(rocksdb::ReadOptions(), cf_series_, SeriesKey(ref), &v);
  if (rs.IsNotFound()) {
    return absl::NotFoundError(
        fmt::format("commit log: unknown series {}", ref));
  }
  VIGIL_RETURN_IF_ERROR(FromRocks(rs, "commit log: read series"));
  Labels labels;
  if (!DecodeLabels(v, &labels)) {
    return absl::DataLossError(fmt::format(
        "series record {}: checksum mismatch or malformed record", ref));
  }
  return labels;
}

}  // namespace vigil::storage::internal
