// Restoring the head at open: head records carry their open chunk's encoder
// state, so a restarted DB appends to the stored bytes and ends up with
// exactly the records of a DB that never restarted; records without a
// state (older directories) or with one that does not fit are re-encoded.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "rocksdb/db.h"
#include "storage/db.h"
#include "storage/internal/coding.h"
#include "storage/internal/db_impl.h"
#include "tests/storage/db_testutil.h"
#include "tests/storage/raw_family.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using internal::DecodeHeadRecord;
using internal::EncodeHeadRecord;
using internal::OpenChunkState;
using testutil::MustOpen;
using testutil::RawFamily;

constexpr int kSeries = 60;
constexpr int kSamples = 300;

struct Sample {
  Timestamp t;
  double v;
};

// kSeries series of different kinds (decimal gauges, counters, XOR floats,
// specials, scale raises), kSamples irregular samples each.
std::vector<std::vector<Sample>> Data() {
  std::mt19937_64 rng(42);
  std::vector<std::vector<Sample>> out(kSeries);
  for (int s = 0; s < kSeries; ++s) {
    Timestamp t = 1767225600000 + s;
    for (int i = 0; i < kSamples; ++i) {
      t += 15000 + static_cast<int64_t>(rng() % 2000) - 1000;
      double v = 0;
      switch (s % 6) {
        case 0:
          v = std::round(std::sin(i / 9.0) * 1000) / 100;
          break;
        case 1:
          v = static_cast<double>(i * 7 + s);
          break;
        case 2:
          v = std::sin(i + s) / 3;
          break;
        case 3:
          v = i % 11 == 0 ? std::nan("") : i * 0.25;
          break;
        case 4:
          v = i < 150 ? i : i + 0.125;
          break;
        default:
          v = i % 13 == 0 ? std::bit_cast<double>(kStaleNaNBits)
                          : 1.0 / (i + 1);
      }
      out[s].push_back({t, v});
    }
  }
  return out;
}

Labels SeriesLabels(int s) {
  return Labels{{"__name__", "m"}, {"s", std::to_string(s)}};
}

// Appends samples [from, to) of every series (series s stops at
// to - s % 7, so the series are cut at different sample counts).
void Append(DB* db, const std::vector<std::vector<Sample>>& data, int from,
            int to) {
  auto app = db->NewAppender();
  for (int s = 0; s < kSeries; ++s) {
    const int end = std::min(kSamples, to - (to < kSamples ? s % 7 : 0));
    const int begin = from - (from > 0 && from < kSamples ? s % 7 : 0);
    for (int i = begin; i < end; ++i) {
      REQUIRE(app->Append(0, SeriesLabels(s), data[s][i].t, data[s][i].v).ok());
    }
  }
  REQUIRE(app->Commit().ok());
}

std::map<std::string, std::string> HeadRecords(const std::string& dir) {
  return RawFamily(dir, "head").All();
}

// How many head records hold a state (and, if `chunks`, how many hold a
// non-empty open chunk).
int WithState(const std::map<std::string, std::string>& records,
              int* chunks = nullptr) {
  int n = 0;
  if (chunks) *chunks = 0;
  for (const auto& [k, v] : records) {
    Timestamp t;
    double last;
    std::string_view chunk;
    bool has_state = false;
    REQUIRE(DecodeHeadRecord(v, &t, &last, &chunk, nullptr, &has_state));
    n += has_state;
    if (chunks && !chunk.empty()) ++*chunks;
  }
  return n;
}

// Rewrites every head record through `rewrite(last_t, last_v, chunk,
// state)`.
template <typename F>
void RewriteHead(const std::string& dir, F rewrite) {
  RawFamily head(dir, "head");
  for (const auto& [k, v] : head.All()) {
    Timestamp t;
    double last;
    std::string_view chunk;
    OpenChunkState state;
    bool has_state = false;
    REQUIRE(DecodeHeadRecord(v, &t, &last, &chunk, &state, &has_state));
    REQUIRE(has_state == !chunk.empty());
    head.Put(k, rewrite(t, last, chunk, state));
  }
}

// The log lines of an open of `dir`.
std::string OpenLog(const std::string& dir,
                    const std::vector<std::vector<Sample>>* append = nullptr,
                    int from = 0, int to = 0) {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  {
    Logger logger(f);
    Options o;
    o.logger = &logger;
    auto db = MustOpen(dir, o);
    if (append) Append(db.get(), *append, from, to);
  }
  std::string out;
  std::rewind(f);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

// What a kill -9 leaves: samples 0 to 100 appended in `dir` and closed
// (head records), then 100 to 200 appended (in the WAL) and the live
// directory copied. Returns the copy's path, under `copy`.
std::string Crashed(const std::vector<std::vector<Sample>>& data,
                    const testutil::TempDir& dir,
                    const testutil::TempDir& copy) {
  {
    auto db = MustOpen(dir.path());
    Append(db.get(), data, 0, 100);
  }
  auto db = MustOpen(dir.path());
  Append(db.get(), data, 100, 200);
  std::filesystem::copy(dir.path(), copy.Sub("crashed"),
                        std::filesystem::copy_options::recursive);
  return copy.Sub("crashed");
}

// The DB that never restarted: every sample, then closed.
std::map<std::string, std::string> NeverRestarted(
    const std::vector<std::vector<Sample>>& data) {
  testutil::TempDir dir;
  {
    auto db = MustOpen(dir.path());
    Append(db.get(), data, 0, 100);
    Append(db.get(), data, 100, 200);
    Append(db.get(), data, 200, kSamples);
  }
  return HeadRecords(dir.path());
}

TEST_CASE("head: a restarted DB resumes its open chunks byte for byte",
          "[storage][head]") {
  const auto data = Data();
  const auto expected = NeverRestarted(data);
  int chunks = 0;
  REQUIRE(WithState(expected, &chunks) == kSeries);
  REQUIRE(chunks == kSeries);
  testutil::TempDir dir;
  {
    auto db = MustOpen(dir.path());
    Append(db.get(), data, 0, 100);
  }  // the destructor checkpoints, as at SIGTERM
  REQUIRE(WithState(HeadRecords(dir.path())) == kSeries);
  std::string log = OpenLog(dir.path(), &data, 100, 200);
  INFO(log);
  CHECK(log.find("resumed=" + std::to_string(kSeries)) != std::string::npos);
  CHECK(log.find("reencoded=0") != std::string::npos);
  log = OpenLog(dir.path(), &data, 200, kSamples);
  CHECK(log.find("resumed=" + std::to_string(kSeries)) != std::string::npos);
  REQUIRE(HeadRecords(dir.path()) == expected);
  // And the samples read back are all there.
  auto db = MustOpen(dir.path());
  auto got = testutil::Query(db.get(), {testutil::Eq("__name__", "m")});
  REQUIRE(got.size() == size_t{kSeries});
  for (int s = 0; s < kSeries; ++s) {
    const auto& g = got[SeriesLabels(s).ToString()];
    REQUIRE(g.size() == size_t{kSamples});
    for (int i = 0; i < kSamples; ++i) {
      REQUIRE(g[i].first == data[s][i].t);
      REQUIRE(std::bit_cast<uint64_t>(g[i].second) ==
              std::bit_cast<uint64_t>(data[s][i].v));
    }
  }
}

TEST_CASE("head: after a crash the WAL is replayed onto resumed chunks",
          "[storage][head]") {
  const auto data = Data();
  const auto expected = NeverRestarted(data);
  testutil::TempDir dir, copy;
  const std::string crashed = Crashed(data, dir, copy);
  std::string log = OpenLog(crashed, &data, 200, kSamples);
  INFO(log);
  CHECK(log.find("resumed=" + std::to_string(kSeries)) != std::string::npos);
  REQUIRE(HeadRecords(crashed) == expected);
}

TEST_CASE(
    "head: a replay's cuts wait in memory for the series' next commit, "
    "then are written sealed as ever",
    "[storage][head]") {
  const auto data = Data();
  testutil::TempDir never, dir, copy;
  {
    auto db = MustOpen(never.path());
    Append(db.get(), data, 0, 100);
    Append(db.get(), data, 100, 200);
    Append(db.get(), data, 200, kSamples);
  }
  const auto expected_chunks = RawFamily(never.path(), "chunks").All();
  REQUIRE(expected_chunks.size() >= size_t{2 * kSeries});
  const std::string crashed = Crashed(data, dir, copy);
  {
    auto db = MustOpen(crashed);
    // Each series reaches its size (91 to 120 samples) at least once in
    // samples 100 to 200: the cut chunks wait in memory beside the open one.
    CHECK(db->Stats().head_chunks >= uint64_t{2 * kSeries});
    auto got = testutil::Query(db.get(), {testutil::Eq("__name__", "m")});
    REQUIRE(got.size() == size_t{kSeries});
    for (int s = 0; s < kSeries; ++s) {
      const auto& g = got[SeriesLabels(s).ToString()];
      REQUIRE(g.size() == size_t(200 - s % 7));
      for (size_t i = 0; i < g.size(); ++i) {
        REQUIRE(g[i].first == data[s][i].t);
        REQUIRE(std::bit_cast<uint64_t>(g[i].second) ==
                std::bit_cast<uint64_t>(data[s][i].v));
      }
    }
    // The next commit writes them (and any chunk it cuts itself).
    Append(db.get(), data, 200, kSamples);
    CHECK(db->Stats().head_chunks == uint64_t{kSeries});
  }
  REQUIRE(RawFamily(crashed, "chunks").All() == expected_chunks);
}

TEST_CASE(
    "head: the checkpoint at close seals many replayed cuts on every core, "
    "as they would have been written",
    "[storage][head]") {
  // 5,000 series (sealed in parallel from 4,096), cut every 8 samples.
  constexpr int kMany = 5000;
  Options o;
  o.max_chunk_samples = 8;
  auto append = [](DB* db, int from, int to) {
    auto app = db->NewAppender();
    for (int s = 0; s < kMany; ++s) {
      const Labels l{{"__name__", "m"}, {"s", std::to_string(s)}};
      for (int i = from; i < to; ++i) {
        const double v = s % 2 ? i * 1.5 : std::sin(i + s);
        REQUIRE(app->Append(0, l, 1767225600000 + i * 15000, v).ok());
      }
    }
    REQUIRE(app->Commit().ok());
  };
  testutil::TempDir never, dir, copy;
  {
    auto db = MustOpen(never.path(), o);
    append(db.get(), 0, 4);
    append(db.get(), 4, 21);
  }
  const auto expected = RawFamily(never.path(), "chunks").All();
  REQUIRE(expected.size() == size_t{2 * kMany});
  {
    auto db = MustOpen(dir.path(), o);
    append(db.get(), 0, 4);
  }
  {
    auto db = MustOpen(dir.path(), o);
    append(db.get(), 4, 21);
    std::filesystem::copy(dir.path(), copy.Sub("crashed"),
                          std::filesystem::copy_options::recursive);
  }
  const std::string crashed = copy.Sub("crashed");
  {
    // What the crashed process had written of them goes: the chunks
    // compared below are the replay's, sealed at close.
    RawFamily chunks(crashed, "chunks");
    for (const auto& [k, v] : chunks.All()) chunks.Delete(k);
  }
  REQUIRE(RawFamily(crashed, "chunks").All().empty());
  {
    auto db = MustOpen(crashed, o);
    CHECK(db->Stats().head_chunks == uint64_t{3 * kMany});
  }
  REQUIRE(RawFamily(crashed, "chunks").All() == expected);
}

TEST_CASE("head: records without a state (older directories) still open",
          "[storage][head]") {
  const auto data = Data();
  const auto expected = NeverRestarted(data);
  testutil::TempDir dir;
  {
    auto db = MustOpen(dir.path());
    Append(db.get(), data, 0, 150);
  }
  // What the code before states wrote: last_t, last_v, chunk bytes.
  RewriteHead(dir.path(), [](Timestamp t, double v, std::string_view chunk,
                             const OpenChunkState&) {
    return EncodeHeadRecord(t, v, chunk);
  });
  REQUIRE(WithState(HeadRecords(dir.path())) == 0);
  {
    // Opened and closed without an append, the records are rewritten with
    // their states.
    std::string log = OpenLog(dir.path());
    INFO(log);
    CHECK(log.find("resumed=0") != std::string::npos);
    CHECK(log.find("reencoded=" + std::to_string(kSeries)) !=
          std::string::npos);
  }
  REQUIRE(WithState(HeadRecords(dir.path())) == kSeries);
  OpenLog(dir.path(), &data, 150, kSamples);
  REQUIRE(HeadRecords(dir.path()) == expected);
}

TEST_CASE("head: a state that does not fit its chunk is re-encoded",
          "[storage][head]") {
  const auto data = Data();
  const auto expected = NeverRestarted(data);
  testutil::TempDir dir;
  {
    auto db = MustOpen(dir.path());
    Append(db.get(), data, 0, 150);
  }
  RewriteHead(dir.path(), [](Timestamp t, double v, std::string_view chunk,
                             OpenChunkState state) {
    state.num_samples = static_cast<uint16_t>(state.num_samples + 1);
    return EncodeHeadRecord(t, v, chunk, &state);
  });
  std::string log = OpenLog(dir.path(), &data, 150, kSamples);
  INFO(log);
  CHECK(log.find("head chunk states rejected") != std::string::npos);
  CHECK(log.find("samples but the chunk header says") != std::string::npos);
  REQUIRE(HeadRecords(dir.path()) == expected);
}

TEST_CASE("head records: the state round-trips and is checked",
          "[storage][head]") {
  OpenChunkState s;
  s.len = 40;
  s.num_samples = 513;
  s.free_bits = 3;
  s.flags = 0xfe;
  s.aux = 0xbeef;
  s.last_t = -1234567890123;
  s.last_v = 0x8000000000000001;
  s.t_delta = -7;
  s.v_mean = INT32_MIN;
  const std::string chunk(40, '\x03');
  const std::string rec = EncodeHeadRecord(99, 2.5, chunk, &s);
  Timestamp t;
  double v;
  std::string_view got;
  OpenChunkState gs;
  bool has = false;
  REQUIRE(DecodeHeadRecord(rec, &t, &v, &got, &gs, &has));
  CHECK(has);
  CHECK(t == 99);
  CHECK(v == 2.5);
  CHECK(got == chunk);
  CHECK(gs == s);
  // Without a state, or with an empty chunk, the old layout.
  // (`got` points into the record: keep it alive.)
  const std::string old_rec = EncodeHeadRecord(99, 2.5, chunk);
  REQUIRE(DecodeHeadRecord(old_rec, &t, &v, &got, &gs, &has));
  CHECK_FALSE(has);
  CHECK(got == chunk);
  const std::string empty = EncodeHeadRecord(99, 2.5, "", &s);
  CHECK(empty == EncodeHeadRecord(99, 2.5, ""));
  REQUIRE(DecodeHeadRecord(empty, &t, &v, &got, &gs, &has));
  CHECK_FALSE(has);
  CHECK(got.empty());
  // A state with no chunk after it is malformed; so is any flipped bit.
  std::string cut = EncodeHeadRecord(99, 2.5, "\x03", &s);
  {
    // Re-frame the record without its chunk byte: CRC-valid but short.
    std::string_view payload = std::string_view(cut).substr(4);
    cut = internal::Frame(payload.substr(0, payload.size() - 1));
  }
  CHECK_FALSE(DecodeHeadRecord(cut, &t, &v, &got, &gs, &has));
  std::string flipped = rec;
  flipped[20] ^= 4;
  CHECK_FALSE(DecodeHeadRecord(flipped, &t, &v, &got, &gs, &has));
}

}  // namespace
}  // namespace vigil::storage
