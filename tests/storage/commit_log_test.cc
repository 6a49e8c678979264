// The commit-log reader (storage/commit_log.h): registration, Read,
// Acknowledge, SeriesLabels, and the hold across checkpoints and restarts.
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "storage/db.h"
#include "tests/storage/commit_log_testutil.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::CommitBatchAt;
using testutil::MustOpen;
using testutil::ReadAll;
using testutil::Times;

std::vector<Timestamp> CommitLogTimes(Timestamp lo,
                                      Timestamp hi) {  // [lo, hi] s
  std::vector<Timestamp> out;
  for (Timestamp t = lo; t <= hi; ++t) out.push_back(t * 1000);
  return out;
}

TEST_CASE("A new reader starts at the end and reads whole batches in order",
          "[commitlog]") {
  testutil::TempDir tmp;
  auto db = MustOpen(tmp.path());
  CommitBatchAt(db.get(), 1000);  // before the reader: not shipped
  auto r = db->OpenCommitLogReader("rw");
  REQUIRE(r.ok());
  CommitLogReader& rd = **r;
  REQUIRE(rd.name() == "rw");
  const uint64_t start = rd.Position();
  REQUIRE(rd.End() == start);
  auto empty = rd.Read(start, 100, absl::ZeroDuration());
  REQUIRE(empty.ok());
  REQUIRE(empty->batches.empty());
  REQUIRE(empty->next == start);

  for (int i = 2; i <= 6; ++i) CommitBatchAt(db.get(), i * 1000, 3);
  REQUIRE(rd.End() == start + 5);
  // max_samples 4: whole batches until at least 4 samples, so two.
  auto got = rd.Read(start, 4, absl::ZeroDuration());
  REQUIRE(got.ok());
  REQUIRE(got->batches.size() == 2);
  REQUIRE(got->batches[0].seq == start);
  REQUIRE(got->batches[1].seq == start + 1);
  REQUIRE(got->next == start + 2);
  REQUIRE(got->lost_batches == 0);
  const auto& b = got->batches[0];
  REQUIRE(b.samples.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    REQUIRE(b.samples[i].t == 2000);
    REQUIRE(b.samples[i].v == 2000 + double(i));
    auto l = rd.SeriesLabels(b.samples[i].ref);
    REQUIRE(l.ok());
    REQUIRE(l->Get("s") == std::to_string(i));
  }
  // max_samples 0 still returns one batch.
  auto one = rd.Read(got->next, 0, absl::ZeroDuration());
  REQUIRE(one.ok());
  REQUIRE(one->batches.size() == 1);
  REQUIRE(Times(ReadAll(&rd, start)) ==
          std::vector<Timestamp>{2000, 3000, 4000, 5000, 6000});
  // Acknowledging moves the position; going backwards is ignored.
  REQUIRE(rd.Acknowledge(start + 3).ok());
  REQUIRE(rd.Position() == start + 3);
  REQUIRE(rd.Acknowledge(start + 1).ok());
  REQUIRE(rd.Position() == start + 3);
  auto bad = rd.Acknowledge(rd.End() + 1);
  REQUIRE(bad.code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(rd.SeriesLabels(987654).status().code() ==
          absl::StatusCode::kNotFound);
}

TEST_CASE("Unacknowledged records survive checkpoints and restarts",
          "[commitlog]") {
  testutil::TempDir tmp;
  Options o;
  o.checkpoint_wal_bytes = 200;  // a checkpoint every few commits
  uint64_t start;
  {
    auto db = MustOpen(tmp.path(), o);
    auto r = db->OpenCommitLogReader("rw");
    REQUIRE(r.ok());
    start = (*r)->Position();
    for (int i = 1; i <= 40; ++i) CommitBatchAt(db.get(), i * 1000);
    REQUIRE(db->Flush().ok());
    REQUIRE(Times(ReadAll(r->get(), start)) == CommitLogTimes(1, 40));
    REQUIRE((*r)->Acknowledge(start + 10).ok());  // 11 s .. 40 s still held
    REQUIRE(db->Stats().commit_log_held_records >= 30);
  }
  {
    auto db = MustOpen(tmp.path(), o);
    REQUIRE(db->CommitLogReaders() == std::vector<std::string>{"rw"});
    // Registered but not open: still held through checkpoints.
    for (int i = 41; i <= 60; ++i) CommitBatchAt(db.get(), i * 1000);
    REQUIRE(db->Flush().ok());
    auto r = db->OpenCommitLogReader("rw");
    REQUIRE(r.ok());
    REQUIRE((*r)->Position() == start + 10);
    REQUIRE((*r)->End() == start + 60);
    auto all = ReadAll(r->get(), (*r)->Position());
    REQUIRE(Times(all) == CommitLogTimes(11, 60));
    for (size_t i = 0; i < all.size(); ++i)
      REQUIRE(all[i].seq == start + 10 + i);
    // Everything is in the head too, exactly once.
    auto q = testutil::Query(db.get(), {testutil::Eq("__name__", "c")});
    REQUIRE(q.size() == 3);
    REQUIRE(q.begin()->second.size() == 60);
    // Acknowledged to the end: the next checkpoint releases everything.
    REQUIRE((*r)->Acknowledge((*r)->End()).ok());
    REQUIRE(db->Flush().ok());
    REQUIRE(db->Stats().commit_log_held_records == 0);
    REQUIRE(db->Stats().commit_log_held_bytes == 0);
  }
  auto db = MustOpen(tmp.path(), o);
  auto r = db->OpenCommitLogReader("rw");
  REQUIRE(r.ok());
  REQUIRE((*r)->Position() == start + 60);
  REQUIRE(ReadAll(r->get(), start).empty());  // deleted, and not a loss
  CommitBatchAt(db.get(), 61000);
  auto all = ReadAll(r->get(), (*r)->Position());
  REQUIRE(Times(all) == CommitLogTimes(61, 61));
  REQUIRE(all[0].seq == start + 60);  // sequence numbers are never reused
}

TEST_CASE("Two readers: the slower one holds, each resumes at its own place",
          "[commitlog]") {
  testutil::TempDir tmp;
  Options o;
  o.checkpoint_wal_bytes = 200;
  auto db = MustOpen(tmp.path(), o);
  auto fast = db->OpenCommitLogReader("fast");
  auto slow = db->OpenCommitLogReader("slow");
  REQUIRE(fast.ok());
  REQUIRE(slow.ok());
  const uint64_t start = (*fast)->Position();
  for (int i = 1; i <= 30; ++i) {
    CommitBatchAt(db.get(), i * 1000);
    REQUIRE((*fast)->Acknowledge((*fast)->End()).ok());
  }
  REQUIRE(db->Flush().ok());
  REQUIRE(Times(ReadAll(slow->get(), (*slow)->Position())) ==
          CommitLogTimes(1, 30));
  REQUIRE(ReadAll(fast->get(), (*fast)->Position()).empty());
  REQUIRE(db->CommitLogReaders() == std::vector<std::string>{"fast", "slow"});
  // Dropping: refused while open, then the records go at the next checkpoint.
  REQUIRE(db->DropCommitLogReader("slow").code() ==
          absl::StatusCode::kFailedPrecondition);
  slow->reset();
  REQUIRE(db->DropCommitLogReader("slow").ok());
  REQUIRE(db->DropCommitLogReader("unknown").ok());
  REQUIRE(db->CommitLogReaders() == std::vector<std::string>{"fast"});
  REQUIRE(db->Flush().ok());
  REQUIRE(db->Stats().commit_log_held_records == 0);
  REQUIRE(ReadAll(fast->get(), start).empty());
  // Registered again: a new reader, at the end.
  auto again = db->OpenCommitLogReader("slow");
  REQUIRE(again.ok());
  REQUIRE((*again)->Position() == (*again)->End());
}

TEST_CASE("Opening a reader: errors", "[commitlog]") {
  testutil::TempDir tmp;
  {
    auto db = MustOpen(tmp.path());
    REQUIRE(db->OpenCommitLogReader("").status().code() ==
            absl::StatusCode::kInvalidArgument);
    REQUIRE(db->OpenCommitLogReader(std::string(201, 'x')).status().code() ==
            absl::StatusCode::kInvalidArgument);
    REQUIRE(db->OpenCommitLogReader(std::string(200, 'x')).ok());
    auto a = db->OpenCommitLogReader("a");
    REQUIRE(a.ok());
    auto dup = db->OpenCommitLogReader("a");
    REQUIRE(dup.status().code() == absl::StatusCode::kAlreadyExists);
    REQUIRE(dup.status().message().find("\"a\"") != std::string::npos);
    a->reset();
    REQUIRE(db->OpenCommitLogReader("a").ok());  // closed: may open again
    CommitBatchAt(db.get(), 1000);
  }
  Options ro;
  ro.read_only = true;
  {
    auto db = MustOpen(tmp.path(), ro);
    auto r = db->OpenCommitLogReader("a");
    REQUIRE(r.status().code() == absl::StatusCode::kFailedPrecondition);
    REQUIRE(db->DropCommitLogReader("a").code() ==
            absl::StatusCode::kFailedPrecondition);
    REQUIRE(db->CommitLogReaders().size() == 2);  // still listed
  }
  Options nowal;
  nowal.write_wal = false;
  auto db = MustOpen(tmp.path(), nowal);
  REQUIRE(db->OpenCommitLogReader("a").status().code() ==
          absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("Read waits for a commit, up to its deadline", "[commitlog]") {
  testutil::TempDir tmp;
  auto db = MustOpen(tmp.path());
  auto r = db->OpenCommitLogReader("rw");
  REQUIRE(r.ok());
  const uint64_t from = (*r)->Position();
  absl::Time t0 = absl::Now();
  auto none = (*r)->Read(from, 10, absl::Milliseconds(100));
  REQUIRE(none.ok());
  REQUIRE(none->batches.empty());
  REQUIRE(absl::Now() - t0 >= absl::Milliseconds(100));

  std::thread writer([&] {
    absl::SleepFor(absl::Milliseconds(50));
    CommitBatchAt(db.get(), 5000);
  });
  t0 = absl::Now();
  auto got = (*r)->Read(from, 10, absl::Seconds(30));
  writer.join();
  REQUIRE(got.ok());
  REQUIRE(got->batches.size() == 1);
  REQUIRE(absl::Now() - t0 < absl::Seconds(10));
}

TEST_CASE("Closing the DB cancels a waiting Read", "[commitlog]") {
  testutil::TempDir tmp;
  auto db = MustOpen(tmp.path());
  auto r = db->OpenCommitLogReader("rw");
  REQUIRE(r.ok());
  absl::Status result;
  std::thread reader([&] {
    result = (*r)->Read((*r)->End(), 10, absl::Seconds(60)).status();
  });
  absl::SleepFor(absl::Milliseconds(100));
  const absl::Time t0 = absl::Now();
  db.reset();
  reader.join();
  REQUIRE(absl::Now() - t0 < absl::Seconds(10));
  REQUIRE(result.code() == absl::StatusCode::kCancelled);
  // A reader outliving its DB fails cleanly.
  REQUIRE((*r)->Acknowledge(1).code() == absl::StatusCode::kCancelled);
  r->reset();
}

TEST_CASE("SeriesLabels after a restart, from the head", "[commitlog]") {
  testutil::TempDir tmp;
  uint64_t start;
  {
    auto db = MustOpen(tmp.path());
    auto r = db->OpenCommitLogReader("rw");
    REQUIRE(r.ok());
    start = (*r)->Position();
    CommitBatchAt(db.get(), 1000, 5);
  }
  auto db = MustOpen(tmp.path());
  auto r = db->OpenCommitLogReader("rw");
  REQUIRE(r.ok());
  auto all = ReadAll(r->get(), start);
  REQUIRE(all.size() == 1);
  REQUIRE(all[0].samples.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    auto l = (*r)->SeriesLabels(all[0].samples[i].ref);
    REQUIRE(l.ok());
    REQUIRE(l->ToString() ==
            "{__name__=\"c\", s=\"" + std::to_string(i) + "\"}");
  }
}

TEST_CASE("A sample the head rejects at commit is not in the log",
          "[commitlog]") {
  testutil::TempDir tmp;
  auto db = MustOpen(tmp.path());
  auto r = db->OpenCommitLogReader("rw");
  REQUIRE(r.ok());
  const uint64_t start = (*r)->Position();
  Labels x{{"__name__", "x"}}, y{{"__name__", "y"}};
  // Both appenders checked against the same newest sample; b commits
  // first, so a's older sample of x is overtaken.
  auto a = db->NewAppender(), b = db->NewAppender();
  REQUIRE(a->Append(0, x, 2000, 1).ok());
  REQUIRE(a->Append(0, y, 2000, 1).ok());
  REQUIRE(b->Append(0, x, 3000, 2).ok());
  REQUIRE(b->Commit().ok());
  REQUIRE(a->Commit().ok());
  auto all = ReadAll(r->get(), start);
  REQUIRE(all.size() == 2);
  REQUIRE(all[0].samples.size() == 1);
  REQUIRE(all[0].samples[0].t == 3000);
  REQUIRE(all[1].samples.size() == 1);  // only y's
  REQUIRE((*r)->SeriesLabels(all[1].samples[0].ref)->ToString() ==
          "{__name__=\"y\"}");
  // Entirely overtaken: no record at all.
  REQUIRE(a->Append(0, x, 3500, 1).ok());
  REQUIRE(b->Append(0, x, 4000, 1).ok());
  REQUIRE(b->Commit().ok());
  REQUIRE(a->Commit().ok());
  REQUIRE(ReadAll(r->get(), start).size() == 3);
  REQUIRE((*r)->End() == start + 3);
  REQUIRE(db->Stats().out_of_order == 2);
}

}  // namespace
}  // namespace vigil::storage
