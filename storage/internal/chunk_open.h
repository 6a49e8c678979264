// -----------------------------------------------------------------------------
// File: chunk_open.h
// -----------------------------------------------------------------------------
//
// Internals of the open (appendable) chunk formats shared by the encoder
// (OpenChunk, chunk_open.cc) and the decoder (chunk_open_read.cc). The
// adaptive state updates below must be identical on both sides: they are
// part of the format (storage/FORMAT.md, "kOpenDelta").
#ifndef VIGIL_STORAGE_INTERNAL_CHUNK_OPEN_H_
#define VIGIL_STORAGE_INTERNAL_CHUNK_OPEN_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "core/time.h"
#include "storage/internal/bitstream.h"

namespace vigil::storage::internal::open_chunk {

// kOpenXor: format byte + uint16 count. kOpenDelta adds the value mode byte
// and t0 as a big-endian int64.
inline constexpr size_t kXorHeaderBytes = 3;
inline constexpr size_t kDeltaHeaderBytes = 12;
// Value mode byte of kOpenDelta: 0..kMaxDecimalScale is the decimal scale.
inline constexpr uint8_t kModeXor = 0x80;

// Delta-of-delta buckets: a prefix of c one bits (then a zero bit unless
// c == 5) selects a two's-complement payload of kDodWidth[c] bits.
inline constexpr int kDodWidth[6] = {0, 7, 14, 20, 32, 64};

// Rice codes: a quotient of kRiceLimit or more is an escape: kRiceLimit one
// bits, then bits(7) E: E in 1..64 is the bit width of the zigzag residual
// that follows; E == kEscapeRaw means the raw 64 value bits follow.
inline constexpr int kRiceLimit = 20;
inline constexpr uint64_t kEscapeRaw = 127;
// Rice parameter tuning (see RiceParam / Update).
inline constexpr int kRiceBias = 0;
inline constexpr int kCostRate = 4;

inline int32_t Clamp32(int64_t v) {
  return v < INT32_MIN   ? INT32_MIN
         : v > INT32_MAX ? INT32_MAX
                         : static_cast<int32_t>(v);
}

// Cost estimates are in 1/kCostUnit bits (an exponential moving average of
// the bit width of the zigzag residual).
inline constexpr int kCostUnit = 16;

// The adaptive state of a decimal value column after the first sample.
struct DecimalState {
  int64_t m = 0;      // last mantissa
  int32_t mean = 0;   // predicted delta: moving mean of recent deltas
  uint16_t cost = 0;  // residual cost estimate
};

// Initial cost estimate from the first mantissa: deltas of about 1/16 of
// its magnitude.
inline uint16_t InitialCost(int64_t m0) {
  int bw = BitWidth(ZigZag(m0)) - 4;
  return static_cast<uint16_t>(bw < 0 ? 0 : bw * kCostUnit);
}

// Rice parameter for the next residual.
inline int RiceParam(const DecimalState& s) {
  return (s.cost + kRiceBias) / kCostUnit;
}

// Folds in a coded (non-exception) mantissa delta d, after coding
// zigzag(d - mean) as u. `first` is true for the delta of sample 1, which
// sets the mean exactly.
inline void Update(DecimalState* s, uint64_t d, uint64_t u, bool first) {
  const int x = BitWidth(u) * kCostUnit;
  s->cost = static_cast<uint16_t>(s->cost + (x - s->cost) / kCostRate);
  const int64_t sd = static_cast<int64_t>(d);
  if (first) {
    s->mean = Clamp32(sd);
  } else {
    // Moves 1/8 of the way, rounding away from zero so it converges.
    int64_t diff = int64_t{Clamp32(sd)} - s->mean;
    int64_t step = diff >= 0 ? (diff + 7) >> 3 : -((-diff + 7) >> 3);
    s->mean = static_cast<int32_t>(s->mean + step);
  }
  s->m = static_cast<int64_t>(static_cast<uint64_t>(s->m) + d);
}

// What a decoded open chunk held, for InspectChunk.
struct Stats {
  int value_encoding = -1;  // 1 XOR, 2 decimal (kOpenDelta only)
  int scale = 0;
  uint32_t exceptions = 0;
};

// Capacity of an OpenChunk buffer holding len bytes: a whole slab slot
// (slab.h: multiples of 8 bytes), in steps of 8 bytes up to 255, then of
// 1/16 to 1/8 of the length.
inline uint32_t Capacity(uint32_t len) {
  if (len <= 24) return 24;
  uint32_t step = (uint32_t{1} << (BitWidth(len) - 1)) >> 4;
  if (step < 8) step = 8;
  return (len + step - 1) / step * step;
}

// Decodes the n samples of an open chunk (kOpenXor or kOpenDelta; n read
// from its header by the caller), keeping those at or after `from`: they
// go to ts[0..*kept), vs[0..*kept) (ts and vs have room for n). The
// samples before `from` only advance the decoder (decimals skip their
// conversion). DataLoss on malformed input, timestamps that do not ascend
// included. `padding`: zero bytes readable after the chunk (BitReader).
absl::Status DecodeOpen(std::string_view chunk, size_t n, Timestamp* ts,
                        double* vs, Stats* stats, size_t* kept,
                        Timestamp from = kMinTimestamp, size_t padding = 0);

}  // namespace vigil::storage::internal::open_chunk

#endif  // VIGIL_STORAGE_INTERNAL_CHUNK_OPEN_H_
