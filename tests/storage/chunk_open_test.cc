// The appendable head chunk: kOpenDelta scaling, specials, conversions, memory.
#include "tests/storage/chunk_testutil.h"

namespace vigil::storage::internal {
namespace {

using namespace testing;  // NOLINT: the shared chunk test helpers

OpenChunk AppendAll(const std::vector<Timestamp>& ts,
                    const std::vector<double>& vs) {
  OpenChunk open;
  for (size_t i = 0; i < ts.size(); ++i) open.Append(ts[i], vs[i]);
  return open;
}

// A 3-decimal random walk like a GPU power gauge (dcgm-exporter).
std::vector<double> PowerWalk(size_t n, uint64_t seed, double sigma = 25) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0, 1);
  std::vector<double> vs(n);
  double x = 450;
  for (auto& v : vs) {
    x = std::min(700.0, std::max(80.0, x + sigma * gauss(rng)));
    v = std::strtod(DecimalText(std::llround(x * 1000), 3).c_str(), nullptr);
  }
  return vs;
}

TEST_CASE("Open chunks of decimals use kOpenDelta at the right scale",
          "[chunk][open]") {
  auto ts = RegularTimes(120);
  std::vector<double> vs = PowerWalk(120, 11);
  RoundTrip(ts, vs);
  OpenChunk open = AppendAll(ts, vs);
  ChunkInfo info = Inspect(open.bytes());
  REQUIRE(info.format == ChunkFormat::kOpenDelta);
  REQUIRE(info.value_encoding == 2);
  REQUIRE(info.decimal_scale == 3);
  REQUIRE(info.exceptions == 0);
  // Integers are scale 0; floats with too many digits are XOR.
  std::vector<double> ints(120), floats(120);
  for (size_t i = 0; i < 120; ++i) {
    ints[i] = static_cast<double>(1000 + 7 * i);
    floats[i] = 1.0 / 3 + static_cast<double>(i) / 7;
  }
  RoundTrip(ts, ints);
  RoundTrip(ts, floats);
  REQUIRE(Inspect(AppendAll(ts, ints).bytes()).decimal_scale == 0);
  REQUIRE(Inspect(AppendAll(ts, floats).bytes()).value_encoding == 1);
}

TEST_CASE("An open chunk's newest sample, and the one ResetTo keeps",
          "[chunk][open]") {
  OpenChunk open;
  CHECK(open.last_t() == kMinTimestamp);
  CHECK(Bits(open.last_v()) == 0);
  CHECK(open.max_time() == 0);
  // Decimal, XOR and special values: last_v() gives back the exact bits.
  auto ts = RegularTimes(40);
  std::vector<double> vs = PowerWalk(40, 13);
  vs[20] = 1.0 / 3;  // an exception in the decimal column
  for (double last : {vs[39], 1.0 / 3, -0.0, kSpecials[0], 12.5}) {
    std::vector<double> with = vs;
    with.back() = last;
    OpenChunk c = AppendAll(ts, with);
    INFO("last bits " << std::hex << Bits(last));
    CHECK(c.last_t() == ts.back());
    CHECK(Bits(c.last_v()) == Bits(last));
    c.ResetTo(c.last_t(), c.last_v());
    CHECK(c.num_samples() == 0);
    CHECK(c.max_time() == 0);
    CHECK(c.bytes().size() == 3);  // the empty chunk
    CHECK(c.MemoryBytes() == sizeof(OpenChunk));
    CHECK(c.last_t() == ts.back());
    CHECK(Bits(c.last_v()) == Bits(last));
    // The next append starts a new chunk of its own samples only.
    c.Append(ts.back() + 15000, 7.25);
    c.Append(ts.back() + 30000, 7.5);
    RequireDecodesTo(c.bytes(), {ts.back() + 15000, ts.back() + 30000},
                     {7.25, 7.5});
    CHECK(c.last_t() == ts.back() + 30000);
    CHECK(c.last_v() == 7.5);
    // A move leaves the source without a newest sample.
    OpenChunk moved = std::move(c);
    CHECK(c.last_t() == kMinTimestamp);  // NOLINT(bugprone-use-after-move)
    CHECK(moved.last_t() == ts.back() + 30000);
  }
}

TEST_CASE("Open chunks keep every special value, first and mid-stream",
          "[chunk][open]") {
  auto ts = RegularTimes(120);
  const std::vector<double> base = PowerWalk(120, 12);
  for (double special : kSpecials) {
    INFO("special bits " << std::hex << Bits(special));
    for (std::vector<size_t> at : std::vector<std::vector<size_t>>{
             {0}, {1}, {60}, {119}, {0, 1, 2}, {59, 60}, {0, 119}}) {
      std::vector<double> vs = base;
      for (size_t i : at) vs[i] = special;
      RoundTrip(ts, vs);
      ChunkInfo info = Inspect(AppendAll(ts, vs).bytes());
      if (std::isnan(special) || std::isinf(special) ||
          Bits(special) == Bits(-0.0)) {
        REQUIRE(info.value_encoding == 2);  // stays decimal: raw exceptions
        REQUIRE(info.exceptions == at.size());
      }
    }
    // Short chunks, a special between two values, and only specials.
    for (size_t n : {1, 2, 3}) {
      std::vector<double> vs(base.begin(), base.begin() + n);
      vs[n / 2] = special;
      RoundTrip(RegularTimes(n), vs);
    }
    RoundTrip(RegularTimes(50), std::vector<double>(50, special));
  }
  // A stale series: decimals then one staleness marker, which last_value()
  // reports (RoundTrip checks it).
  std::vector<double> vs = base;
  vs.back() = StaleNaN();
  RoundTrip(ts, vs);
  REQUIRE(Inspect(AppendAll(ts, vs).bytes()).exceptions == 1);
}

TEST_CASE("Open chunks raise the decimal scale by re-encoding",
          "[chunk][open]") {
  auto ts = RegularTimes(120);
  // Histogram sums: trailing zeros are not printed, so digits vary.
  std::vector<double> sums = {8.3026, 9.63658, 11.884301, 13.1, 15.0};
  for (size_t i = sums.size(); i < 120; ++i) {
    sums.push_back(std::strtod(
        DecimalText(15000000 + 1234567 * static_cast<int64_t>(i), 6).c_str(),
        nullptr));
  }
  RoundTrip(ts, sums);
  ChunkInfo info = Inspect(AppendAll(ts, sums).bytes());
  REQUIRE(info.value_encoding == 2);
  REQUIRE(info.decimal_scale == 6);
  REQUIRE(info.exceptions == 0);
  // Starting at 0 (scale 0), then small decimals: raised early.
  std::vector<double> kv(120);
  for (size_t i = 0; i < 120; ++i)
    kv[i] = i == 0 ? 0.0 : 0.5 + 0.0001 * static_cast<double>(i % 37);
  RoundTrip(ts, kv);
  REQUIRE(Inspect(AppendAll(ts, kv).bytes()).decimal_scale == 4);
  // One late value with many more digits is an exception, not a raise...
  std::vector<double> one = PowerWalk(120, 13);
  one[100] = 451.123456789;
  RoundTrip(ts, one);
  info = Inspect(AppendAll(ts, one).bytes());
  REQUIRE(info.decimal_scale == 3);
  REQUIRE(info.exceptions == 1);
  // ...but many of them raise it.
  std::vector<double> many = PowerWalk(120, 14);
  for (size_t i = 40; i < 120; i += 3) many[i] += 0.000001;
  RoundTrip(ts, many);
  REQUIRE(Inspect(AppendAll(ts, many).bytes()).decimal_scale == 6);
  // Earlier mantissas that overflow 2^53 at the new scale become exceptions.
  std::vector<double> big = {9999999999999.99, 9999999999999.98, 1.001, 1.002};
  RoundTrip(RegularTimes(big.size()), big);
}

TEST_CASE("Open chunks with frequent non-decimals convert to XOR",
          "[chunk][open]") {
  auto ts = RegularTimes(120);
  std::vector<double> vs = PowerWalk(120, 15);
  for (size_t i = 10; i < 120; i += 2) vs[i] = std::nan("");
  RoundTrip(ts, vs);
  REQUIRE(Inspect(AppendAll(ts, vs).bytes()).value_encoding == 1);
  std::vector<double> mixed = PowerWalk(120, 16);
  for (size_t i = 30; i < 120; ++i) mixed[i] = mixed[i] / 3;  // long digits
  RoundTrip(ts, mixed);
  REQUIRE(Inspect(AppendAll(ts, mixed).bytes()).value_encoding == 1);
  // Copies and moves carry the mode along.
  OpenChunk open = AppendAll(ts, mixed);
  OpenChunk copy = open;
  copy.Append(ts.back() + 15000, 1.5);
  OpenChunk moved = std::move(open);
  moved.Append(ts.back() + 15000, 1.5);
  REQUIRE(copy.bytes() == moved.bytes());
  REQUIRE(open.num_samples() == 0);  // NOLINT: moved-from is empty
  REQUIRE(open.MemoryBytes() == sizeof(OpenChunk));
}

TEST_CASE("Legacy kOpenXor chunks still decode", "[chunk][open]") {
  // Written by the kOpenXor encoder (commit 495daf3); the same format is in
  // `head` records on disk.
  const std::string legacy(
      "\x01\x00\x08\xe6\xee\xed\xd5\xa0\x00\x40\x7b\xf0\xe1\x47\xae\x14\x7b"
      "\x81\xea\x30\xdd\x8d\xee\xae\x04\x1f\xbd\x75\x80\x0b\xf8\x10\x7b\x64"
      "\x5a\x1c\xac\x18\x1c\xff\xf0\x00\x00\x00\x00\x00\x01\x7a\xbf\x8d\xf9"
      "\x0f\x22\x00\x1d\x67\x38\xdb\xba\xe0\x1c\x7e\x43\xc8\x80\x07\x59\xee"
      "\xc9\x11\x88\xfe\x27\x05\xb2\x2d\x0e\x56\x0c",
      79);
  const std::vector<Timestamp> ts = {
      1767225600000, 1767225615000, 1767225630000, 1767225645003,
      1767225660000, 1767225900000, 1767225915000, 1767225930000};
  const std::vector<double> vs = {
      447.055, 400.482, std::bit_cast<double>(uint64_t{0xfff8000000000000}),
      -0.0,    1e300,   StaleNaN(),
      412.089, 412.089};
  RequireDecodesTo(legacy, ts, vs);
  REQUIRE(Inspect(legacy).format == ChunkFormat::kOpenXor);
  for (size_t len = 0; len < legacy.size(); ++len) {
    std::vector<Timestamp> t;
    std::vector<double> v;
    INFO("len " << len);
    RequireDataLoss(DecodeChunk(legacy.substr(0, len), &t, &v));
  }
}

TEST_CASE("Open chunk memory at 120 samples", "[chunk][open]") {
  REQUIRE(sizeof(OpenChunk) <= 40);
  OpenChunk empty;
  REQUIRE(empty.MemoryBytes() == sizeof(OpenChunk));  // no heap until used
  auto ts = RegularTimes(120);
  for (uint64_t seed = 20; seed < 30; ++seed) {
    OpenChunk power = AppendAll(ts, PowerWalk(120, seed));
    std::mt19937_64 rng(seed);
    std::vector<double> counter(120);
    double c = 1e6;
    for (auto& v : counter)
      v = c += static_cast<double>(130000 + rng() % 10000);
    OpenChunk ctr = AppendAll(ts, counter);
    INFO("power " << power.MemoryBytes() << " (" << power.bytes().size()
                  << " used), counter " << ctr.MemoryBytes() << " ("
                  << ctr.bytes().size() << " used)");
    REQUIRE(power.MemoryBytes() <= 350);
    REQUIRE(ctr.MemoryBytes() <= 300);
    // Slack: at most 32 bytes (capacities step by 16-32 bytes here).
    REQUIRE(power.MemoryBytes() - sizeof(OpenChunk) <=
            power.bytes().size() + 32);
  }
}

TEST_CASE("Open chunk append after every decoded state", "[chunk][open]") {
  // Every prefix decodes, across raises, exceptions and the XOR switch.
  std::mt19937_64 rng(17);
  auto ts = RegularTimes(200);
  std::vector<double> vs(200);
  for (size_t i = 0; i < vs.size(); ++i) {
    switch (rng() % 8) {
      case 0:
        vs[i] = kSpecials[rng() % std::size(kSpecials)];
        break;
      case 1:
        vs[i] = std::strtod(DecimalText(static_cast<int64_t>(rng() % 100000),
                                        static_cast<int>(rng() % 8))
                                .c_str(),
                            nullptr);
        break;
      default:
        vs[i] = std::strtod(
            DecimalText(450000 + static_cast<int64_t>(rng() % 1000), 3).c_str(),
            nullptr);
        break;
    }
  }
  OpenChunk open;
  for (size_t i = 0; i < ts.size(); ++i) {
    open.Append(ts[i], vs[i]);
    REQUIRE(Bits(open.last_value()) == Bits(vs[i]));
    REQUIRE(open.min_time() == ts[0]);
    REQUIRE(open.max_time() == ts[i]);
    RequireDecodesTo(open.bytes(),
                     std::vector<Timestamp>(ts.begin(), ts.begin() + i + 1),
                     std::vector<double>(vs.begin(), vs.begin() + i + 1));
  }
}

}  // namespace
}  // namespace vigil::storage::internal
