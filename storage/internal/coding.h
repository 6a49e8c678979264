// -----------------------------------------------------------------------------
// File: coding.h
// -----------------------------------------------------------------------------
//
// Byte-level encodings shared by keys, WAL records and series records:
// big-endian fixed ints (so RocksDB's bytewise order is numeric order),
// LEB128 varints, zig-zag, and a CRC32 (zlib) for record checksums.
#ifndef VIGIL_STORAGE_INTERNAL_CODING_H_
#define VIGIL_STORAGE_INTERNAL_CODING_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace vigil::storage::internal {

// Writes 4 (8) bytes at p.
inline void EncodeBE32(char* p, uint32_t v) {
  p[0] = char(v >> 24);
  p[1] = char(v >> 16);
  p[2] = char(v >> 8);
  p[3] = char(v);
}
inline void EncodeBE64(char* p, uint64_t v) {
  EncodeBE32(p, uint32_t(v >> 32));
  EncodeBE32(p + 4, uint32_t(v));
}
inline void PutBE32(std::string* out, uint32_t v) {
  char b[4];
  EncodeBE32(b, v);
  out->append(b, 4);
}
inline void PutBE64(std::string* out, uint64_t v) {
  PutBE32(out, uint32_t(v >> 32));
  PutBE32(out, uint32_t(v));
}
inline uint32_t GetBE32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t(u[0]) << 24) | (uint32_t(u[1]) << 16) |
         (uint32_t(u[2]) << 8) | uint32_t(u[3]);
}
inline uint64_t GetBE64(const char* p) {
  return (uint64_t(GetBE32(p)) << 32) | GetBE32(p + 4);
}
// Signed int64 in big-endian with the sign bit flipped, so negative
// timestamps sort before positive ones.
inline void EncodeOrderedI64(char* p, int64_t v) {
  EncodeBE64(p, uint64_t(v) ^ (1ULL << 63));
}
inline void PutOrderedI64(std::string* out, int64_t v) {
  char b[8];
  EncodeOrderedI64(b, v);
  out->append(b, 8);
}
inline int64_t GetOrderedI64(const char* p) {
  return int64_t(GetBE64(p) ^ (1ULL << 63));
}

inline void PutVarint(std::string* out, uint64_t v) {
  char buf[10];
  int n = 0;
  while (v >= 0x80) {
    buf[n++] = char(v | 0x80);
    v >>= 7;
  }
  buf[n++] = char(v);
  out->append(buf, n);
}
inline uint64_t ZigZag(int64_t v) {
  return (uint64_t(v) << 1) ^ uint64_t(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) {
  return int64_t(v >> 1) ^ -int64_t(v & 1);
}

// Reads a varint from *in, advancing it. False if truncated or overlong.
inline bool GetVarint(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    uint8_t b = uint8_t((*in)[0]);
    in->remove_prefix(1);
    result |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = result;
      return true;
    }
  }
  return false;
}
inline bool GetLengthPrefixed(std::string_view* in, std::string_view* out) {
  uint64_t n;
  if (!GetVarint(in, &n) || n > in->size()) return false;
  *out = in->substr(0, n);
  in->remove_prefix(n);
  return true;
}
inline void PutLengthPrefixed(std::string* out, std::string_view s) {
  PutVarint(out, s.size());
  out->append(s);
}
inline void PutDouble(std::string* out, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  PutBE64(out, bits);
}
inline double GetDouble(const char* p) {
  uint64_t bits = GetBE64(p);
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}

// CRC32 (zlib polynomial) of `data`.
uint32_t Crc32(std::string_view data);

// Prepends a CRC32 of `payload` and returns the framed record.
std::string Frame(std::string_view payload);
// Verifies and strips the CRC of a framed record. False on mismatch.
bool Unframe(std::string_view record, std::string_view* payload);

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_CODING_H_
