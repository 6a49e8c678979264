// Decoding of the open chunk formats kOpenXor (legacy) and kOpenDelta
// (storage/FORMAT.md).
#include <bit>

#include "fmt/format.h"
#include "storage/internal/chunk.h"
#include "storage/internal/chunk_open.h"
#include "storage/internal/chunk_values.h"

namespace vigil::storage::internal::open_chunk {
namespace {

int64_t SignExtend(uint64_t u, int width) {
  if (width == 0) return 0;
  if (width >= 64) return S(u);
  return S(u << (64 - width)) >> (64 - width);
}

absl::Status Corrupt(std::string_view what) {
  return absl::DataLossError(fmt::format("cannot decode chunk: {}", what));
}

absl::Status Truncated(size_t n, size_t size) {
  return Corrupt(
      fmt::format("open chunk of {} samples truncated at {} bytes", n, size));
}

// Reads sample i's timestamp code (i >= 1). `pred` is the delta the dod is
// relative to.
uint64_t ReadDelta(BitReader* r, size_t i, uint64_t pred) {
  if (i == 1) return U(r->ReadVarint());
  const int width = kDodWidth[r->ReadUnary(5)];
  return pred + U(SignExtend(r->ReadBits(width), width));
}

// A decimal sample (i >= 2) of the common shape, read with one 8-byte
// load instead of four: a delta-of-delta of at most 20 bits and a Rice code
// without escape, together within the next 57 bits and the chunk. Adds the
// timestamp delta to *t, sets *u to the zigzag residual and returns true;
// false, with nothing consumed, for any other shape.
inline bool FastDecimalSample(BitReader* r, uint64_t pred, int rk, uint64_t* t,
                              uint64_t* u) {
  const uint64_t w = r->PeekBits();
  const int c = std::countl_one(w);
  if (c > 3) return false;  // a 32- or 64-bit delta-of-delta
  const int prefix = c + 1;
  const int width = kDodWidth[c];
  const uint64_t rest = w << (prefix + width);
  const int q = std::countl_one(rest);
  if (q >= kRiceLimit) return false;  // an escape
  const int used = prefix + width + q + 1 + rk;
  if (used > 57 || static_cast<uint64_t>(used) > r->bits_left()) return false;
  const uint64_t dod = width == 0 ? 0 : (w << prefix) >> (64 - width);
  *t += pred + U(SignExtend(dod, width));
  *u = (uint64_t{static_cast<uint32_t>(q)} << rk) |
       (rk == 0 ? 0 : (rest << (q + 1)) >> (64 - rk));
  r->SkipBits(used);
  return true;
}

absl::Status DecodeXor(std::string_view chunk, size_t n, Timestamp* ts,
                       double* vs, size_t padding) {
  BitReader r(chunk.substr(kXorHeaderBytes), padding);
  uint64_t t = U(r.ReadVarint());
  XorState st{r.ReadBits(64)};
  ts[0] = S(t);
  vs[0] = std::bit_cast<double>(st.prev);
  uint64_t delta = 0;
  for (size_t i = 1; i < n; ++i) {
    delta = ReadDelta(&r, i, delta);
    t += delta;
    if (!XorRead(&r, &st)) return Corrupt("bad XOR window in open chunk");
    if (r.overflow()) break;
    ts[i] = S(t);
    vs[i] = std::bit_cast<double>(st.prev);
  }
  if (r.overflow()) return Truncated(n, chunk.size());
  return absl::OkStatus();
}

absl::Status DecodeDelta(std::string_view chunk, size_t n, Timestamp* ts,
                         double* vs, Stats* stats, Timestamp from,
                         size_t padding) {
  if (chunk.size() < kDeltaHeaderBytes) {
    return Corrupt(fmt::format("want {} header bytes; have {}",
                               kDeltaHeaderBytes, chunk.size()));
  }
  const auto mode = static_cast<uint8_t>(chunk[3]);
  const bool xor_mode = mode == kModeXor;
  if (!xor_mode && mode > kMaxDecimalScale) {
    return Corrupt(fmt::format("bad open chunk value mode {:#04x}", mode));
  }
  uint64_t t = 0;
  for (int i = 4; i < 12; ++i) t = (t << 8) | static_cast<uint8_t>(chunk[i]);
  BitReader r(chunk.substr(kDeltaHeaderBytes), padding);
  stats->value_encoding = xor_mode ? 1 : 2;
  stats->scale = xor_mode ? 0 : mode;
  stats->exceptions = 0;
  ts[0] = S(t);
  XorState xs;
  DecimalState ds;
  if (xor_mode) {
    xs.prev = r.ReadBits(64);
    vs[0] = std::bit_cast<double>(xs.prev);
  } else if (r.ReadBit()) {
    vs[0] = std::bit_cast<double>(r.ReadBits(64));
    ++stats->exceptions;
  } else {
    ds.m = r.ReadVarint();
    vs[0] = DecimalValue(ds.m, mode);
  }
  ds.cost = InitialCost(ds.m);
  int64_t delta = 0;
  for (size_t i = 1; i < n; ++i) {
    uint64_t fast_u;
    if (!xor_mode && i >= 2 &&
        FastDecimalSample(&r, U(int64_t{Clamp32(delta)}), RiceParam(ds), &t,
                          &fast_u)) {
      delta = S(t - U(ts[i - 1]));
      Update(&ds, U(UnZigZag(fast_u)) + U(int64_t{ds.mean}), fast_u, false);
      if (S(t) >= from) vs[i] = DecimalValue(ds.m, mode);
      ts[i] = S(t);
      continue;
    }
    t += ReadDelta(&r, i, U(int64_t{Clamp32(delta)}));
    delta = S(t - U(ts[i - 1]));
    if (xor_mode) {
      if (!XorRead(&r, &xs)) return Corrupt("bad XOR window in open chunk");
      vs[i] = std::bit_cast<double>(xs.prev);
    } else {
      const int rk = RiceParam(ds);
      const uint64_t q = r.ReadUnary(kRiceLimit);
      uint64_t u;
      if (q < static_cast<uint64_t>(kRiceLimit)) {
        u = (q << rk) | r.ReadBits(rk);
      } else {
        const uint64_t w = r.ReadBits(7);
        if (w == kEscapeRaw) {
          vs[i] = std::bit_cast<double>(r.ReadBits(64));
          ++stats->exceptions;
          if (r.overflow()) break;
          ts[i] = S(t);
          continue;
        }
        if (w == 0 || w > 64) return Corrupt("bad escape in open chunk");
        u = r.ReadBits(static_cast<int>(w));
      }
      const uint64_t d = U(UnZigZag(u)) + U(int64_t{ds.mean});
      Update(&ds, d, u, i == 1);
      if (S(t) >= from) vs[i] = DecimalValue(ds.m, mode);
    }
    if (r.overflow()) break;
    ts[i] = S(t);
  }
  if (r.overflow()) return Truncated(n, chunk.size());
  return absl::OkStatus();
}

}  // namespace

absl::Status DecodeOpen(std::string_view chunk, size_t n, Timestamp* ts,
                        double* vs, Stats* stats, Timestamp from,
                        size_t padding) {
  *stats = Stats();
  if (n == 0) return absl::OkStatus();
  if (static_cast<uint8_t>(chunk[0]) ==
      static_cast<uint8_t>(ChunkFormat::kOpenXor)) {
    return DecodeXor(chunk, n, ts, vs, padding);
  }
  return DecodeDelta(chunk, n, ts, vs, stats, from, padding);
}

}  // namespace vigil::storage::internal::open_chunk
