// Series appended together (one target's page) have their open chunks cut
// over a spread of sample counts, not all in one commit (Head's CutAt):
// between 3/4 of Options::max_chunk_samples and that many samples.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "storage/db.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::Eq;
using testutil::MustOpen;
using testutil::Query;

constexpr int kSeries = 500;
constexpr Timestamp kStep = 5000;

// One commit per round, every series one sample; returns head_samples
// after each round.
std::vector<uint64_t> AppendRounds(DB* db, int from, int to) {
  std::vector<uint64_t> head;
  for (int r = from; r <= to; ++r) {
    auto app = db->NewAppender();
    for (int i = 0; i < kSeries; ++i) {
      Labels l{{"__name__", "spread"}, {"i", std::to_string(i)}};
      REQUIRE(app->Append(0, l, r * kStep, r + i).ok());
    }
    REQUIRE(app->Commit().ok());
    head.push_back(db->Stats().head_samples);
  }
  return head;
}

std::unique_ptr<DB> OpenWithChunkLimit(const std::string& dir,
                                       uint32_t max_chunk_samples) {
  Options o;
  o.retention_ms = 0;
  o.max_chunk_samples = max_chunk_samples;
  return MustOpen(dir, o);
}

TEST_CASE("chunk cuts of series appended together are spread",
          "[storage][chunk]") {
  testutil::TempDir dir;
  auto db = OpenWithChunkLimit(dir.path(), 120);

  // No chunk holds fewer than 91 samples (120 - 120/4 + 1) when cut...
  auto head = AppendRounds(db.get(), 1, 91);
  CHECK(head.back() == uint64_t{91} * kSeries);
  // ...nor more than 120; in between, the cuts fall in many rounds.
  head = AppendRounds(db.get(), 92, 121);
  int rounds_with_cuts = 0;
  uint64_t prev = uint64_t{91} * kSeries;
  for (uint64_t h : head) {
    if (h < prev + kSeries) ++rounds_with_cuts;
    prev = h;
  }
  CHECK(rounds_with_cuts >= 20);
  // Every series was cut exactly once by round 121: its open chunk holds
  // the samples after the cut, 1 to 30 of them.
  CHECK(head.back() >= uint64_t{1} * kSeries);
  CHECK(head.back() <= uint64_t{30} * kSeries);

  // Nothing is lost across the cuts.
  auto got = Query(db.get(), {Eq("__name__", "spread")});
  REQUIRE(got.size() == size_t{kSeries});
  for (const auto& [labels, samples] : got) {
    REQUIRE(samples.size() == 121);
    CHECK(samples.front().first == kStep);
    CHECK(samples.back().first == 121 * kStep);
  }
}

TEST_CASE("small chunk limits cut exactly", "[storage][chunk]") {
  testutil::TempDir dir;
  auto db = OpenWithChunkLimit(dir.path(), 16);
  auto head = AppendRounds(db.get(), 1, 17);
  CHECK(head[15] == uint64_t{16} * kSeries);
  CHECK(head[16] == uint64_t{1} * kSeries);  // every series cut at once
}

}  // namespace
}  // namespace vigil::storage
