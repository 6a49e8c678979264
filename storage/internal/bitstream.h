// -----------------------------------------------------------------------------
// File: bitstream.h
// -----------------------------------------------------------------------------
//
// MSB-first bit streams used by the chunk codecs (storage/FORMAT.md, "Chunk
// encodings"). BitWriter appends to a std::string; BitReader reads a byte
// range with bounds checks and never reads past it: reading beyond the end
// returns zero bits and latches overflow(), so a decoder may run a whole loop
// and check once. Both are thread-compatible.
#ifndef VIGIL_STORAGE_INTERNAL_BITSTREAM_H_
#define VIGIL_STORAGE_INTERNAL_BITSTREAM_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "storage/internal/coding.h"

namespace vigil::storage::internal {

// Two's-complement casts for the wrapping arithmetic of the encoders
// (ZigZag and UnZigZag are coding.h's).
inline uint64_t U(int64_t v) { return static_cast<uint64_t>(v); }
inline int64_t S(uint64_t v) { return static_cast<int64_t>(v); }
// Bits needed to hold u (0 for u == 0).
inline int BitWidth(uint64_t u) { return std::bit_width(u); }
// Bits a varint of u takes in a bit stream (8 per 7-bit group).
inline int VarintBits(uint64_t u) {
  int groups = u == 0 ? 1 : (BitWidth(u) + 6) / 7;
  return groups * 8;
}

class BitWriter {
 public:
  // Appends to *out, starting at its current end (byte aligned). Bits are
  // gathered in a register and appended a few bytes at a time: call
  // Finish() before reading *out.
  explicit BitWriter(std::string* out) : out_(out) {}

  // Writes the low `nbits` bits of `bits`, most significant first (higher
  // bits are ignored). REQUIRES: 0 <= nbits <= 64.
  void WriteBits(uint64_t bits, int nbits) {
    if (nbits > 32) {
      Put((bits >> 32) & (~uint64_t{0} >> (96 - nbits)), nbits - 32);
      Put(bits & 0xffffffffu, 32);
    } else if (nbits > 0) {
      Put(bits & ((uint64_t{1} << nbits) - 1), nbits);
    }
  }
  void WriteBit(bool b) { WriteBits(b ? 1 : 0, 1); }
  // 7 bits per group, high group first, continuation bit 1 = more follow.
  void WriteUvarint(uint64_t u) {
    int groups = VarintBits(u) / 8;
    for (int g = groups - 1; g >= 0; --g) {
      uint64_t part = (u >> (7 * g)) & 0x7f;
      WriteBits((g > 0 ? 0x80 : 0) | part, 8);
    }
  }
  void WriteVarint(int64_t v) { WriteUvarint(ZigZag(v)); }
  // Appends the bits still held, the last byte padded with zero bits.
  void Finish() {
    Flush();
    if (n_ > 0) {
      out_->push_back(static_cast<char>(acc_ << (8 - n_)));
      acc_ = 0;
      n_ = 0;
    }
  }

 private:
  // REQUIRES: 0 < nbits <= 32, bits < 2^nbits.
  void Put(uint64_t bits, int nbits) {
    if (n_ + nbits > 64) Flush();  // leaves n_ < 8
    acc_ = (acc_ << nbits) | bits;
    n_ += nbits;
  }
  // Appends the whole bytes of the register (its oldest bits).
  void Flush() {
    char buf[8];
    int k = 0;
    while (n_ >= 8) {
      n_ -= 8;
      buf[k++] = static_cast<char>(acc_ >> n_);
    }
    out_->append(buf, static_cast<size_t>(k));
    acc_ &= n_ == 0 ? 0 : (uint64_t{1} << n_) - 1;
  }

  std::string* out_;
  uint64_t acc_ = 0;  // the low n_ bits are written and not yet appended
  int n_ = 0;
};

class BitReader {
 public:
  BitReader() = default;
  // `padding`: bytes after the end that may be read and are zero (a
  // padded copy), so that every read takes the 8-byte path.
  BitReader(const uint8_t* data, size_t size, size_t padding = 0)
      : data_(data),
        size_bits_(static_cast<uint64_t>(size) * 8),
        readable_(size + padding) {}
  explicit BitReader(std::string_view s, size_t padding = 0)
      : BitReader(reinterpret_cast<const uint8_t*>(s.data()), s.size(),
                  padding) {}

  // Reads `nbits` (0..64) bits. Past the end: returns 0 and sets overflow().
  uint64_t ReadBits(int nbits) {
    if (nbits == 0) return 0;
    if (nbits > 56) [[unlikely]]
      return ReadWideBits(nbits);
    if (pos_ + static_cast<uint64_t>(nbits) > size_bits_) {
      overflow_ = true;
      pos_ = size_bits_;
      return 0;
    }
    uint64_t w = Peek64();
    pos_ += nbits;
    return w >> (64 - nbits);
  }
  bool ReadBit() { return ReadBits(1) != 0; }

  // Counts up to `max` (<= 32) leading one bits and consumes them plus the
  // terminating zero (if fewer than `max` ones were found).
  int ReadUnary(int max) {
    uint64_t w = Peek64();
    int ones = std::countl_one(w);
    if (ones >= max) {
      Skip(max);
      return max;
    }
    Skip(ones + 1);
    return ones;
  }

  uint64_t ReadUvarint() {
    uint64_t u = 0;
    for (int i = 0; i < 10; ++i) {
      uint64_t byte = ReadBits(8);
      u = (u << 7) | (byte & 0x7f);
      if ((byte & 0x80) == 0) return u;
    }
    overflow_ = true;  // over-long varint
    return 0;
  }
  int64_t ReadVarint() { return UnZigZag(ReadUvarint()); }

  // The next bits from the current position, MSB first, without consuming
  // them: at least 57 are valid (the rest zero), past the end all zero.
  uint64_t PeekBits() const { return Peek64(); }
  // Consumes `nbits` bits. REQUIRES: nbits <= bits_left().
  void SkipBits(int nbits) { pos_ += static_cast<uint64_t>(nbits); }

  bool overflow() const { return overflow_; }
  uint64_t bits_left() const { return size_bits_ - pos_; }

  // For a decoder loop that keeps the position in a register: the bytes,
  // how many of them may be read (size and padding), the size in bits, and
  // the position, which Seek sets (REQUIRES: pos <= size_bits()).
  const uint8_t* data() const { return data_; }
  size_t readable() const { return readable_; }
  uint64_t size_bits() const { return size_bits_; }
  uint64_t pos() const { return pos_; }
  void Seek(uint64_t pos) { pos_ = pos; }

 private:
  // ReadBits for 57..64 bits, out of line so that ReadBits (not recursive)
  // inlines into decoding loops.
  [[gnu::noinline]] uint64_t ReadWideBits(int nbits) {
    uint64_t hi = ReadBits(nbits - 32);
    return (hi << 32) | ReadBits(32);
  }
  void Skip(int nbits) {
    if (pos_ + static_cast<uint64_t>(nbits) > size_bits_) {
      overflow_ = true;
      pos_ = size_bits_;
      return;
    }
    pos_ += nbits;
  }
  // The next 64 bits from pos_, zero-filled past the end.
  uint64_t Peek64() const {
    size_t byte = pos_ >> 3;
    size_t size = size_bits_ >> 3;
    uint64_t w;
    if (byte + 8 <= readable_) [[likely]] {
      std::memcpy(&w, data_ + byte, 8);
      if constexpr (std::endian::native == std::endian::little) {
        w = __builtin_bswap64(w);
      }
    } else {
      w = 0;
      for (size_t i = 0; i < 8; ++i) {
        w <<= 8;
        if (byte + i < size) w |= data_[byte + i];
      }
    }
    return w << (pos_ & 7);  // at most 7 bits lost; callers use <= 57
  }

  const uint8_t* data_ = nullptr;
  uint64_t size_bits_ = 0;
  size_t readable_ = 0;  // bytes that may be read: the size and padding
  uint64_t pos_ = 0;
  bool overflow_ = false;
};

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_BITSTREAM_H_
