// What the storage keeps for commit-log readers (commit_log_state.h): the
// `commitlog` family, the held segments of checkpointed `wal` records, and
// their deletion by retention or the hold cap, counted as each reader's
// losses.
#include <algorithm>
#include <string>

#include "core/status_macros.h"
#include "fmt/format.h"
#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "storage/internal/coding.h"
#include "storage/internal/db_impl.h"
#include "storage/internal/keys.h"
#include "storage/internal/rocksdb_status.h"

namespace vigil::storage::internal {

std::string EncodeReaderRecord(const ReaderState& r) {
  std::string p;
  PutVarint(&p, r.pos);
  PutVarint(&p, r.lost_batches);
  PutVarint(&p, r.lost_samples);
  return Frame(p);
}

bool DecodeReaderRecord(std::string_view in, ReaderState* out) {
  std::string_view p;
  return Unframe(in, &p) && GetVarint(&p, &out->pos) &&
         GetVarint(&p, &out->lost_batches) &&
         GetVarint(&p, &out->lost_samples) && p.empty();
}

std::string EncodeSegmentRecord(const HeldSegment& s) {
  std::string p;
  PutVarint(&p, s.hi);
  PutVarint(&p, s.records);
  PutVarint(&p, s.samples);
  PutVarint(&p, uint64_t(s.bytes));
  PutOrderedI64(&p, s.max_t);
  return Frame(p);
}

bool DecodeSegmentRecord(uint64_t lo, std::string_view in, HeldSegment* out) {
  std::string_view p;
  uint64_t bytes;
  if (!Unframe(in, &p) || !GetVarint(&p, &out->hi) ||
      !GetVarint(&p, &out->records) || !GetVarint(&p, &out->samples) ||
      !GetVarint(&p, &bytes) || p.size() != 8) {
    return false;
  }
  out->lo = lo;
  out->bytes = int64_t(bytes);
  out->max_t = GetOrderedI64(p.data());
  return out->hi > lo;
}

bool WalRecordSamples(std::string_view in, uint64_t* n) {
  std::string_view p;
  return Unframe(in, &p) && GetVarint(&p, n);
}

namespace {

std::string SegmentKey(uint64_t lo) {
  std::string k = kClSegmentPrefix;
  PutBE64(&k, lo);
  return k;
}

}  // namespace

absl::Status DBImpl::LoadCommitLog() {
  rocksdb::ColumnFamilyHandle* cf = cf_commitlog_.load();
  if (cf == nullptr) return absl::OkStatus();
  vigil::MutexLock l(&commit_mu_);
  vigil::MutexLock cl(&cl_mu_);
  std::string v;
  rocksdb::Status rs =
      db_->Get(rocksdb::ReadOptions(), cf, kClCheckpointKey, &v);
  if (!rs.IsNotFound()) {
    VIGIL_RETURN_IF_ERROR(FromRocks(rs, "read commitlog/checkpoint"));
    if (v.size() != 8) {
      return absl::DataLossError(
          "commitlog/checkpoint: malformed record (want 8 bytes)");
    }
    checkpoint_seq_ = GetBE64(v.data());
  }
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view k(it->key().data(), it->key().size());
    std::string_view val(it->value().data(), it->value().size());
    if (k.starts_with(kClSegmentPrefix) && k.size() == 9) {
      HeldSegment s;
      const uint64_t lo = GetBE64(k.data() + 1);
      if (!DecodeSegmentRecord(lo, val, &s) ||
          (!held_.empty() && held_.back().hi != lo) || s.hi > checkpoint_seq_) {
        return absl::DataLossError(fmt::format(
            "commitlog segment {}: checksum mismatch or malformed record", lo));
      }
      held_.push_back(s);
    } else if (k.starts_with(kClReaderPrefix)) {
      ReaderState r;
      if (!DecodeReaderRecord(val, &r)) {
        return absl::DataLossError(fmt::format(
            "commitlog reader \"{}\": checksum mismatch or malformed record",
            k.substr(1)));
      }
      readers_.emplace(std::string(k.substr(1)), r);
    }
  }
  VIGIL_RETURN_IF_ERROR(FromRocks(it->status(), "read commitlog"));
  int64_t bytes = 0;
  uint64_t records = 0;
  for (const auto& s : held_) {
    bytes += s.bytes;
    records += s.records;
  }
  held_bytes_ = bytes;
  held_records_ = records;
  return absl::OkStatus();
}

absl::Status DBImpl::EnsureCommitLogFamily() {
  if (cf_commitlog_.load() != nullptr) return absl::OkStatus();
  rocksdb::ColumnFamilyHandle* h = nullptr;
  VIGIL_RETURN_IF_ERROR(
      FromRocks(db_->CreateColumnFamily(CommitLogOptions(), kCfCommitLog, &h),
                "create commitlog family"));
  handles_.push_back(h);
  cf_commitlog_.store(h);
  // Every wal record below it was deleted (no family: no reader held one).
  std::string v;
  PutBE64(&v, checkpoint_seq_);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return FromRocks(db_->Put(wo, h, kClCheckpointKey, v),
                   "write commitlog/checkpoint");
}

absl::Status DBImpl::DropHeldSegments(size_t n, const char* why) {
  vigil::MutexLock cl(&cl_mu_);
  n = std::min(n, held_.size());
  // A Read in progress may return any record at or after its `from`:
  // those wait for the next deletion, or they would be read and lost.
  for (const auto& [name, r] : readers_) {
    while (r.reading != 0 && n > 0 && held_[n - 1].hi > r.reading) --n;
  }
  if (n == 0) return absl::OkStatus();
  rocksdb::ColumnFamilyHandle* cf = cf_commitlog_.load();
  const uint64_t new_first = n < held_.size() ? held_[n].lo : checkpoint_seq_;
  rocksdb::WriteBatch batch;
  struct Update {
    ReaderState* r;
    ReaderState next;
  };
  std::vector<Update> updates;
  uint64_t lost_total = 0;
  for (auto& [name, r] : readers_) {
    if (r.pos >= new_first) continue;
    Update u{&r, r};
    const uint64_t read_pos = r.open ? r.read_pos : r.pos;
    LostRecords unread{new_first, 0, 0};  // not read yet: one run
    for (size_t i = 0; i < n; ++i) {
      const HeldSegment& seg = held_[i];
      const uint64_t lo = std::max(seg.lo, r.pos);
      if (lo >= seg.hi) continue;
      if (lo == seg.lo && read_pos <= seg.lo) {
        unread.batches += seg.records;
        unread.samples += seg.samples;
        continue;
      }
      // Part of the segment, or records the reader has read: one by one.
      const std::string lo_key = WalKey(lo), hi_key = WalKey(seg.hi);
      rocksdb::Slice upper(hi_key);
      rocksdb::ReadOptions ro;
      ro.iterate_upper_bound = &upper;
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf_wal_));
      for (it->Seek(lo_key); it->Valid(); it->Next()) {
        if (it->key().size() != 8) continue;
        const uint64_t seq = GetBE64(it->key().data());
        uint64_t k = 0;  // a damaged record still counts as a lost batch
        if (!WalRecordSamples(
                std::string_view(it->value().data(), it->value().size()), &k))
          k = 0;
        if (seq < read_pos) {
          if (r.open) u.next.losses.push_back({seq + 1, 1, k});
          ++u.next.lost_batches;
          u.next.lost_samples += k;
        } else {
          ++unread.batches;
          unread.samples += k;
        }
      }
      VIGIL_RETURN_IF_ERROR(FromRocks(it->status(), "commit log: count loss"));
    }
    u.next.lost_batches += unread.batches;
    u.next.lost_samples += unread.samples;
    if (r.open && unread.batches > 0) u.next.losses.push_back(unread);
    lost_total += u.next.lost_samples - r.lost_samples;
    batch.Put(cf, kClReaderPrefix + name, EncodeReaderRecord(u.next));
    updates.push_back(std::move(u));
  }
  uint64_t records = 0;
  for (size_t i = 0; i < n; ++i) {
    batch.Delete(cf, SegmentKey(held_[i].lo));
    records += held_[i].records;
  }
  const std::string wal_lo = WalKey(0), wal_hi = WalKey(new_first);
  batch.DeleteRange(cf_wal_, wal_lo, wal_hi);
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync_commits;
  VIGIL_RETURN_IF_ERROR(
      FromRocks(db_->Write(wo, &batch), "commit log: delete held records"));
  for (auto& u : updates) *u.r = std::move(u.next);
  first_seq_ = new_first;
  int64_t bytes = 0;
  for (size_t i = 0; i < n; ++i) bytes += held_[i].bytes;
  held_.erase(held_.begin(), held_.begin() + n);
  held_bytes_ -= bytes;
  held_records_ -= records;
  lost_samples_total_ += lost_total;
  logger_->Warn("commit log: deleted records held for readers",
                {{"why", why},
                 {"records", std::to_string(records)},
                 {"bytes", std::to_string(bytes)},
                 {"readers_affected", std::to_string(updates.size())},
                 {"samples_lost", std::to_string(lost_total)}});
  const rocksdb::Slice slo(wal_lo), shi(wal_hi);
  rocksdb::DeleteFilesInRange(db_.get(), cf_wal_, &slo, &shi, false)
      .PermitUncheckedError();
  return absl::OkStatus();
}

absl::Status DBImpl::EnforceHoldCap() {
  const int64_t cap = options_.commit_log_max_hold_bytes;
  if (cap <= 0) return absl::OkStatus();
  int64_t bytes = held_bytes_.load();
  size_t n = 0;
  while (n < held_.size() && bytes > cap) bytes -= held_[n++].bytes;
  return DropHeldSegments(n, "commit_log_max_hold_bytes");
}

}  // namespace vigil::storage::internal
