// -----------------------------------------------------------------------------
// File: keys.h
// -----------------------------------------------------------------------------
//
// RocksDB column families and key layouts (storage/FORMAT.md documents them).
// DO NOT CHANGE any layout here without a format version bump: they are on
// disk.
#ifndef VIGIL_STORAGE_INTERNAL_KEYS_H_
#define VIGIL_STORAGE_INTERNAL_KEYS_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/time.h"
#include "storage/internal/coding.h"

namespace vigil::storage::internal {

// Column family names. DO NOT CHANGE.
inline constexpr char kCfSeries[] = "series";  // ref → labels
inline constexpr char kCfChunks[] = "chunks";  // day|ref|mint → chunk
// Format 1 only: written but never read, dropped when a format-1 directory
// is opened for writing (FORMAT.md, "Format versions").
inline constexpr char kCfLegacyPostings[] = "postings";
inline constexpr char kCfWal[] = "wal";    // seq → sample batch
inline constexpr char kCfHead[] = "head";  // ref → open chunk state
inline constexpr char kCfMeta[] = "meta";  // format, metadata
// ref → deleted intervals. Optional within format 2: created by the first
// DeleteSeries, so directories that never deleted anything stay as older
// builds wrote them.
inline constexpr char kCfTombstones[] = "tombstones";

inline constexpr int64_t kDayMs = 86400000;
// DO NOT CHANGE: written to meta "format". 2 = no `postings` family;
// format 1 (with it) is still opened, and upgraded when opened for writing.
inline constexpr uint32_t kFormatVersion = 2;
inline constexpr uint32_t kFormatVersionWithPostings = 1;

// Day partition of a timestamp (floor division), offset so it sorts as
// unsigned. Defined for every int64: days beyond +-2^31 (about 5.8 million
// years) clamp to the ends, and the top end stays one below UINT32_MAX so
// the `day <= DayOf(hi); ++day` loops of the readers always end.
inline uint32_t DayOf(Timestamp t) {
  int64_t d = t / kDayMs - (t % kDayMs < 0);  // floor, never negating t
  d = std::clamp<int64_t>(d, -(int64_t(1) << 31), (int64_t(1) << 31) - 2);
  return uint32_t(d + (int64_t(1) << 31));
}
inline Timestamp DayStart(uint32_t day) {
  return (int64_t(day) - (int64_t(1) << 31)) * kDayMs;
}

inline std::string SeriesKey(uint64_t ref) {
  std::string k;
  PutBE64(&k, ref);
  return k;
}
inline constexpr size_t kChunkKeySize = 20;
// A chunk key in a fixed buffer: a query seeks once per series and day, and
// a 20-byte std::string would be a heap allocation each time.
struct ChunkKeyBytes {
  char data[kChunkKeySize];
  std::string_view view() const { return {data, kChunkKeySize}; }
};
inline ChunkKeyBytes ChunkKeyFixed(uint32_t day, uint64_t ref, Timestamp mint) {
  ChunkKeyBytes k;
  EncodeBE32(k.data, day);
  EncodeBE64(k.data + 4, ref);
  EncodeOrderedI64(k.data + 12, mint);
  return k;
}
inline std::string ChunkKey(uint32_t day, uint64_t ref, Timestamp mint) {
  return std::string(ChunkKeyFixed(day, ref, mint).view());
}
inline std::string DayPrefix(uint32_t day) {
  std::string k;
  PutBE32(&k, day);
  return k;
}
inline std::string WalKey(uint64_t seq) {
  std::string k;
  PutBE64(&k, seq);
  return k;
}
inline std::string MetadataKey(std::string_view metric) {
  return "m" + std::string(metric);
}
inline constexpr char kFormatKey[] = "format";

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_KEYS_H_
