// The behavioural parts of the header contracts of storage/db.h,
// appender.h and querier.h: which commits a querier and a SeriesSet see,
// what the listings report, and that the handles cannot be copied.
#include <catch2/catch.hpp>
#include <map>
#include <type_traits>

#include "storage/db.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

static_assert(!std::is_copy_constructible_v<DB> &&
              !std::is_copy_assignable_v<DB> &&
              !std::is_move_constructible_v<DB> &&
              !std::is_move_assignable_v<DB>);
static_assert(!std::is_copy_constructible_v<Appender> &&
              !std::is_copy_assignable_v<Appender> &&
              !std::is_move_constructible_v<Appender> &&
              !std::is_move_assignable_v<Appender>);
static_assert(!std::is_copy_constructible_v<Querier> &&
              !std::is_copy_assignable_v<Querier> &&
              !std::is_move_constructible_v<Querier> &&
              !std::is_move_assignable_v<Querier>);

using testutil::Eq;
using testutil::MustOpen;
using testutil::Samples;

const Labels kUp{{"__name__", "up"}, {"job", "a"}};

void Commit(DB* db, const Labels& l, Timestamp from, Timestamp to) {
  auto app = db->NewAppender();
  for (Timestamp t = from; t <= to; ++t) {
    REQUIRE(app->Append(0, l, t * 1000, double(t)).ok());
  }
  REQUIRE(app->Commit().ok());
}

Samples ContractRead(const Series& s) {
  Samples out;
  auto it = s.Iterator();
  while (it->Next()) out.push_back({it->t(), it->v()});
  REQUIRE(it->err().ok());
  return out;
}

Samples ContractRange(Timestamp from, Timestamp to) {
  Samples out;
  for (Timestamp t = from; t <= to; ++t) out.push_back({t * 1000, double(t)});
  return out;
}

std::map<std::string, Samples> SelectAll(Querier* q) {
  auto set = q->Select({Eq("job", "a")});
  REQUIRE(set.ok());
  std::map<std::string, Samples> out;
  while ((*set)->Next()) {
    out[(*set)->At().labels().ToString()] = ContractRead((*set)->At());
  }
  return out;
}

TEST_CASE("A querier is not a snapshot: each Select sees earlier commits",
          "[contract]") {
  testutil::TempDir tmp;
  auto db = MustOpen(tmp.path());
  Commit(db.get(), kUp, 1, 5);
  auto q = db->NewQuerier(kMinTimestamp, kMaxTimestamp);
  REQUIRE(q.ok());
  CHECK(SelectAll(q->get())[kUp.ToString()] == ContractRange(1, 5));
  // Committed after the querier was created: the next Select sees it.
  Commit(db.get(), kUp, 6, 8);
  Labels other{{"__name__", "other"}, {"job", "a"}};
  Commit(db.get(), other, 1, 2);
  auto seen = SelectAll(q->get());
  CHECK(seen[kUp.ToString()] == ContractRange(1, 8));
  CHECK(seen[other.ToString()] == ContractRange(1, 2));
}

TEST_CASE(
    "A SeriesSet is a snapshot: later commits, cuts and flushes "
    "do not change it",
    "[contract]") {
  testutil::TempDir tmp;
  Options o;
  o.max_chunk_samples = 4;  // so the commits below cut and write chunks
  auto db = MustOpen(tmp.path(), o);
  Commit(db.get(), kUp, 1, 6);
  auto q = db->NewQuerier(kMinTimestamp, kMaxTimestamp);
  REQUIRE(q.ok());
  auto set = (*q)->Select({Eq("job", "a")});
  REQUIRE(set.ok());
  REQUIRE((*set)->Next());
  const Series& s = (*set)->At();
  auto early = s.Iterator();  // created before the commits, read after
  REQUIRE(early->Next());
  CHECK(early->t() == 1000);

  Commit(db.get(), kUp, 7, 20);  // appends to the head chunk, cuts more
  REQUIRE(db->Flush().ok());     // every chunk persisted, head emptied
  Commit(db.get(), kUp, 21, 22);

  CHECK(ContractRead(s) == ContractRange(1, 6));
  Samples rest;
  while (early->Next()) rest.push_back({early->t(), early->v()});
  CHECK(rest == ContractRange(2, 6));
  CHECK_FALSE((*set)->Next());
  // A new Select on the same querier sees all of it.
  CHECK(SelectAll(q->get())[kUp.ToString()] == ContractRange(1, 22));
}

TEST_CASE(
    "Uncommitted and rolled-back samples are never selected, but "
    "their new series are listed by LabelValues",
    "[contract]") {
  testutil::TempDir tmp;
  auto db = MustOpen(tmp.path());
  Commit(db.get(), kUp, 1, 2);
  Labels fresh{{"__name__", "fresh"}, {"job", "a"}};
  auto app = db->NewAppender();
  REQUIRE(app->Append(0, fresh, 1000, 1).ok());
  REQUIRE(app->Append(0, kUp, 3000, 3).ok());
  auto q = db->NewQuerier(kMinTimestamp, kMaxTimestamp);
  REQUIRE(q.ok());
  auto seen = SelectAll(q->get());
  CHECK(seen.size() == 1);
  CHECK(seen[kUp.ToString()] == ContractRange(1, 2));
  auto names = (*q)->LabelValues("__name__", {});
  REQUIRE(names.ok());
  CHECK(*names == std::vector<std::string>{"fresh", "up"});
  app->Rollback();
  CHECK(SelectAll(q->get()).size() == 1);
  // Destroying an appender drops its batch as Rollback does.
  {
    auto app2 = db->NewAppender();
    REQUIRE(app2->Append(0, kUp, 4000, 4).ok());
  }
  CHECK(SelectAll(q->get())[kUp.ToString()] == ContractRange(1, 2));
}

TEST_CASE(
    "ForEachSeries lists every series in ref order, with or without "
    "samples",
    "[contract]") {
  testutil::TempDir tmp;
  auto db = MustOpen(tmp.path());
  Labels b{{"__name__", "b"}, {"job", "a"}};
  Commit(db.get(), b, 1, 1);
  Commit(db.get(), kUp, 1, 1);
  auto app = db->NewAppender();
  Labels pending{{"__name__", "pending"}};
  REQUIRE(app->Append(0, pending, 1000, 1).ok());
  std::vector<std::pair<SeriesRef, std::string>> seen;
  db->ForEachSeries([&](SeriesRef ref, const Labels& l) {
    seen.push_back({ref, l.ToString()});
  });
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].second == b.ToString());
  CHECK(seen[1].second == kUp.ToString());
  CHECK(seen[2].second == pending.ToString());
  CHECK(seen[0].first < seen[1].first);
  CHECK(seen[1].first < seen[2].first);
}

TEST_CASE("ForEachChunk reports every chunk once, in the head or persisted",
          "[contract]") {
  testutil::TempDir tmp;
  Options o;
  o.max_chunk_samples = 4;
  auto db = MustOpen(tmp.path(), o);
  Commit(db.get(), kUp, 1, 10);  // chunks [1..4], [5..8] cut, [9, 10] open
  auto collect = [&](Timestamp mint, Timestamp maxt) {
    std::vector<ChunkMeta> out;
    REQUIRE(db->ForEachChunk(mint, maxt, [&](const ChunkMeta& c) {
                out.push_back(c);
              }).ok());
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return a.min_time < b.min_time;
    });
    return out;
  };
  auto all = collect(kMinTimestamp, kMaxTimestamp);
  REQUIRE(all.size() == 3);
  uint64_t samples = 0;
  for (const auto& c : all) {
    samples += c.num_samples;
    CHECK(c.encoded_bytes > 0);
  }
  CHECK(samples == 10);
  CHECK(all[0].min_time == 1000);
  CHECK(all[0].max_time == 4000);
  CHECK(all[0].num_samples == 4);
  CHECK_FALSE(all[0].in_head);  // written at the commit that cut it
  CHECK(all[2].min_time == 9000);
  CHECK(all[2].in_head);
  // Only chunks overlapping the range.
  auto mid = collect(4500, 8000);
  REQUIRE(mid.size() == 1);
  CHECK(mid[0].min_time == 5000);
  CHECK(collect(11000, 20000).empty());
  REQUIRE(db->Flush().ok());
  auto flushed = collect(kMinTimestamp, kMaxTimestamp);
  REQUIRE(flushed.size() == 3);
  for (const auto& c : flushed) CHECK_FALSE(c.in_head);
}

}  // namespace
}  // namespace vigil::storage

TEST_CASE("Snapshot writes a copy that opens with every committed sample",
          "[storage][snapshot]") {
  vigil::testutil::TempDir dir;
  auto db = vigil::storage::DB::Open({}, dir.Sub("db"));
  REQUIRE(db.ok());
  vigil::Labels l{{"__name__", "x"}, {"a", "1"}};
  {
    auto app = (*db)->NewAppender();
    for (int i = 0; i < 100; ++i) {
      REQUIRE(app->Append(0, l, 1000 + i * 1000, i).ok());
    }
    REQUIRE(app->Commit().ok());
  }
  REQUIRE((*db)->Snapshot(dir.Sub("snap")).ok());
  CHECK((*db)->Snapshot(dir.Sub("snap")).code() ==
        absl::StatusCode::kAlreadyExists);
  // Later commits are not in the copy.
  {
    auto app = (*db)->NewAppender();
    REQUIRE(app->Append(0, l, 200000, 7).ok());
    REQUIRE(app->Commit().ok());
  }
  vigil::storage::Options ro;
  ro.read_only = true;
  auto copy = vigil::storage::DB::Open(ro, dir.Sub("snap"));
  REQUIRE(copy.ok());
  auto q = (*copy)->NewQuerier(vigil::kMinTimestamp, vigil::kMaxTimestamp);
  REQUIRE(q.ok());
  auto m = vigil::Matcher::Make(vigil::MatchType::kEqual, "__name__", "x");
  auto set = (*q)->Select({*m});
  REQUIRE(set.ok());
  REQUIRE((*set)->Next());
  auto it = (*set)->At().Iterator();
  int n = 0;
  vigil::Timestamp last = 0;
  while (it->Next()) {
    ++n;
    last = it->t();
  }
  CHECK(n == 100);
  CHECK(last == 100000);
}
