// Helpers shared by the commit-log tests: committing numbered batches and
// reading a reader's log to the end.
#ifndef VIGIL_TESTS_STORAGE_COMMIT_LOG_TESTUTIL_H_
#define VIGIL_TESTS_STORAGE_COMMIT_LOG_TESTUTIL_H_

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "storage/commit_log.h"
#include "storage/db.h"

namespace vigil::testutil {

// Commits one batch: `n` samples at time t, one per series c{"s"=i},
// value t + i.
inline void CommitBatchAt(storage::DB* db, Timestamp t, int n = 3) {
  auto app = db->NewAppender();
  for (int i = 0; i < n; ++i) {
    Labels l{{"__name__", "c"}, {"s", std::to_string(i)}};
    auto r = app->Append(0, l, t, double(t + i));
    INFO(r.status().ToString());
    REQUIRE(r.ok());
  }
  REQUIRE(app->Commit().ok());
}

// Every batch from `from` to the end of the log, without waiting.
inline std::vector<storage::CommittedBatch> ReadAll(
    storage::CommitLogReader* r, uint64_t from,
    storage::CommitLogRead* last = nullptr) {
  std::vector<storage::CommittedBatch> out;
  uint64_t lost_b = 0, lost_s = 0;
  for (;;) {
    auto rd = r->Read(from, 1000, absl::ZeroDuration());
    INFO(rd.status().ToString());
    REQUIRE(rd.ok());
    lost_b += rd->lost_batches;
    lost_s += rd->lost_samples;
    if (rd->batches.empty()) {
      if (last) {
        *last = *rd;
        last->lost_batches = lost_b;
        last->lost_samples = lost_s;
      }
      return out;
    }
    for (auto& b : rd->batches) out.push_back(std::move(b));
    from = rd->next;
  }
}

// The timestamps of the batches (each batch's first sample).
inline std::vector<Timestamp> Times(
    const std::vector<storage::CommittedBatch>& bs) {
  std::vector<Timestamp> out;
  for (const auto& b : bs)
    out.push_back(b.samples.empty() ? -1 : b.samples[0].t);
  return out;
}

}  // namespace vigil::testutil

#endif  // VIGIL_TESTS_STORAGE_COMMIT_LOG_TESTUTIL_H_
