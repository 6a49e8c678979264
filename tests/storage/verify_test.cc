// storage::Verify and storage::Repair (verify.h) on real directories with
// bytes flipped in table files, the MANIFEST, RocksDB's log and single
// records: verify names what is damaged, repair leaves a directory that
// opens, answers for everything undamaged and reports exactly what it lost.
#include "storage/verify.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "rocksdb/db.h"
#include "storage/db.h"
#include "tests/storage/raw_family.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

namespace fs = std::filesystem;

constexpr int kVerifySeries = 50;
constexpr int kVerifySamples = 1200;         // 5 h: three chunks per series
constexpr Timestamp kStart = 1767225600000;  // 2026-01-01
constexpr Timestamp kStep = 15000;

void AppendVerifySamples(DB* db, int first, int count) {
  auto app = db->NewAppender();
  for (int s = 0; s < kVerifySeries; ++s) {
    for (int i = first; i < first + count; ++i) {
      REQUIRE(app->Append(0, {{"__name__", "m"}, {"s", std::to_string(s)}},
                          kStart + i * kStep, std::sin(i * 0.1 + s) * 1000)
                  .ok());
    }
  }
  REQUIRE(app->Commit().ok());
}

void FillVerifyDir(const std::string& dir, bool flush) {
  auto db = *DB::Open({}, dir);
  AppendVerifySamples(db.get(), 0, kVerifySamples);
  if (flush) {
    REQUIRE(db->Flush().ok());
    REQUIRE(db->Compact().ok());
  }
}

// Every sample, by the value of label "s"; fails the test on a read error.
std::map<std::string, std::vector<Timestamp>> ReadAllVerify(
    const std::string& dir) {
  auto db = DB::Open({}, dir);
  INFO(db.status().ToString());
  REQUIRE(db.ok());
  auto q = (*db)->NewQuerier(kMinTimestamp, kMaxTimestamp);
  REQUIRE(q.ok());
  auto set = (*q)->Select({*Matcher::Make(MatchType::kEqual, "__name__", "m")});
  REQUIRE(set.ok());
  std::map<std::string, std::vector<Timestamp>> out;
  while ((*set)->Next()) {
    auto& ts = out[std::string((*set)->At().labels().Get("s"))];
    auto it = (*set)->At().Iterator();
    while (it->Next()) ts.push_back(it->t());
    INFO(it->err().ToString());
    REQUIRE(it->err().ok());
  }
  return out;
}

// Rewrites the first value of `cf` through RocksDB: the last byte flipped,
// or cut in half.
void DamageRecord(const std::string& dir, const std::string& cf,
                  bool truncate) {
  testutil::RawFamily f(dir, cf);
  auto [key, value] = f.First();
  if (truncate) {
    value.resize(value.size() / 2);
  } else {
    value[value.size() - 1] ^= 1;
  }
  f.Put(key, value);
  f.Flush();
}

// Flips one byte at `fraction` of the file's size.
void FlipByte(const fs::path& file, double fraction) {
  auto size = fs::file_size(file);
  REQUIRE(size > 0);
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  auto at = std::streamoff(double(size) * fraction);
  f.seekg(at);
  char c;
  f.get(c);
  f.seekp(at);
  f.put(char(c ^ 0x5a));
}

std::vector<fs::path> FilesEnding(const std::string& dir,
                                  const std::string& suffix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (n.size() >= suffix.size() &&
        n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Describe(const VerifyReport& r) {
  std::string out;
  for (const auto& d : r.damage) out += FormatDamage(d) + "\n";
  return out;
}

size_t Lines(const std::string& file) {
  std::ifstream in(file);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST_CASE("Verify finds nothing in an undamaged directory and repair leaves it",
          "[repair]") {
  testutil::TempDir tmp;
  FillVerifyDir(tmp.path(), /*flush=*/true);
  auto r = Verify(tmp.path());
  REQUIRE(r.ok());
  INFO(Describe(*r));
  CHECK(r->clean());
  CHECK(r->records.at("series") == kVerifySeries);
  CHECK(r->records.at("chunks") > 0);
  CHECK(r->table_files > 0);
  auto rep = Repair(tmp.path());
  REQUIRE(rep.ok());
  CHECK(rep->aside_dir.empty());
  CHECK(rep->lost.empty());
  CHECK(!fs::exists(tmp.Sub("damaged")));
}

TEST_CASE("Verify refuses what is not a data directory", "[repair]") {
  testutil::TempDir tmp;
  auto r = Verify(tmp.Sub("nope"));
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  r = Verify(tmp.path());
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(r.status().message()).find("CURRENT") != std::string::npos);
}

TEST_CASE("Verify refuses a directory a DB has open", "[repair]") {
  testutil::TempDir tmp;
  auto db = *DB::Open({}, tmp.path());
  auto r = Verify(tmp.path());
  CHECK(r.status().code() == absl::StatusCode::kUnavailable);
}

TEST_CASE("A damaged chunk record is named, moved aside and reported lost",
          "[repair]") {
  testutil::TempDir tmp;
  FillVerifyDir(tmp.path(), /*flush=*/true);
  DamageRecord(tmp.path(), "chunks", /*truncate=*/false);
  auto r = Verify(tmp.path());
  REQUIRE(r.ok());
  INFO(Describe(*r));
  REQUIRE(r->damage.size() == 1);
  const Damage& d = r->damage[0];
  CHECK(d.family == "chunks");
  CHECK(d.kind == "record");
  CHECK(d.record.find("chunk of series 1 starting at") != std::string::npos);
  CHECK(d.labels.Get("s") == "0");
  CHECK(d.has_time);
  CHECK(d.min_time == kStart);

  auto rep = Repair(tmp.path());
  REQUIRE(rep.ok());
  INFO(Describe(rep->after));
  CHECK(rep->after.clean());
  REQUIRE(rep->lost.size() == 1);
  CHECK(rep->lost[0].labels.Get("s") == "0");
  CHECK(Lines(rep->aside_dir + "/records.jsonl") == 1);
  CHECK(fs::exists(rep->aside_dir + "/report.json"));
  // Everything else is there; series 0 lost exactly the chunk's samples,
  // which start at its key and end, at most, at the end of its day.
  auto all = ReadAllVerify(tmp.path());
  REQUIRE(all.size() == size_t(kVerifySeries));
  for (int s = 1; s < kVerifySeries; ++s)
    CHECK(all[std::to_string(s)].size() == size_t(kVerifySamples));
  const auto& left = all["0"];
  CHECK(left.size() < size_t(kVerifySamples));
  CHECK(left.front() > kStart);
  for (Timestamp t : left) CHECK(t > rep->lost[0].max_time);
  // The removed chunk held the samples up to the first one left: the
  // chunk range cuts at 2 h, so 480 samples at most.
  CHECK(left.front() - kStart ==
        Timestamp(kVerifySamples - left.size()) * kStep);
}

TEST_CASE("A damaged series record makes its data dangling, all moved aside",
          "[repair]") {
  testutil::TempDir tmp;
  FillVerifyDir(tmp.path(), /*flush=*/true);
  DamageRecord(tmp.path(), "series", /*truncate=*/true);
  auto r = Verify(tmp.path());
  REQUIRE(r.ok());
  INFO(Describe(*r));
  REQUIRE(r->damage.size() >= 2);
  CHECK(r->damage[0].record == "series record 1");
  size_t dangling = 0;
  for (const auto& d : r->damage) {
    if (d.kind == "dangling") {
      ++dangling;
      CHECK(d.ref == 1);
      CHECK(d.reason.find("damaged series record") != std::string::npos);
    }
  }
  CHECK(dangling >= 1);
  auto rep = Repair(tmp.path());
  REQUIRE(rep.ok());
  CHECK(rep->after.clean());
  CHECK(rep->lost.size() == r->damage.size());
  auto all = ReadAllVerify(tmp.path());
  CHECK(all.size() == size_t(kVerifySeries - 1));
  CHECK(all.count("0") == 0);
  for (int s = 1; s < kVerifySeries; ++s)
    CHECK(all[std::to_string(s)].size() == size_t(kVerifySamples));
}

TEST_CASE("A damaged head record is replaced, keeping appends in order",
          "[repair]") {
  testutil::TempDir tmp;
  FillVerifyDir(tmp.path(),
                /*flush=*/false);  // closing checkpoints open chunks
  DamageRecord(tmp.path(), "head", /*truncate=*/false);
  auto r = Verify(tmp.path());
  REQUIRE(r.ok());
  INFO(Describe(*r));
  REQUIRE(r->damage.size() == 1);
  CHECK(r->damage[0].record == "head record of series 1");
  CHECK(r->damage[0].labels.Get("s") == "0");
  auto rep = Repair(tmp.path());
  REQUIRE(rep.ok());
  CHECK(rep->after.clean());
  auto all = ReadAllVerify(tmp.path());
  for (int s = 1; s < kVerifySeries; ++s)
    CHECK(all[std::to_string(s)].size() == size_t(kVerifySamples));
  // Series 0 kept its persisted chunks, lost its open one.
  const auto& left = all["0"];
  REQUIRE(!left.empty());
  CHECK(left.size() < size_t(kVerifySamples));
  CHECK(left.front() == kStart);
  // An append at or before its newest persisted sample is still refused.
  auto db = *DB::Open({}, tmp.path());
  auto app = db->NewAppender();
  CHECK(!app->Append(0, {{"__name__", "m"}, {"s", "0"}}, left.back(), -1).ok());
}

TEST_CASE("A flipped byte in a table file is located and repaired",
          "[repair]") {
  testutil::TempDir tmp;
  FillVerifyDir(tmp.path(), /*flush=*/true);
  auto tables = FilesEnding(tmp.path(), ".sst");
  REQUIRE(!tables.empty());
  fs::path biggest = *std::max_element(
      tables.begin(), tables.end(), [](const fs::path& a, const fs::path& b) {
        return fs::file_size(a) < fs::file_size(b);
      });
  FlipByte(biggest, 0.3);
  auto r = Verify(tmp.path());
  REQUIRE(r.ok());
  INFO(Describe(*r));
  REQUIRE(!r->clean());
  CHECK(r->damage[0].kind == "file");
  CHECK(r->damage[0].file == biggest.filename().string());
  CHECK(r->damage[0].family == "chunks");

  auto rep = Repair(tmp.path());
  INFO(rep.status().ToString());
  REQUIRE(rep.ok());
  INFO(Describe(rep->after));
  CHECK(rep->after.clean());
  CHECK(fs::exists(rep->aside_dir + "/files/" + biggest.filename().string()));
  auto all = ReadAllVerify(tmp.path());
  // What was readable around the damaged block was kept: the series that
  // lost samples are a few neighbours in key (ref) order, the rest whole.
  std::vector<int> incomplete;
  size_t n = 0;
  for (int s = 0; s < kVerifySeries; ++s) {
    size_t have =
        all.count(std::to_string(s)) ? all[std::to_string(s)].size() : 0;
    n += have;
    if (have < size_t(kVerifySamples)) incomplete.push_back(s);
  }
  REQUIRE(!incomplete.empty());
  CHECK(incomplete.size() <= 5);
  CHECK(size_t(incomplete.back() - incomplete.front() + 1) ==
        incomplete.size());
  CHECK(n > size_t(kVerifySeries * kVerifySamples) * 9 / 10);
  // The report names that range: keys after a chunk of series (ref) a and
  // before one of series b, with a <= the first incomplete ref.
  const std::string& rec = rep->lost.at(0).record;
  CHECK(rec.find("keys after chunk of series") != std::string::npos);
  // And, per series, the time window those keys held: every missing
  // sample lies in its series' window; complete series have none.
  for (int s = 0; s < kVerifySeries; ++s) {
    const Damage* window = nullptr;
    for (const auto& d : rep->lost) {
      if (d.family == "chunks" && d.labels.Get("s") == std::to_string(s))
        window = &d;
    }
    const auto& have = all[std::to_string(s)];
    if (have.size() == size_t(kVerifySamples)) continue;
    INFO("series " << s);
    REQUIRE(window != nullptr);
    REQUIRE(window->has_time);
    for (int i = 0; i < kVerifySamples; ++i) {
      Timestamp t = kStart + i * kStep;
      if (!std::binary_search(have.begin(), have.end(), t)) {
        CHECK(t >= window->min_time);
        CHECK(t <= window->max_time);
      }
    }
  }
}

TEST_CASE("A flipped byte in the MANIFEST is repaired without losing data",
          "[repair]") {
  testutil::TempDir tmp;
  FillVerifyDir(tmp.path(), /*flush=*/true);
  auto manifests = FilesEnding(tmp.path(), "");
  fs::path manifest;
  for (const auto& p : manifests) {
    if (p.filename().string().rfind("MANIFEST-", 0) == 0) manifest = p;
  }
  REQUIRE(!manifest.empty());
  FlipByte(manifest, 0.5);
  auto open = DB::Open({}, tmp.path());
  INFO(open.status().ToString());
  REQUIRE(!open.ok());
  CHECK(open.status().code() == absl::StatusCode::kDataLoss);
  auto r = Verify(tmp.path());
  REQUIRE(r.ok());
  INFO(Describe(*r));
  REQUIRE(!r->clean());
  CHECK(r->damage[0].file == manifest.filename().string());
  auto rep = Repair(tmp.path());
  INFO(rep.status().ToString());
  REQUIRE(rep.ok());
  CHECK(rep->after.clean());
  auto all = ReadAllVerify(tmp.path());
  REQUIRE(all.size() == size_t(kVerifySeries));
  for (const auto& [s, ts] : all) CHECK(ts.size() == size_t(kVerifySamples));
}

TEST_CASE("A flipped byte in RocksDB's log is an error naming it, repaired",
          "[repair]") {
  testutil::TempDir tmp;
  const std::string crashed = tmp.Sub("crashed");
  // No chunk is cut (300 samples): the log holds only the commits' WAL
  // records, so the damaged stretch loses samples. A damaged cut chunk
  // would lose nothing, its samples being in earlier WAL records too.
  Options o;
  o.max_chunk_samples = 480;
  {
    auto db = *DB::Open(o, tmp.Sub("live"));
    AppendVerifySamples(db.get(), 0, 100);
    REQUIRE(db->Flush().ok());
    // Ten commits only in RocksDB's log: what a crash now would leave.
    for (int b = 0; b < 10; ++b)
      AppendVerifySamples(db.get(), 100 + b * 20, 20);
    fs::copy(tmp.Sub("live"), crashed, fs::copy_options::recursive);
  }
  auto logs = FilesEnding(crashed, ".log");
  REQUIRE(!logs.empty());
  fs::path log = logs.back();
  FlipByte(log, 0.5);
  auto open = DB::Open({}, crashed);
  INFO(open.status().ToString());
  REQUIRE(!open.ok());
  CHECK(open.status().code() == absl::StatusCode::kDataLoss);
  CHECK(std::string(open.status().message()).find(log.filename().string()) !=
        std::string::npos);
  open = absl::UnknownError("closed");
  auto r = Verify(crashed);
  REQUIRE(r.ok());
  INFO(Describe(*r));
  REQUIRE(!r->clean());
  CHECK(r->damage[0].file == log.filename().string());
  CHECK(r->damage[0].reason.find("dropping") != std::string::npos);
  auto rep = Repair(crashed);
  INFO(rep.status().ToString());
  REQUIRE(rep.ok());
  INFO(Describe(rep->after));
  CHECK(rep->after.clean());
  REQUIRE(!rep->lost.empty());
  CHECK(rep->lost[0].file == log.filename().string());
  auto all = ReadAllVerify(crashed);
  REQUIRE(all.size() == size_t(kVerifySeries));
  for (const auto& [s, ts] : all) {
    // The flushed samples, and the commits before the damaged stretch.
    CHECK(ts.size() >= 100);
    CHECK(ts.size() < 300);
  }
}

TEST_CASE("Damaged state values are found with the caller's checker",
          "[repair]") {
  testutil::TempDir tmp;
  {
    auto db = *DB::Open({}, tmp.path());
    REQUIRE(db->PutState("alerting/silence/a", "{\"id\":\"a\"}").ok());
    REQUIRE(db->PutState("alerting/silence/b", "{\"id\"").ok());
  }
  VerifyOptions vo;
  vo.check_state = [](std::string_view, std::string_view v) {
    return !v.empty() && v.back() == '}'
               ? absl::OkStatus()
               : absl::DataLossError("not a JSON object");
  };
  auto r = Verify(tmp.path());
  REQUIRE(r.ok());
  CHECK(r->clean());
  CHECK(!r->notes.empty());  // says the values were not decoded
  r = Verify(tmp.path(), vo);
  REQUIRE(r.ok());
  REQUIRE(r->damage.size() == 1);
  CHECK(r->damage[0].record == "state record \"alerting/silence/b\"");
  RepairOptions ro;
  ro.verify = vo;
  auto rep = Repair(tmp.path(), ro);
  REQUIRE(rep.ok());
  CHECK(rep->after.clean());
  auto db = *DB::Open({}, tmp.path());
  std::vector<std::string> keys;
  REQUIRE(db->ScanState("", [&](std::string_view k, std::string_view) {
              keys.emplace_back(k);
            }).ok());
  CHECK(keys == std::vector<std::string>{"alerting/silence/a"});
}

TEST_CASE("A damaged commit-log reader record is named", "[repair]") {
  testutil::TempDir tmp;
  {
    auto db = *DB::Open({}, tmp.path());
    AppendVerifySamples(db.get(), 0, 10);
    auto reader = db->OpenCommitLogReader("remote-a");
    REQUIRE(reader.ok());
  }
  // The first key of the family is "checkpoint" (8 bytes): cut in half,
  // it is malformed whatever its value.
  DamageRecord(tmp.path(), "commitlog", /*truncate=*/true);
  auto r = Verify(tmp.path());
  REQUIRE(r.ok());
  INFO(Describe(*r));
  REQUIRE(r->damage.size() == 1);
  CHECK(r->damage[0].family == "commitlog");
  CHECK(r->damage[0].record == "commitlog record \"checkpoint\"");
  auto rep = Repair(tmp.path());
  REQUIRE(rep.ok());
  CHECK(rep->after.clean());
  auto all = ReadAllVerify(tmp.path());
  REQUIRE(all.size() == size_t(kVerifySeries));
  for (const auto& [s, ts] : all) CHECK(ts.size() == 10);
}

}  // namespace
}  // namespace vigil::storage
