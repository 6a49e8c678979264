// -----------------------------------------------------------------------------
// File: chunk_values.h
// -----------------------------------------------------------------------------
//
// Value-column codecs shared by open and sealed chunks: Gorilla XOR (as a
// template over the bit sink, so the open chunk's own buffer and BitWriter
// share it) and the sealed value column, which picks the smallest of
// constant, XOR and decimal-scaled integers (storage/FORMAT.md).
#ifndef VIGIL_STORAGE_INTERNAL_CHUNK_VALUES_H_
#define VIGIL_STORAGE_INTERNAL_CHUNK_VALUES_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "storage/internal/bitstream.h"

namespace vigil::storage::internal {

// DO NOT CHANGE: stored in the 2-bit value-encoding field of sealed chunks.
enum class ValueEncoding : uint8_t { kConst = 0, kXor = 1, kDecimal = 2 };

// Largest decimal scale k (values m / 10^k); 10^22 is the largest exact
// power of ten in a double.
inline constexpr int kMaxDecimalScale = 22;
// Largest decimal mantissa magnitude: every integer up to 2^53 is exact in
// a double.
inline constexpr int64_t kMaxMantissa = int64_t{1} << 53;

// Gorilla XOR state: the previous value's bits and the reused window.
struct XorState {
  uint64_t prev = 0;
  uint8_t leading = 0xff;  // 0xff: no window yet
  uint8_t trailing = 0;
};

// Appends `cur` after st->prev: '0' if equal; '10' + bits inside the
// previous window; '11' + 5-bit leading zeros + 6-bit length (64 -> 0) +
// the meaningful bits. `write(bits, nbits)` is the bit sink.
template <typename WriteFn>
void XorAppend(XorState* st, uint64_t cur, WriteFn&& write) {
  uint64_t x = st->prev ^ cur;
  st->prev = cur;
  if (x == 0) {
    write(0, 1);
    return;
  }
  int leading = std::countl_zero(x);
  int trailing = std::countr_zero(x);
  if (leading > 31) leading = 31;
  if (st->leading != 0xff && leading >= st->leading &&
      trailing >= st->trailing) {
    int sig = 64 - st->leading - st->trailing;
    write(0b10, 2);
    write(x >> st->trailing, sig);
    return;
  }
  int sig = 64 - leading - trailing;
  write(0b11, 2);
  write(static_cast<uint64_t>(leading), 5);
  write(static_cast<uint64_t>(sig & 63), 6);
  write(x >> trailing, sig);
  st->leading = static_cast<uint8_t>(leading);
  st->trailing = static_cast<uint8_t>(trailing);
}

// Reads one XOR-coded value after st->prev. Returns false on a malformed
// window (overflow is reported by the reader).
inline bool XorRead(BitReader* r, XorState* st) {
  if (!r->ReadBit()) return true;
  if (r->ReadBit()) {
    int leading = static_cast<int>(r->ReadBits(5));
    int sig = static_cast<int>(r->ReadBits(6));
    if (sig == 0) sig = 64;
    if (leading + sig > 64) return false;
    st->leading = static_cast<uint8_t>(leading);
    st->trailing = static_cast<uint8_t>(64 - leading - sig);
  } else if (st->leading == 0xff) {
    return false;  // reuse of a window that does not exist
  }
  int sig = 64 - st->leading - st->trailing;
  st->prev ^= r->ReadBits(sig) << st->trailing;
  return true;
}

// std::nearbyint(s) in the default rounding mode (to nearest, ties to
// even), without the library call (the sealed encoder and the open chunk
// round once per value and scale tried): below 2^52, adding and
// subtracting 2^52 rounds to an integer; from 2^52 on every double is one.
inline double RoundToInteger(double s) {
  const double a = __builtin_fabs(s);
  if (!(a < 0x1p52)) return s;
  return __builtin_copysign((a + 0x1p52) - 0x1p52, s);
}

// Smallest k in [0, kMaxDecimalScale] such that v == double(m) / 10^k
// bitwise for an integer m with |m| <= 2^53; stores m. -1 if none (NaN,
// Inf, -0.0, too many digits, too large).
int DecimalScale(double v, int64_t* m);

// Powers of ten for the decimal scales (all exact doubles).
inline constexpr double kPow10[kMaxDecimalScale + 1] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// The decoded value of mantissa m at scale k: double(m) / 10^k, one
// correctly rounded division (none at k == 0, where it would be exact).
// Inline: decoders call it once per sample.
inline double DecimalValue(int64_t m, int k) {
  const double x = static_cast<double>(m);
  return k == 0 ? x : x / kPow10[k];
}

// Encodes vs[0..n) as the smallest value column; appends to *w.
// `scratch` is reused working memory.
void WriteValueColumn(const double* vs, size_t n, std::vector<int64_t>* scratch,
                      BitWriter* w);

// Reads a value column of n values into out[0..n). `scratch` is reused
// working memory. Returns false on malformed input. With `skip` > 0 the
// whole column is still read and checked, but out[0..skip) may be left
// unset (it saves converting values the caller drops).
[[nodiscard]] bool ReadValueColumn(BitReader* r, size_t n, double* out,
                                   std::vector<int64_t>* scratch,
                                   size_t skip = 0);

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_CHUNK_VALUES_H_
