// Sealed and open chunk encodings: round trips, chosen encodings, sizes.
#include <algorithm>

#include "tests/storage/chunk_testutil.h"

namespace vigil::storage::internal {
namespace {

using namespace testing;  // NOLINT: the shared chunk test helpers

TEST_CASE("Chunks round-trip random-walk floats", "[chunk]") {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> step(0, 3.7);
  for (size_t n : {1, 2, 3, 7, 120, 240, 1000}) {
    std::vector<double> vs(n);
    double x = 100;
    for (auto& v : vs) v = x += step(rng);
    std::string c = RoundTrip(RegularTimes(n), vs);
    if (n >= 120) REQUIRE(Inspect(c).value_encoding == 1);  // XOR
  }
}

TEST_CASE("Integer counters pick the decimal k=0 encoding, smaller than XOR",
          "[chunk]") {
  std::mt19937_64 rng(2);
  std::vector<double> vs(120);
  double x = 1234567;
  for (auto& v : vs)
    v = x += std::floor(135000 * (1 + 0.3 * (rng() % 100) / 100.0));
  auto ts = RegularTimes(vs.size());
  std::string sealed = RoundTrip(ts, vs);
  ChunkInfo info = Inspect(sealed);
  REQUIRE(info.value_encoding == 2);
  REQUIRE(info.decimal_scale == 0);
  REQUIRE(info.exceptions == 0);
  OpenChunk open;
  for (size_t i = 0; i < ts.size(); ++i) open.Append(ts[i], vs[i]);
  INFO("sealed " << sealed.size() << " open " << open.bytes().size());
  // The open chunk codes the same mantissas adaptively: close to sealed
  // (XOR took ~4.5 bytes/sample here).
  REQUIRE(open.bytes().size() <= sealed.size() * 9 / 8 + 16);
  // Regular timestamps are nearly free: ~2.2 bytes/sample of value bits at
  // most (17-bit increments) plus a small header.
  REQUIRE(sealed.size() < 120 * 17 / 8 + 24);
}

TEST_CASE("Constant-step counters and regular timestamps cost ~0 bits",
          "[chunk]") {
  std::vector<double> vs(1000);
  for (size_t i = 0; i < vs.size(); ++i) vs[i] = 1000 + 5.0 * i;
  std::string c = RoundTrip(RegularTimes(vs.size()), vs);
  REQUIRE(c.size() < 24);
  std::vector<double> zeros(1000, 0.0);
  c = RoundTrip(RegularTimes(zeros.size()), zeros);
  REQUIRE(Inspect(c).value_encoding == 0);
  REQUIRE(c.size() < 24);
}

TEST_CASE("Decimals with 1 to 6 digits use decimal scaling", "[chunk]") {
  std::mt19937_64 rng(3);
  for (int digits = 1; digits <= 6; ++digits) {
    std::vector<double> vs(120);
    int64_t m = 78174000;
    for (auto& v : vs) {
      m += static_cast<int64_t>(rng() % 2001) - 1000;
      // As a text parser would produce it: nearest double to m / 10^d.
      v = std::strtod(DecimalText(m, digits).c_str(), nullptr);
    }
    INFO("digits " << digits);
    std::string c = RoundTrip(RegularTimes(vs.size()), vs);
    ChunkInfo info = Inspect(c);
    REQUIRE(info.value_encoding == 2);
    REQUIRE(info.decimal_scale <= digits);
    REQUIRE(info.exceptions == 0);
  }
}

TEST_CASE("Small gauges like 0.35 and temperatures are decimal", "[chunk]") {
  std::vector<double> kv = {0.35, 0.36, 0.3512, 0.4, 0.0, 1.0, 0.9999};
  std::string c = RoundTrip(RegularTimes(kv.size()), kv);
  REQUIRE(Inspect(c).value_encoding == 2);
  REQUIRE(Inspect(c).decimal_scale == 4);
  std::vector<double> temp = {62, 63, 63, 61, 60, 62, 64, 65, 65, 64};
  c = RoundTrip(RegularTimes(temp.size()), temp);
  REQUIRE(Inspect(c).value_encoding == 2);
  REQUIRE(Inspect(c).decimal_scale == 0);
  REQUIRE(c.size() < 24);
}

TEST_CASE("Special values round-trip bit for bit", "[chunk]") {
  // Alone, mixed into integer and decimal columns, and as a whole column.
  std::vector<double> all(std::begin(kSpecials), std::end(kSpecials));
  RoundTrip(RegularTimes(all.size()), all);
  for (double special : kSpecials) {
    std::vector<double> counter(120), decimal(120);
    for (size_t i = 0; i < 120; ++i) {
      counter[i] = 1000.0 + 7 * i;
      decimal[i] = std::strtod(DecimalText(78174 + 13 * i, 3).c_str(), nullptr);
    }
    counter[0] = counter[60] = counter[119] = special;
    decimal[5] = decimal[6] = special;
    INFO("special bits " << std::hex << Bits(special));
    std::string c = RoundTrip(RegularTimes(120), counter);
    ChunkInfo info = Inspect(c);
    if (Bits(special) != Bits(0.0) && std::isnan(special)) {
      REQUIRE(info.value_encoding == 2);  // exceptions, not XOR
      REQUIRE(info.exceptions == 3);
    }
    RoundTrip(RegularTimes(120), decimal);
    std::vector<double> single = {special};
    RoundTrip({-5}, single);
  }
  // A series ending in a staleness marker keeps its integer encoding.
  std::vector<double> vs(120);
  for (size_t i = 0; i < vs.size(); ++i) vs[i] = static_cast<double>(i / 3);
  vs.back() = StaleNaN();
  std::string c = RoundTrip(RegularTimes(vs.size()), vs);
  REQUIRE(Inspect(c).value_encoding == 2);
  REQUIRE(Inspect(c).exceptions == 1);
}

TEST_CASE("Random mixed values round-trip", "[chunk]") {
  std::mt19937_64 rng(4);
  for (int round = 0; round < 300; ++round) {
    size_t n = 1 + rng() % 300;
    std::vector<double> vs(n);
    int kind = round % 5;
    for (size_t i = 0; i < n; ++i) {
      switch (rng() % (kind + 1)) {
        case 0:
          vs[i] = std::bit_cast<double>(rng());
          break;  // any bits
        case 1:
          vs[i] = static_cast<double>(static_cast<int64_t>(rng() % 1000) - 500);
          break;
        case 2:
          vs[i] = std::strtod(DecimalText(static_cast<int64_t>(rng() % 100000),
                                          static_cast<int>(rng() % 7))
                                  .c_str(),
                              nullptr);
          break;
        case 3:
          vs[i] = kSpecials[rng() % std::size(kSpecials)];
          break;
        default:
          vs[i] = i > 0 ? vs[i - 1] : 1.5;
          break;
      }
    }
    std::vector<Timestamp> ts(n);
    Timestamp t = static_cast<int64_t>(rng() % 4000000000000) - 2000000000000;
    for (size_t i = 0; i < n; ++i) {
      ts[i] = t;
      t += 1 + (rng() % 3 == 0 ? static_cast<int64_t>(rng() % 100000) : 15000);
    }
    RoundTrip(ts, vs);
  }
}

TEST_CASE("Irregular timestamps round-trip", "[chunk]") {
  std::vector<double> vs(8, 1.0);
  std::vector<std::vector<Timestamp>> cases = {
      {kMinTimestamp, -1, 0, 1, kMaxTimestamp - 1, kMaxTimestamp},
      {kMinTimestamp, kMinTimestamp + 1, kMaxTimestamp},
      {-1000000, -999999, -5, 0, 15000, 30000, 45001, 60000},
      {0, 1, 1000000000000, 1000000000001, 4000000000000000000},
      {kMinTimestamp},
      {kMaxTimestamp},
  };
  for (const auto& ts : cases) {
    std::vector<double> v(vs.begin(), vs.begin() + ts.size());
    RoundTrip(ts, v);
  }
  // Missed scrapes and jitter in an otherwise regular series.
  std::vector<Timestamp> ts = RegularTimes(240);
  std::vector<double> v(240, 3.0);
  for (size_t i = 50; i < 240; ++i) ts[i] += 15000;  // one missed scrape
  std::string sparse = RoundTrip(ts, v);
  REQUIRE(sparse.size() < 32);
  std::mt19937_64 rng(5);
  for (auto& t : ts) t += static_cast<int64_t>(rng() % 7);  // ms jitter
  RoundTrip(ts, v);
}

TEST_CASE("Empty and 1-sample chunks", "[chunk]") {
  RoundTrip({}, {});
  RoundTrip({1767225600000}, {78.174});
  OpenChunk open;
  REQUIRE(open.bytes().size() == 3);
  ChunkIterator it(open.bytes());
  REQUIRE_FALSE(it.Next());
  REQUIRE(it.err().ok());
}

TEST_CASE("OpenChunk bytes are decodable after every append", "[chunk]") {
  OpenChunk open;
  std::vector<Timestamp> ts = RegularTimes(130);
  std::vector<double> vs(130);
  for (size_t i = 0; i < vs.size(); ++i) vs[i] = 0.6 + 0.01 * (i % 17);
  for (size_t i = 0; i < ts.size(); ++i) {
    open.Append(ts[i], vs[i]);
    std::vector<Timestamp> pt(ts.begin(), ts.begin() + i + 1);
    std::vector<double> pv(vs.begin(), vs.begin() + i + 1);
    RequireDecodesTo(open.bytes(), pt, pv);
  }
  OpenChunk copy = open;
  RequireDecodesTo(copy.bytes(), ts, vs);
  OpenChunk moved = std::move(copy);
  moved.Append(ts.back() + 1, 1.0);
  REQUIRE(moved.num_samples() == 131);
  REQUIRE(open.num_samples() == 130);
}

TEST_CASE("OpenChunk memory stays compact for 120 samples", "[chunk]") {
  std::mt19937_64 rng(6);
  OpenChunk gauge, counter;
  double g = 62, c = 1e6;
  for (int i = 0; i < 120; ++i) {
    Timestamp t = 1767225600000 + i * 15000;
    g += static_cast<double>(static_cast<int>(rng() % 3) - 1);
    c += static_cast<double>(130000 + rng() % 10000);
    gauge.Append(t, g);
    counter.Append(t, c);
  }
  INFO("gauge " << gauge.MemoryBytes() << " bytes, counter "
                << counter.MemoryBytes());
  REQUIRE(gauge.MemoryBytes() < 300);
  REQUIRE(counter.MemoryBytes() < 600);
  // Little slack: capacity within 25% + 16 bytes of the used size.
  REQUIRE(gauge.MemoryBytes() - sizeof(OpenChunk) <=
          gauge.bytes().size() * 5 / 4 + 16);
}

TEST_CASE("DecodeChunk from a time returns exactly the later samples",
          "[chunk]") {
  auto ts = RegularTimes(200);
  ts[100] += 7;  // irregular, so the timestamp column is not all-zero bits
  std::vector<double> decimals(200), floats(200);
  for (size_t i = 0; i < 200; ++i) {
    decimals[i] = std::strtod(
        DecimalText(70000 + static_cast<int64_t>(i * i % 997), 2).c_str(),
        nullptr);
    floats[i] = std::sin(static_cast<double>(i)) * 1e3;
  }
  decimals[150] = kSpecials[3];  // an exception value after the cut
  decimals[20] = kSpecials[4];   // and one before it
  for (const auto* vs : {&decimals, &floats}) {
    std::string sealed = EncodeSealed(ts.data(), vs->data(), ts.size());
    OpenChunk open;
    for (size_t i = 0; i < ts.size(); ++i) open.Append(ts[i], (*vs)[i]);
    for (std::string_view chunk : {std::string_view(sealed), open.bytes()}) {
      for (Timestamp from : {kMinTimestamp, ts[0], ts[0] + 1, ts[100],
                             ts[100] - 1, ts[150], ts[199], ts[199] + 1}) {
        INFO("format " << int(chunk[0]) << " from " << from);
        std::vector<Timestamp> got_t{1};
        std::vector<double> got_v{2};
        REQUIRE(DecodeChunk(chunk, &got_t, &got_v, from).ok());
        size_t first = static_cast<size_t>(
            std::lower_bound(ts.begin(), ts.end(), from) - ts.begin());
        REQUIRE(got_t.size() == 1 + ts.size() - first);
        REQUIRE(got_v.size() == got_t.size());
        for (size_t i = first; i < ts.size(); ++i) {
          REQUIRE(got_t[1 + i - first] == ts[i]);
          REQUIRE(Bits(got_v[1 + i - first]) == Bits((*vs)[i]));
        }
      }
    }
  }
}

TEST_CASE("ChunkIterator moves and resets", "[chunk]") {
  auto ts = RegularTimes(5);
  std::vector<double> a = {1, 2, 3, 4, 5}, b = {0.5, 0.25, 0.125, 1e300, -2};
  std::string ca = EncodeSealed(ts.data(), a.data(), 5);
  std::string cb = EncodeSealed(ts.data(), b.data(), 5);
  ChunkIterator it(ca);
  REQUIRE(it.Next());
  ChunkIterator moved(std::move(it));
  REQUIRE(moved.Next());
  REQUIRE(moved.v() == 2);
  moved.Reset(cb);
  REQUIRE(moved.num_samples() == 5);
  REQUIRE(moved.Next());
  REQUIRE(moved.v() == 0.5);
  it = std::move(moved);
  REQUIRE(it.Next());
  REQUIRE(it.v() == 0.25);
  it.Reset("\x09");
  REQUIRE_FALSE(it.Next());
  RequireDataLoss(it.err());
}

}  // namespace
}  // namespace vigil::storage::internal
