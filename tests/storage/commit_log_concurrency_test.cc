// The commit log under load: appenders, checkpoints and a reader at once;
// and a process killed mid-commit (kill -9), reopened.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "storage/db.h"
#include "tests/storage/commit_log_testutil.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::MustOpen;

TEST_CASE("Appenders, checkpoints and a reader concurrently",
          "[commitlog][concurrency]") {
  testutil::TempDir tmp;
  Options o;
  o.checkpoint_wal_bytes = 4096;
  auto db = MustOpen(tmp.path(), o);
  auto r = db->OpenCommitLogReader("rw");
  REQUIRE(r.ok());
  constexpr int kThreads = 4, kBatches = 500;
  std::atomic<bool> failed{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < kThreads; ++w) {
    writers.emplace_back([&, w] {
      auto app = db->NewAppender();
      for (int i = 1; i <= kBatches; ++i) {
        for (int s = 0; s < 4; ++s) {
          Labels l{{"__name__", "w"},
                   {"s", std::to_string(s)},
                   {"writer", std::to_string(w)}};
          if (!app->Append(0, l, i * 1000, double(i)).ok()) failed = true;
        }
        if (!app->Commit().ok()) failed = true;
      }
    });
  }
  std::atomic<bool> done{false};
  std::thread flusher([&] {
    while (!done) {
      if (!db->Flush().ok()) failed = true;
      absl::SleepFor(absl::Milliseconds(5));
    }
  });
  // The reader: every batch once, in order, each writer's batches in
  // their commit order, acknowledging as it goes.
  std::map<std::string, int> last;  // writer labels → last i seen
  uint64_t from = (*r)->Position(), batches = 0, expect_seq = from;
  while (batches < uint64_t(kThreads * kBatches) && !failed) {
    auto rd = (*r)->Read(from, 50, absl::Seconds(10));
    REQUIRE(rd.ok());
    REQUIRE(rd->lost_batches == 0);
    REQUIRE(!rd->batches.empty());
    for (const auto& b : rd->batches) {
      REQUIRE(b.seq == expect_seq);
      ++expect_seq;
      REQUIRE(b.samples.size() == 4);
      auto l = (*r)->SeriesLabels(b.samples[0].ref);
      REQUIRE(l.ok());
      const std::string writer = std::string(l->Get("writer"));
      const int i = int(b.samples[0].t / 1000);
      REQUIRE(i == last[writer] + 1);
      last[writer] = i;
      ++batches;
    }
    from = rd->next;
    REQUIRE((*r)->Acknowledge(from).ok());
  }
  for (auto& t : writers) t.join();
  done = true;
  flusher.join();
  REQUIRE(!failed);
  REQUIRE(batches == uint64_t(kThreads * kBatches));
  REQUIRE(last.size() == size_t(kThreads));
  for (const auto& [w, i] : last) REQUIRE(i == kBatches);
  REQUIRE(db->Flush().ok());
  REQUIRE(db->Stats().commit_log_held_records == 0);
}

TEST_CASE("A slow reader under the hold cap: read + lost == committed",
          "[commitlog][concurrency]") {
  testutil::TempDir tmp;
  Options o;
  o.checkpoint_wal_bytes = 2048;
  o.commit_log_max_hold_bytes = 8192;
  auto db = MustOpen(tmp.path(), o);
  auto r = db->OpenCommitLogReader("slow");
  REQUIRE(r.ok());
  const uint64_t start = (*r)->Position();
  constexpr int kBatches = 3000;
  std::atomic<bool> failed{false};
  std::thread writer([&] {
    for (int i = 1; i <= kBatches; ++i) testutil::CommitBatchAt(db.get(), i);
  });
  // Reads a little at a time, acknowledging only every other read, so
  // deletions hit both unread and read-but-unacknowledged records.
  uint64_t from = start, read = 0, lost = 0, lost_samples = 0, last_seq = 0;
  for (int n = 0; from < start + kBatches; ++n) {
    auto rd = (*r)->Read(from, 6, absl::Seconds(10));
    REQUIRE(rd.ok());
    lost += rd->lost_batches;
    lost_samples += rd->lost_samples;
    for (const auto& b : rd->batches) {
      REQUIRE(b.seq > last_seq);
      last_seq = b.seq;
      REQUIRE(b.samples.size() == 3);
      ++read;
    }
    // A read may report only a loss: every record from `from` on was
    // deleted by the hold cap and the writer's next commit is not in yet.
    // It must still move on.
    REQUIRE((!rd->batches.empty() || rd->lost_batches > 0));
    REQUIRE(rd->next > from);
    if (n % 2 == 1) REQUIRE((*r)->Acknowledge(rd->next).ok());
    from = rd->next;
    if (n % 16 == 0) absl::SleepFor(absl::Milliseconds(1));
  }
  writer.join();
  REQUIRE(!failed);
  REQUIRE(last_seq == start + kBatches - 1);
  REQUIRE(read + lost == uint64_t(kBatches));
  REQUIRE(lost_samples == 3 * lost);
}

TEST_CASE("After kill -9 every committed batch is readable from the position",
          "[commitlog][crash]") {
  testutil::TempDir tmp;
  int commits[2], acks[2];
  REQUIRE(pipe(commits) == 0);
  REQUIRE(pipe(acks) == 0);
  Options o;
  o.checkpoint_wal_bytes = 16 << 10;  // checkpoints while it runs
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(commits[0]);
    close(acks[0]);
    auto db = DB::Open(o, tmp.path());
    if (!db.ok()) _exit(1);
    auto r = (*db)->OpenCommitLogReader("rw");
    if (!r.ok() || (*r)->Position() != 1) _exit(2);
    // A reader acknowledging what it read, now and then.
    std::thread reader([&] {
      uint64_t from = 1;
      for (int n = 0;; ++n) {
        auto rd = (*r)->Read(from, 64, absl::Seconds(1));
        if (!rd.ok()) _exit(3);
        from = rd->next;
        if (n % 3 == 0) {
          if (!(*r)->Acknowledge(from).ok()) _exit(4);
          if (write(acks[1], &from, sizeof(from)) != sizeof(from)) _exit(5);
        }
      }
    });
    auto app = (*db)->NewAppender();
    for (int64_t i = 1;; ++i) {
      for (int s = 0; s < 10; ++s) {
        Labels l{{"__name__", "k"}, {"s", std::to_string(s)}};
        if (!app->Append(0, l, i * 1000, double(i)).ok()) _exit(6);
      }
      if (!app->Commit().ok()) _exit(7);
      if (write(commits[1], &i, sizeof(i)) != sizeof(i)) _exit(8);
    }
  }
  close(commits[1]);
  close(acks[1]);
  int64_t committed = 0, x;
  while (committed < 3000 && read(commits[0], &x, sizeof(x)) == sizeof(x))
    committed = x;
  kill(pid, SIGKILL);
  while (read(commits[0], &x, sizeof(x)) == sizeof(x)) committed = x;
  uint64_t acked = 0, a;
  while (read(acks[0], &a, sizeof(a)) == sizeof(a)) acked = a;
  int status;
  waitpid(pid, &status, 0);
  close(commits[0]);
  close(acks[0]);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(committed >= 3000);
  REQUIRE(acked > 1);

  auto db = MustOpen(tmp.path(), o);
  auto r = db->OpenCommitLogReader("rw");
  REQUIRE(r.ok());
  const uint64_t pos = (*r)->Position();
  REQUIRE(pos >= acked);  // acknowledged before it was reported
  REQUIRE(pos <= (*r)->End());
  REQUIRE((*r)->End() >= uint64_t(committed) + 1);
  storage::CommitLogRead last;
  auto all = testutil::ReadAll(r->get(), pos, &last);
  REQUIRE(last.lost_batches == 0);
  // Batch i (1-based) is seq i: every one from the position on is there,
  // whole, in order.
  REQUIRE(all.size() == (*r)->End() - pos);
  for (size_t j = 0; j < all.size(); ++j) {
    const uint64_t seq = pos + j;
    REQUIRE(all[j].seq == seq);
    REQUIRE(all[j].samples.size() == 10);
    for (const auto& s : all[j].samples) {
      REQUIRE(s.t == int64_t(seq) * 1000);
      REQUIRE(s.v == double(seq));
    }
  }
  if (!all.empty()) REQUIRE(all.back().seq >= uint64_t(committed));
  // And the head has them all, once.
  auto q = testutil::Query(db.get(), {testutil::Eq("__name__", "k")});
  REQUIRE(q.size() == 10);
  for (const auto& [l, s] : q) REQUIRE(int64_t(s.size()) >= committed);
}

}  // namespace
}  // namespace vigil::storage
