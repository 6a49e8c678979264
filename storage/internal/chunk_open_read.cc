// Decoding of the open chunk formats kOpenXor (legacy) and kOpenDelta
// (storage/FORMAT.md).
#include <bit>
#include <cstring>

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

absl::Status NotAscending(size_t i) {
  return Corrupt(fmt::format("timestamps not ascending at sample {}", i));
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

// The state of a kOpenDelta decimal decoder that FastDecimalRun advances.
struct DecimalCursor {
  uint64_t pos;     // bit position in the reader
  uint64_t t;       // the last sample's timestamp
  int64_t delta;    // and its delta from the one before
  DecimalState ds;  // the value column's state after the last sample
  size_t i;         // the next sample
  size_t k;         // samples kept so far (at or after `from`)
};

// Decodes decimal samples c->i.. (i >= 2) of the common shape until one is
// not (it is left unread, for the general loop) or all n are read. The
// common shape: a delta-of-delta of at most 20 bits and a Rice code
// without escape, together within the next 57 bits and the chunk, read
// with one 8-byte load instead of four. Out of line, with its state in
// locals, so that the compiler keeps all of it in registers (the general
// loop's reader escapes into calls): ~15 % faster on a live query's open
// chunk (chunk_bench BM_DecodeOpenTail). Returns false if a timestamp did
// not ascend (c->i is that sample).
[[gnu::noinline]] bool FastDecimalRun(const BitReader& r, size_t n, int mode,
                                      Timestamp from, Timestamp* ts, double* vs,
                                      DecimalCursor* c) {
  const uint8_t* const data = r.data();
  const size_t readable = r.readable();
  const uint64_t size_bits = r.size_bits();
  uint64_t pos = c->pos, t = c->t;
  int64_t delta = c->delta;
  DecimalState ds = c->ds;
  size_t i = c->i, k = c->k;
  bool ok = true;
  for (; i < n; ++i) {
    const size_t byte = pos >> 3;
    if (byte + 8 > readable) break;
    uint64_t w;
    std::memcpy(&w, data + byte, 8);
    if constexpr (std::endian::native == std::endian::little) {
      w = __builtin_bswap64(w);
    }
    w <<= (pos & 7);
    const int cl = std::countl_one(w);
    if (cl > 3) break;
    const int prefix = cl + 1;
    const int width = static_cast<int>((0x140E0700u >> (8 * cl)) & 0xFF);
    const uint64_t rest = w << (prefix + width);
    const int q = std::countl_one(rest);
    if (q >= kRiceLimit) break;
    const int rk = RiceParam(ds);
    const int used = prefix + width + q + 1 + rk;
    if (used > 57 || static_cast<uint64_t>(used) > size_bits - pos) break;
    const uint64_t dod = width == 0 ? 0 : (w << prefix) >> (64 - width);
    const uint64_t next =
        t + U(int64_t{Clamp32(delta)}) + U(SignExtend(dod, width));
    const uint64_t u = (uint64_t{static_cast<uint32_t>(q)} << rk) |
                       (rk == 0 ? 0 : (rest << (q + 1)) >> (64 - rk));
    pos += static_cast<uint64_t>(used);
    if (S(next) <= S(t)) {
      ok = false;
      break;
    }
    delta = S(next - t);
    t = next;
    Update(&ds, U(UnZigZag(u)) + U(int64_t{ds.mean}), u, false);
    if (S(t) >= from) {
      ts[k] = S(t);
      vs[k] = DecimalValue(ds.m, mode);
      ++k;
    }
  }
  c->pos = pos;
  c->t = t;
  c->delta = delta;
  c->ds = ds;
  c->i = i;
  c->k = k;
  return ok;
}

absl::Status DecodeXor(std::string_view chunk, size_t n, Timestamp* ts,
                       double* vs, size_t* kept, Timestamp from,
                       size_t padding) {
  BitReader r(chunk.substr(kXorHeaderBytes), padding);
  uint64_t t = U(r.ReadVarint());
  XorState st{r.ReadBits(64)};
  size_t k = 0;
  if (S(t) >= from) {
    ts[0] = S(t);
    vs[0] = std::bit_cast<double>(st.prev);
    k = 1;
  }
  uint64_t delta = 0, prev = t;
  for (size_t i = 1; i < n; ++i) {
    delta = ReadDelta(&r, i, delta);
    t += delta;
    if (!XorRead(&r, &st)) return Corrupt("bad XOR window in open chunk");
    if (r.overflow()) break;
    if (S(t) <= S(prev)) return NotAscending(i);
    prev = t;
    if (S(t) >= from) {
      ts[k] = S(t);
      vs[k] = std::bit_cast<double>(st.prev);
      ++k;
    }
  }
  if (r.overflow()) return Truncated(n, chunk.size());
  *kept = k;
  return absl::OkStatus();
}

absl::Status DecodeDelta(std::string_view chunk, size_t n, Timestamp* ts,
                         double* vs, Stats* stats, size_t* kept, Timestamp from,
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
  XorState xs;
  DecimalState ds;
  double v0;
  if (xor_mode) {
    xs.prev = r.ReadBits(64);
    v0 = std::bit_cast<double>(xs.prev);
  } else if (r.ReadBit()) {
    v0 = std::bit_cast<double>(r.ReadBits(64));
    ++stats->exceptions;
  } else {
    ds.m = r.ReadVarint();
    v0 = DecimalValue(ds.m, mode);
  }
  size_t k = 0;  // samples kept (at or after `from`)
  if (S(t) >= from) {
    ts[0] = S(t);
    vs[0] = v0;
    k = 1;
  }
  ds.cost = InitialCost(ds.m);
  int64_t delta = 0;
  uint64_t prev = t;  // the previous sample's timestamp
  for (size_t i = 1; i < n; ++i) {
    if (!xor_mode && i >= 2) {
      // Most samples: a run of the common shape, decoded in registers.
      DecimalCursor cur{r.pos(), t, delta, ds, i, k};
      if (!FastDecimalRun(r, n, mode, from, ts, vs, &cur)) {
        return NotAscending(cur.i);
      }
      r.Seek(cur.pos);
      t = prev = cur.t;
      delta = cur.delta;
      ds = cur.ds;
      k = cur.k;
      i = cur.i;
      if (i >= n) break;
    }
    t += ReadDelta(&r, i, U(int64_t{Clamp32(delta)}));
    delta = S(t - prev);
    double v = 0;
    if (xor_mode) {
      if (!XorRead(&r, &xs)) return Corrupt("bad XOR window in open chunk");
      v = std::bit_cast<double>(xs.prev);
    } else {
      const int rk = RiceParam(ds);
      const uint64_t q = r.ReadUnary(kRiceLimit);
      uint64_t u = 0;
      bool raw = false;
      if (q < static_cast<uint64_t>(kRiceLimit)) {
        u = (q << rk) | r.ReadBits(rk);
      } else {
        const uint64_t w = r.ReadBits(7);
        if (w == kEscapeRaw) {
          v = std::bit_cast<double>(r.ReadBits(64));
          ++stats->exceptions;
          raw = true;
        } else if (w == 0 || w > 64) {
          return Corrupt("bad escape in open chunk");
        } else {
          u = r.ReadBits(static_cast<int>(w));
        }
      }
      if (!raw) {
        const uint64_t d = U(UnZigZag(u)) + U(int64_t{ds.mean});
        Update(&ds, d, u, i == 1);
        if (S(t) >= from) v = DecimalValue(ds.m, mode);
      }
    }
    if (r.overflow()) break;
    if (S(t) <= S(prev)) return NotAscending(i);
    prev = t;
    if (S(t) >= from) {
      ts[k] = S(t);
      vs[k] = v;
      ++k;
    }
  }
  if (r.overflow()) return Truncated(n, chunk.size());
  *kept = k;
  return absl::OkStatus();
}

}  // namespace

absl::Status DecodeOpen(std::string_view chunk, size_t n, Timestamp* ts,
                        double* vs, Stats* stats, size_t* kept, Timestamp from,
                        size_t padding) {
  *stats = Stats();
  *kept = 0;
  if (n == 0) return absl::OkStatus();
  if (static_cast<uint8_t>(chunk[0]) ==
      static_cast<uint8_t>(ChunkFormat::kOpenXor)) {
    return DecodeXor(chunk, n, ts, vs, kept, from, padding);
  }
  return DecodeDelta(chunk, n, ts, vs, stats, kept, from, padding);
}

}  // namespace vigil::storage::internal::open_chunk
