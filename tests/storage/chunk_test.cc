#include "storage/internal/chunk.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace vigil::storage::internal {
namespace {

using Samples = std::pair<std::vector<Timestamp>, std::vector<double>>;

uint64_t Bits(double v) { return std::bit_cast<uint64_t>(v); }

std::vector<Timestamp> RegularTimes(size_t n, Timestamp start = 1767225600000,
                                    int64_t step = 15000) {
  std::vector<Timestamp> ts(n);
  for (size_t i = 0; i < n; ++i) ts[i] = start + static_cast<int64_t>(i) * step;
  return ts;
}

// Decodes `chunk` with both DecodeChunk and ChunkIterator and requires the
// samples to match ts/vs bit for bit.
void RequireDecodesTo(std::string_view chunk, const std::vector<Timestamp>& ts,
                      const std::vector<double>& vs) {
  std::vector<Timestamp> got_t{42};  // DecodeChunk appends
  std::vector<double> got_v{4.2};
  absl::Status st = DecodeChunk(chunk, &got_t, &got_v);
  REQUIRE(st.ok());
  REQUIRE(got_t.size() == ts.size() + 1);
  REQUIRE(got_v.size() == vs.size() + 1);
  for (size_t i = 0; i < ts.size(); ++i) {
    INFO("sample " << i);
    REQUIRE(got_t[i + 1] == ts[i]);
    REQUIRE(Bits(got_v[i + 1]) == Bits(vs[i]));
  }
  ChunkIterator it(chunk);
  REQUIRE(it.num_samples() == ts.size());
  size_t i = 0;
  while (it.Next()) {
    REQUIRE(i < ts.size());
    REQUIRE(it.t() == ts[i]);
    REQUIRE(Bits(it.v()) == Bits(vs[i]));
    ++i;
  }
  REQUIRE(it.err().ok());
  REQUIRE(i == ts.size());
}

// Round-trips through the sealed and the open format; returns the sealed
// chunk.
std::string RoundTrip(const std::vector<Timestamp>& ts,
                      const std::vector<double>& vs) {
  std::string sealed = EncodeSealed(ts.data(), vs.data(), ts.size());
  RequireDecodesTo(sealed, ts, vs);
  OpenChunk open;
  for (size_t i = 0; i < ts.size(); ++i) open.Append(ts[i], vs[i]);
  REQUIRE(open.num_samples() == ts.size());
  if (!ts.empty()) {
    REQUIRE(open.min_time() == ts.front());
    REQUIRE(open.max_time() == ts.back());
    REQUIRE(Bits(open.last_value()) == Bits(vs.back()));
  }
  RequireDecodesTo(open.bytes(), ts, vs);
  return sealed;
}

ChunkInfo Inspect(std::string_view chunk) {
  ChunkInfo info;
  REQUIRE(InspectChunk(chunk, &info).ok());
  return info;
}

// "m / 10^d" as decimal text, e.g. (78174, 3) -> "78.174".
std::string DecimalText(int64_t m, int d) {
  std::string digits = std::to_string(m < 0 ? -m : m);
  if (digits.size() <= static_cast<size_t>(d)) {
    digits.insert(0, d + 1 - digits.size(), '0');
  }
  digits.insert(digits.size() - d, ".");
  if (m < 0) digits.insert(0, "-");
  return digits;
}

const double kSpecials[] = {
    std::numeric_limits<double>::quiet_NaN(),
    -std::numeric_limits<double>::quiet_NaN(),
    std::bit_cast<double>(uint64_t{0x7ff0000000000001}),  // signalling payload
    std::bit_cast<double>(uint64_t{0xfff8dead00beef01}),
    std::bit_cast<double>(kStaleNaNBits),
    std::numeric_limits<double>::infinity(),
    -std::numeric_limits<double>::infinity(),
    -0.0,
    0.0,
    std::numeric_limits<double>::denorm_min(),
    -std::numeric_limits<double>::denorm_min() * 12345,
    std::numeric_limits<double>::min(),
    std::numeric_limits<double>::max(),
    -std::numeric_limits<double>::max(),
    1e308,
    9007199254740993.0,  // 2^53 + 1 rounds; still a value
    1e-300,
};

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
  for (auto& v : vs) v = x += std::floor(135000 * (1 + 0.3 * (rng() % 100) / 100.0));
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
        case 0: vs[i] = std::bit_cast<double>(rng()); break;  // any bits
        case 1: vs[i] = static_cast<double>(static_cast<int64_t>(rng() % 1000) - 500); break;
        case 2: vs[i] = std::strtod(DecimalText(static_cast<int64_t>(rng() % 100000), static_cast<int>(rng() % 7)).c_str(), nullptr); break;
        case 3: vs[i] = kSpecials[rng() % std::size(kSpecials)]; break;
        default: vs[i] = i > 0 ? vs[i - 1] : 1.5; break;
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

void RequireDataLoss(const absl::Status& st) {
  REQUIRE(st.code() == absl::StatusCode::kDataLoss);
  REQUIRE(std::string(st.message()).rfind("cannot decode chunk: ", 0) == 0);
}

std::vector<std::string> SampleChunks() {
  std::vector<std::string> chunks;
  std::mt19937_64 rng(7);
  auto ts = RegularTimes(120);
  std::vector<double> walk(120), counter(120), dec(120), consts(120, 7.0);
  double x = 0;
  for (size_t i = 0; i < 120; ++i) {
    walk[i] = x += std::bit_cast<double>((rng() >> 12) | 0x3ff0000000000000) - 1.5;
    counter[i] = 1e6 + 1000.0 * i + static_cast<double>(rng() % 100);
    dec[i] = std::strtod(DecimalText(76000 + static_cast<int64_t>(rng() % 300), 2).c_str(), nullptr);
  }
  counter[30] = StaleNaN();
  ts[60] += 3;
  for (const auto* vs : {&walk, &counter, &dec, &consts}) {
    chunks.push_back(EncodeSealed(ts.data(), vs->data(), ts.size()));
    OpenChunk open;
    for (size_t i = 0; i < ts.size(); ++i) open.Append(ts[i], (*vs)[i]);
    chunks.emplace_back(open.bytes());
  }
  return chunks;
}

TEST_CASE("Every truncation of a chunk is DataLoss", "[chunk][corruption]") {
  for (const std::string& chunk : SampleChunks()) {
    for (size_t len = 0; len < chunk.size(); ++len) {
      INFO("format " << int(chunk[0]) << " size " << chunk.size() << " len " << len);
      std::vector<Timestamp> ts = {1};
      std::vector<double> vs = {1};
      std::string cut = chunk.substr(0, len);  // own allocation for ASan
      RequireDataLoss(DecodeChunk(cut, &ts, &vs));
      REQUIRE(ts.size() == 1);  // left as it was
      REQUIRE(vs.size() == 1);
      ChunkIterator it(cut);
      REQUIRE_FALSE(it.Next());
      RequireDataLoss(it.err());
    }
  }
}

TEST_CASE("Bad headers are DataLoss", "[chunk][corruption]") {
  std::vector<Timestamp> ts;
  std::vector<double> vs;
  RequireDataLoss(DecodeChunk(std::string("\x07\x00\x01", 3), &ts, &vs));
  RequireDataLoss(DecodeChunk(std::string("\x00", 1), &ts, &vs));
  // Open chunk claiming more samples than its bits hold.
  OpenChunk open;
  for (int i = 0; i < 10; ++i) open.Append(i, i * 0.5);
  std::string more(open.bytes());
  more[1] = '\x7f';
  RequireDataLoss(DecodeChunk(more, &ts, &vs));
  // Sealed chunk with a count beyond the limit, and beyond the data.
  std::string huge("\x02\xff\xff\xff\x7f", 5);
  RequireDataLoss(DecodeChunk(huge, &ts, &vs));
  std::vector<Timestamp> t = RegularTimes(10);
  std::vector<double> v(10);
  for (int i = 0; i < 10; ++i) v[i] = std::bit_cast<double>(uint64_t{0x4000123456789abc} + i * 977);
  std::string sealed = EncodeSealed(t.data(), v.data(), t.size());
  REQUIRE(static_cast<uint8_t>(sealed[1]) == 10);
  sealed[1] = 100;  // one-byte varint count, now larger than the data
  RequireDataLoss(DecodeChunk(sealed, &ts, &vs));
  REQUIRE(ts.empty());
}

TEST_CASE("Random byte flips never crash", "[chunk][corruption]") {
  std::mt19937_64 rng(8);
  int decoded_ok = 0, data_loss = 0;
  for (const std::string& chunk : SampleChunks()) {
    for (int round = 0; round < 400; ++round) {
      std::string bad = chunk;
      int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f) {
        bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
      }
      std::vector<Timestamp> ts;
      std::vector<double> vs;
      absl::Status st = DecodeChunk(bad, &ts, &vs);
      if (st.ok()) {
        ++decoded_ok;  // no checksum here: wrong values are possible
        REQUIRE(ts.size() == vs.size());
        for (size_t i = 1; i < ts.size(); ++i) REQUIRE(ts[i] > ts[i - 1]);
      } else {
        ++data_loss;
        RequireDataLoss(st);
        REQUIRE(ts.empty());
      }
      ChunkIterator it(bad);
      while (it.Next()) {
      }
    }
  }
  REQUIRE(data_loss > 0);
  (void)decoded_ok;
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


// ---- kOpenDelta ----------------------------------------------------------------

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
      if (std::isnan(special) || std::isinf(special) || Bits(special) == Bits(-0.0)) {
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

TEST_CASE("Open chunks raise the decimal scale by re-encoding", "[chunk][open]") {
  auto ts = RegularTimes(120);
  // Histogram sums: trailing zeros are not printed, so digits vary.
  std::vector<double> sums = {8.3026, 9.63658, 11.884301, 13.1, 15.0};
  for (size_t i = sums.size(); i < 120; ++i) {
    sums.push_back(std::strtod(DecimalText(15000000 + 1234567 * static_cast<int64_t>(i), 6).c_str(), nullptr));
  }
  RoundTrip(ts, sums);
  ChunkInfo info = Inspect(AppendAll(ts, sums).bytes());
  REQUIRE(info.value_encoding == 2);
  REQUIRE(info.decimal_scale == 6);
  REQUIRE(info.exceptions == 0);
  // Starting at 0 (scale 0), then small decimals: raised early.
  std::vector<double> kv(120);
  for (size_t i = 0; i < 120; ++i) kv[i] = i == 0 ? 0.0 : 0.5 + 0.0001 * static_cast<double>(i % 37);
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
  for (size_t i = 10; i < 120; i += 2) vs[i] = std::nan("") ;
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
  const std::vector<Timestamp> ts = {1767225600000, 1767225615000,
                                     1767225630000, 1767225645003,
                                     1767225660000, 1767225900000,
                                     1767225915000, 1767225930000};
  const std::vector<double> vs = {
      447.055, 400.482, std::bit_cast<double>(uint64_t{0xfff8000000000000}),
      -0.0, 1e300, StaleNaN(), 412.089, 412.089};
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
    for (auto& v : counter) v = c += static_cast<double>(130000 + rng() % 10000);
    OpenChunk ctr = AppendAll(ts, counter);
    INFO("power " << power.MemoryBytes() << " (" << power.bytes().size()
                  << " used), counter " << ctr.MemoryBytes() << " ("
                  << ctr.bytes().size() << " used)");
    REQUIRE(power.MemoryBytes() <= 350);
    REQUIRE(ctr.MemoryBytes() <= 300);
    // Slack: at most 32 bytes (capacities step by 16-32 bytes here).
    REQUIRE(power.MemoryBytes() - sizeof(OpenChunk) <= power.bytes().size() + 32);
  }
}

TEST_CASE("Open chunk append after every decoded state", "[chunk][open]") {
  // Every prefix decodes, across raises, exceptions and the XOR switch.
  std::mt19937_64 rng(17);
  auto ts = RegularTimes(200);
  std::vector<double> vs(200);
  for (size_t i = 0; i < vs.size(); ++i) {
    switch (rng() % 8) {
      case 0: vs[i] = kSpecials[rng() % std::size(kSpecials)]; break;
      case 1: vs[i] = std::strtod(DecimalText(static_cast<int64_t>(rng() % 100000), static_cast<int>(rng() % 8)).c_str(), nullptr); break;
      default: vs[i] = std::strtod(DecimalText(450000 + static_cast<int64_t>(rng() % 1000), 3).c_str(), nullptr); break;
    }
  }
  OpenChunk open;
  for (size_t i = 0; i < ts.size(); ++i) {
    open.Append(ts[i], vs[i]);
    REQUIRE(Bits(open.last_value()) == Bits(vs[i]));
    REQUIRE(open.min_time() == ts[0]);
    REQUIRE(open.max_time() == ts[i]);
    RequireDecodesTo(open.bytes(), std::vector<Timestamp>(ts.begin(), ts.begin() + i + 1),
                     std::vector<double>(vs.begin(), vs.begin() + i + 1));
  }
}

}  // namespace
}  // namespace vigil::storage::internal
