// The commit log's bounds: retention and commit_log_max_hold_bytes delete
// held records and the readers are told what they lost; replay starts at
// the checkpoint; a damaged held record is DataLoss.
#include <stdio.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/logger.h"
#include "rocksdb/db.h"
#include "storage/db.h"
#include "storage/internal/keys.h"
#include "tests/storage/commit_log_testutil.h"
#include "tests/storage/db_testutil.h"
#include "tests/storage/raw_family.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::CommitBatchAt;
using testutil::MustOpen;
using testutil::ReadAll;

constexpr int64_t kDay = 86400000;

Options SmallCheckpoints() {
  Options o;
  o.checkpoint_wal_bytes = 200;  // a checkpoint (segment) every few commits
  o.retention_ms = kDay;
  return o;
}

TEST_CASE("Retention deletes held records and the reader is told",
          "[commitlog]") {
  testutil::TempDir tmp;
  const Options o = SmallCheckpoints();
  uint64_t start, half;
  const Timestamp t0 = 10 * kDay;
  {
    auto db = MustOpen(tmp.path(), o);
    auto r = db->OpenCommitLogReader("rw");
    REQUIRE(r.ok());
    start = (*r)->Position();
    for (int i = 0; i < 40; ++i) CommitBatchAt(db.get(), t0 + i * 1000);
    REQUIRE(db->Flush().ok());
    // Read everything, acknowledge half: the other half is "in flight".
    REQUIRE(ReadAll(r->get(), start).size() == 40);
    half = start + 20;
    REQUIRE((*r)->Acknowledge(half).ok());
    REQUIRE(db->Flush().ok());
    REQUIRE(db->Stats().commit_log_held_records >= 20);

    // Nothing is old enough yet.
    REQUIRE(db->ApplyRetention(t0 + 40 * 1000).ok());
    REQUIRE(db->Stats().commit_log_lost_samples == 0);
    // Two days later every held record is outside the retention.
    REQUIRE(db->ApplyRetention(t0 + 2 * kDay).ok());
    REQUIRE(db->Stats().commit_log_held_records == 0);
    REQUIRE(db->Stats().commit_log_lost_samples == 20 * 3);
    // Resuming from the acknowledged position: the 20 are reported lost.
    auto rd = (*r)->Read(half, 100, absl::ZeroDuration());
    REQUIRE(rd.ok());
    REQUIRE(rd->batches.empty());
    REQUIRE(rd->lost_batches == 20);
    REQUIRE(rd->lost_samples == 60);
    // From where it had read to, nothing it had not seen was lost.
    rd = (*r)->Read(start + 40, 100, absl::ZeroDuration());
    REQUIRE(rd.ok());
    REQUIRE(rd->lost_batches == 0);
  }
  // Not acknowledged past the loss: reported again after a restart.
  auto db = MustOpen(tmp.path(), o);
  auto r = db->OpenCommitLogReader("rw");
  REQUIRE(r.ok());
  REQUIRE((*r)->Position() == half);
  CommitBatchAt(db.get(), t0 + 2 * kDay);
  storage::CommitLogRead last;
  auto all = ReadAll(r->get(), half, &last);
  REQUIRE(all.size() == 1);
  REQUIRE(all[0].seq == start + 40);
  REQUIRE(last.lost_batches == 20);
  REQUIRE(last.lost_samples == 60);
  // Acknowledged past it: forgotten.
  REQUIRE((*r)->Acknowledge(all[0].seq + 1).ok());
  r->reset();
  db.reset();
  db = MustOpen(tmp.path(), o);
  r = db->OpenCommitLogReader("rw");
  REQUIRE(r.ok());
  auto rd = (*r)->Read(half, 100, absl::ZeroDuration());
  REQUIRE(rd.ok());
  REQUIRE(rd->lost_batches == 0);
}

TEST_CASE("The hold cap deletes the oldest held records, counted exactly",
          "[commitlog]") {
  testutil::TempDir tmp;
  Options o = SmallCheckpoints();
  o.commit_log_max_hold_bytes = 600;
  auto db = MustOpen(tmp.path(), o);
  auto r = db->OpenCommitLogReader("stalled");
  REQUIRE(r.ok());
  auto live = db->OpenCommitLogReader("live");
  REQUIRE(live.ok());
  const uint64_t begin = (*r)->Position();
  const int n = 200;
  for (int i = 0; i < n; ++i) {
    CommitBatchAt(db.get(), kDay + i * 1000);
    REQUIRE((*live)->Acknowledge((*live)->End()).ok());
    // The stalled one acknowledged two batches, in its first segment.
    if (i == 2) REQUIRE((*r)->Acknowledge(begin + 2).ok());
  }
  const uint64_t start = begin + 2;
  REQUIRE(db->Flush().ok());
  const auto st = db->Stats();
  REQUIRE(st.commit_log_held_bytes <= 600);
  REQUIRE(st.commit_log_held_records > 0);
  REQUIRE(st.commit_log_readers == 2);
  // What is left plus what is reported lost is exactly what was committed,
  // and what is left is the newest.
  storage::CommitLogRead last;
  auto all = ReadAll(r->get(), start, &last);
  REQUIRE(!all.empty());
  REQUIRE(last.lost_batches > 0);
  REQUIRE(all.size() + last.lost_batches == size_t(n - 2));
  REQUIRE(last.lost_samples == 3 * last.lost_batches);
  REQUIRE(all.front().seq == start + last.lost_batches);
  REQUIRE(all.back().seq == begin + n - 1);
  REQUIRE(st.commit_log_lost_samples == last.lost_samples);
  // The reader that kept up lost nothing.
  storage::CommitLogRead live_last;
  REQUIRE(ReadAll(live->get(), (*live)->Position(), &live_last).empty());
  REQUIRE(live_last.lost_batches == 0);
  // Not acknowledged: after a restart the same losses are reported.
  r->reset();
  live->reset();
  db.reset();
  db = MustOpen(tmp.path(), o);
  r = db->OpenCommitLogReader("stalled");
  REQUIRE(r.ok());
  REQUIRE((*r)->Position() == start);
  storage::CommitLogRead again;
  REQUIRE(ReadAll(r->get(), start, &again).size() == all.size());
  REQUIRE(again.lost_batches == last.lost_batches);
  REQUIRE(again.lost_samples == last.lost_samples);
}

TEST_CASE("Open replays from the checkpoint, not from the held records",
          "[commitlog]") {
  testutil::TempDir tmp;
  const Options o = SmallCheckpoints();
  uint64_t start;
  {
    auto db = MustOpen(tmp.path(), o);
    auto r = db->OpenCommitLogReader("rw");
    REQUIRE(r.ok());
    start = (*r)->Position();
    for (int i = 0; i < 100; ++i) CommitBatchAt(db.get(), kDay + i * 1000);
  }
  char* buf = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&buf, &len);
  REQUIRE(out);
  {
    Logger log(out);
    Options lo = o;
    lo.logger = &log;
    auto db = MustOpen(tmp.path(), lo);
    std::fflush(out);
    // Every record is still held (nothing acknowledged), none replayed.
    REQUIRE(std::string(buf, len).find("replayed WAL") == std::string::npos);
    REQUIRE(db->Stats().commit_log_held_records == 100);
    auto q = testutil::Query(db.get(), {testutil::Eq("__name__", "c")});
    REQUIRE(q.size() == 3);
    REQUIRE(q.begin()->second.size() == 100);
    auto r = db->OpenCommitLogReader("rw");
    REQUIRE(r.ok());
    REQUIRE(ReadAll(r->get(), start).size() == 100);
  }
  std::fclose(out);
  std::free(buf);
}

// Flips a bit in the value of wal record `seq` through RocksDB directly.
void DamageWal(const std::string& dir, uint64_t seq) {
  testutil::RawFamily wal(dir, internal::kCfWal);
  const std::string key = internal::WalKey(seq);
  std::string v = wal.Get(key);
  v[v.size() - 1] ^= 1;
  wal.Put(key, v);
}

TEST_CASE("A damaged held record is DataLoss naming it", "[commitlog]") {
  testutil::TempDir tmp;
  uint64_t start;
  {
    auto db = MustOpen(tmp.path(), SmallCheckpoints());
    auto r = db->OpenCommitLogReader("rw");
    REQUIRE(r.ok());
    start = (*r)->Position();
    for (int i = 0; i < 10; ++i) CommitBatchAt(db.get(), kDay + i * 1000);
  }
  DamageWal(tmp.path(), start + 4);
  // Checkpointed, so the open does not read it; the reader does.
  auto db = MustOpen(tmp.path(), SmallCheckpoints());
  auto r = db->OpenCommitLogReader("rw");
  REQUIRE(r.ok());
  auto ok = (*r)->Read(start, 3, absl::ZeroDuration());
  REQUIRE(ok.ok());
  REQUIRE(ok->batches.size() == 1);
  auto bad = (*r)->Read(start, 1000, absl::ZeroDuration());
  REQUIRE(bad.status().code() == absl::StatusCode::kDataLoss);
  INFO(bad.status().ToString());
  REQUIRE(bad.status().message().find(
              "wal record " + std::to_string(start + 4)) != std::string::npos);
  // Past it, reading goes on.
  auto after = (*r)->Read(start + 5, 1000, absl::ZeroDuration());
  REQUIRE(after.ok());
  REQUIRE(after->batches.size() == 5);
}

}  // namespace
}  // namespace vigil::storage
