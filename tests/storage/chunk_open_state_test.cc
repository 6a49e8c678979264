// OpenChunk::ExportState / Restore: a chunk rebuilt from its bytes and
// encoder state continues exactly as the original would have; states that
// do not fit their bytes are rejected.
#include <cmath>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/storage/chunk_testutil.h"

namespace vigil::storage::internal {
namespace {

using namespace testing;  // NOLINT: the shared chunk test helpers

// One random series of the kinds the head sees: decimal gauges, counters,
// arbitrary floats, specials, scale raises, conversions to XOR, and
// irregular timestamps.
Samples RandomSeries(std::mt19937_64& rng, size_t n) {
  std::uniform_int_distribution<int> pick(0, 99);
  const int kind = pick(rng) % 7;
  const int digits = pick(rng) % 5;
  std::vector<Timestamp> ts(n);
  std::vector<double> vs(n);
  Timestamp t = pick(rng) < 10 ? -86400000 * int64_t{pick(rng) + 1}
                               : 1767225600000 + pick(rng);
  const int64_t step = pick(rng) < 20 ? 1 : 15000;
  double x = pick(rng) * 10.0;
  int64_t counter = pick(rng);
  for (size_t i = 0; i < n; ++i) {
    const int r = pick(rng);
    // Mostly regular, with jitter, missed scrapes and rare huge jumps.
    int64_t d = step;
    if (r < 15) d = step + pick(rng) - 50;
    if (r >= 15 && r < 20) d = step * (2 + pick(rng) % 5);
    if (r == 20) d = int64_t{1} << (31 + pick(rng) % 20);
    if (d < 1) d = 1;
    t += i == 0 ? 0 : d;
    ts[i] = t;
    double v = 0;
    switch (kind) {
      case 0:  // k-digit decimal gauge
        x += (pick(rng) - 50) / 10.0;
        v = std::strtod(
            DecimalText(std::llround(x * std::pow(10, digits)), digits).c_str(),
            nullptr);
        break;
      case 1:  // counter with resets
        counter = r < 2 ? 0 : counter + pick(rng) % 30;
        v = static_cast<double>(counter);
        break;
      case 2:  // arbitrary floats (XOR from the start)
        v = std::ldexp(1.0 + pick(rng) / 97.0, pick(rng) % 40 - 20) / 3;
        break;
      case 3:  // decimals with specials
        v = r < 10 ? kSpecials[static_cast<size_t>(pick(rng)) %
                               std::size(kSpecials)]
                   : static_cast<double>(pick(rng)) / 4;
        break;
      case 4:  // scale raises: more digits over time
        v = std::strtod(
            DecimalText(pick(rng) + 1000 * int64_t(i),
                        static_cast<int>(std::min<size_t>(i / 20, 8)))
                .c_str(),
            nullptr);
        break;
      case 5:  // decimal, then dense non-decimal values (to XOR)
        v = i < n / 3 ? static_cast<double>(pick(rng)) : 1.0 / (3 + pick(rng));
        break;
      default:  // anything, sample by sample
        v = r < 25   ? kSpecials[static_cast<size_t>(r) % std::size(kSpecials)]
            : r < 50 ? static_cast<double>(r)
            : r < 75 ? r / 8.0
                     : 1.0 / r;
        break;
    }
    vs[i] = v;
  }
  return {ts, vs};
}

void RequireSameChunk(const OpenChunk& a, const OpenChunk& b) {
  REQUIRE(a.bytes() == b.bytes());
  REQUIRE(a.ExportState() == b.ExportState());
  REQUIRE(a.num_samples() == b.num_samples());
  REQUIRE(a.min_time() == b.min_time());
  REQUIRE(a.max_time() == b.max_time());
  REQUIRE(Bits(a.last_value()) == Bits(b.last_value()));
}

TEST_CASE("A restored open chunk appends exactly like the original",
          "[chunk][open][state]") {
  std::mt19937_64 rng(20261202);
  for (int series = 0; series < 600; ++series) {
    const size_t n = 2 + rng() % 500;
    const size_t k = 1 + rng() % (n - 1);
    auto [ts, vs] = RandomSeries(rng, n);
    INFO("series " << series << ": " << n << " samples, restored after " << k);
    OpenChunk original, before;
    for (size_t i = 0; i < k; ++i) {
      original.Append(ts[i], vs[i]);
      before.Append(ts[i], vs[i]);
    }
    const std::string bytes(before.bytes());
    const OpenChunkState state = before.ExportState();
    before = OpenChunk();  // nothing may point into the original
    absl::StatusOr<OpenChunk> restored = OpenChunk::Restore(bytes, state);
    INFO(restored.status().ToString());
    REQUIRE(restored.ok());
    RequireSameChunk(*restored, original);
    for (size_t i = k; i < n; ++i) {
      original.Append(ts[i], vs[i]);
      restored->Append(ts[i], vs[i]);
    }
    RequireSameChunk(*restored, original);
    RequireDecodesTo(restored->bytes(), ts, vs);
    // A copy of a restored chunk is a chunk like any other.
    OpenChunk copy = *restored;
    RequireSameChunk(copy, original);
  }
}

TEST_CASE("Restored chunks cover every value mode and transition",
          "[chunk][open][state]") {
  // Deterministic cases the random ones might miss: a restore right
  // before a scale raise, before the conversion to XOR, after a trailing
  // exception, and after a single sample of each mode.
  const auto ts = RegularTimes(200);
  std::vector<std::vector<double>> cases;
  std::vector<double> raise(200), to_xor(200), trailing(200);
  for (size_t i = 0; i < 200; ++i) {
    raise[i] = i < 100 ? static_cast<double>(i) : i + 0.25;
    to_xor[i] = i < 50 ? static_cast<double>(i) : 1.0 / (3 + i);
    trailing[i] = i % 10 == 9 ? std::bit_cast<double>(kStaleNaNBits) : i * 0.5;
  }
  cases = {raise, to_xor, trailing, std::vector<double>(200, 1.0 / 3),
           std::vector<double>(200, std::nan(""))};
  for (size_t c = 0; c < cases.size(); ++c) {
    for (size_t k : {size_t{1}, size_t{2}, size_t{49}, size_t{50}, size_t{99},
                     size_t{100}, size_t{109}, size_t{199}}) {
      INFO("case " << c << " restored after " << k);
      OpenChunk original;
      for (size_t i = 0; i < k; ++i) original.Append(ts[i], cases[c][i]);
      auto restored =
          OpenChunk::Restore(original.bytes(), original.ExportState());
      REQUIRE(restored.ok());
      for (size_t i = k; i < 200; ++i) {
        original.Append(ts[i], cases[c][i]);
        restored->Append(ts[i], cases[c][i]);
      }
      RequireSameChunk(*restored, original);
      RequireDecodesTo(restored->bytes(), ts, cases[c]);
    }
  }
}

void RequireRejected(std::string_view bytes, const OpenChunkState& state,
                     std::string_view why) {
  INFO("expected rejection: " << why);
  absl::StatusOr<OpenChunk> c = OpenChunk::Restore(bytes, state);
  REQUIRE_FALSE(c.ok());
  INFO(c.status().ToString());
  REQUIRE(c.status().code() == absl::StatusCode::kDataLoss);
  REQUIRE(std::string(c.status().message()).rfind("open chunk state: ", 0) ==
          0);
  REQUIRE(std::string(c.status().message()).find(why) != std::string::npos);
}

OpenChunk Chunk(const std::vector<double>& vs) {
  const auto ts = RegularTimes(vs.size());
  OpenChunk c;
  for (size_t i = 0; i < vs.size(); ++i) c.Append(ts[i], vs[i]);
  return c;
}

TEST_CASE("States that do not fit their bytes are rejected",
          "[chunk][open][state]") {
  std::vector<double> decimals(40), floats(40);
  for (size_t i = 0; i < 40; ++i) {
    decimals[i] = i % 7 == 6 ? std::nan("") : i * 0.5;
    floats[i] = 1.0 / (3 + i);
  }
  const OpenChunk dec = Chunk(decimals), xr = Chunk(floats);
  const std::string db(dec.bytes()), xb(xr.bytes());
  const OpenChunkState ds = dec.ExportState(), xs = xr.ExportState();
  REQUIRE(OpenChunk::Restore(db, ds).ok());
  REQUIRE(OpenChunk::Restore(xb, xs).ok());

  OpenChunkState s = ds;
  s.len = ds.len + 1;
  RequireRejected(db, s, "length");
  RequireRejected(db.substr(0, db.size() - 1), ds, "length");
  s = ds;
  s.len = 12;
  RequireRejected(db.substr(0, 12), s, "header");
  RequireRejected("", OpenChunkState(), "header");
  s = ds;
  s.num_samples = static_cast<uint16_t>(ds.num_samples + 1);
  RequireRejected(db, s, "samples");
  s.num_samples = 0;
  RequireRejected(db, s, "samples");
  for (char format : {'\x01', '\x02', '\x00', '\x04'}) {
    std::string b = db;
    b[0] = format;
    RequireRejected(b, ds, "format byte");
  }
  {  // an open chunk whose count says far fewer samples than its bytes hold
    std::string b = db;
    b[1] = 0;
    b[2] = 1;
    s = ds;
    s.num_samples = 1;
    RequireRejected(b, s, "more than");
  }
  s = ds;
  s.free_bits = 8;
  RequireRejected(db, s, "free bits");
  {
    std::string b = db;
    b.back() = static_cast<char>(b.back() | 1);
    s = ds;
    s.free_bits = ds.free_bits == 0 ? 1 : ds.free_bits;
    RequireRejected(b, s, "not zero");
  }
  {
    std::string b = db;
    b[3] = 23;  // beyond kMaxDecimalScale
    RequireRejected(b, ds, "value mode");
    b[3] = static_cast<char>(0x80);  // XOR bytes, decimal flags
    RequireRejected(b, ds, "do not match");
  }
  s = ds;
  s.flags |= 1;  // XOR flag on a decimal chunk
  RequireRejected(db, s, "do not match");
  s = ds;
  s.flags = static_cast<uint8_t>((41 << 2) | (ds.flags & 2));  // 41 > 40
  RequireRejected(db, s, "exceptions");
  s = ds;
  s.flags = 2;  // the last value an exception, but none counted
  RequireRejected(db, s, "exceptions");
  s = ds;
  s.aux = 64 * 16;
  RequireRejected(db, s, "cost");
  s = ds;
  s.last_v = (uint64_t{1} << 53) + 1;
  RequireRejected(db, s, "mantissa");
  s = ds;
  s.last_t = dec.min_time();
  RequireRejected(db, s, "last time");
  s = ds;
  s.last_t = dec.min_time() + 38;  // 40 samples need at least 39 ms
  RequireRejected(db, s, "last time");
  s = ds;
  s.t_delta = 0;
  RequireRejected(db, s, "last time");
  s = ds;
  s.t_delta = -5;
  RequireRejected(db, s, "last time");

  s = xs;
  s.flags = 1 | 2;  // an exception flag in XOR mode
  RequireRejected(xb, s, "XOR chunk with flags");
  s = xs;
  s.v_mean = 3;
  RequireRejected(xb, s, "XOR chunk with flags");
  s = xs;
  s.aux = (32 << 8) | 1;  // leading zeros are capped at 31
  RequireRejected(xb, s, "XOR window");
  s = xs;
  s.aux = (20 << 8) | 44;  // no meaningful bit left
  RequireRejected(xb, s, "XOR window");
  s = xs;
  s.flags = 0;  // decimal flags on XOR bytes
  RequireRejected(xb, s, "do not match");

  // One sample: no delta, no mean.
  const OpenChunk one = Chunk({5});
  s = one.ExportState();
  s.t_delta = 15000;
  RequireRejected(one.bytes(), s, "last time");
  s = one.ExportState();
  s.v_mean = 1;
  RequireRejected(one.bytes(), s, "mean");
}

TEST_CASE("Random states never crash Restore or the appends after it",
          "[chunk][open][state]") {
  std::mt19937_64 rng(7);
  std::vector<double> vs(60);
  for (size_t i = 0; i < 60; ++i) vs[i] = i % 5 == 0 ? 1.0 / (i + 3) : i;
  const OpenChunk base = Chunk(vs);
  const std::string bytes(base.bytes());
  int accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    OpenChunkState s = base.ExportState();
    switch (rng() % 8) {
      case 0:
        s.free_bits = static_cast<uint8_t>(rng());
        break;
      case 1:
        s.flags = static_cast<uint8_t>(rng());
        break;
      case 2:
        s.aux = static_cast<uint16_t>(rng());
        break;
      case 3:
        s.last_t = static_cast<Timestamp>(rng());
        break;
      case 4:
        s.last_v = rng();
        break;
      case 5:
        s.t_delta = static_cast<int32_t>(rng());
        break;
      case 6:
        s.v_mean = static_cast<int32_t>(rng());
        break;
      default:
        s.num_samples = static_cast<uint16_t>(rng());
        break;
    }
    auto c = OpenChunk::Restore(bytes, s);
    if (!c.ok()) {
      REQUIRE(c.status().code() == absl::StatusCode::kDataLoss);
      continue;
    }
    ++accepted;
    // Whatever was accepted must take appends (a wrong but in-range state
    // may encode wrong values; it must never write out of bounds).
    Timestamp t = s.last_t;
    uint32_t appended = 0;
    for (int i = 0; i < 20 && t < kMaxTimestamp - 20000; ++i, ++appended) {
      t += 1 + static_cast<Timestamp>(rng() % 20000);
      c->Append(t, i % 3 == 0 ? 1.0 / (i + 7) : i * 0.25);
    }
    REQUIRE(c->num_samples() == s.num_samples + appended);
  }
  REQUIRE(accepted > 0);
}

}  // namespace
}  // namespace vigil::storage::internal
