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

absl::Status DecodeXor(std::string_view chunk, size_t n, Timestamp* ts,
                       double* vs) {
  BitReader r(chunk.substr(kXorHeaderBytes));
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
                         double* vs, Stats* stats, Timestamp from) {
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
  BitReader r(chunk.substr(kDeltaHeaderBytes));
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
                        double* vs, Stats* stats, Timestamp from) {
  *stats = Stats();
  if (n == 0) return absl::OkStatus();
  if (static_cast<uint8_t>(chunk[0]) ==
      static_cast<uint8_t>(ChunkFormat::kOpenXor)) {
    return DecodeXor(chunk, n, ts, vs);
  }
  return DecodeDelta(chunk, n, ts, vs, stats, from);
}

}  // namespace vigil::storage::internal::open_chunk
