// -----------------------------------------------------------------------------
// File: cold_keys.h
// -----------------------------------------------------------------------------
//
// Keys and values of the `cold` family (head GC; storage/FORMAT.md, "The
// cold family"), shared by the DB (db_cold.cc) and verify.
//   "s" ref(BE64)                         -> newest sample: t (ordered i64), v
//   "q" lp(name) lp(value) t ref(BE64)    -> "" (t: the series' newest
//                                            sample, ordered i64)
//   "p" lp(name) lp(value) ref(BE64)      -> t (the first layout; LoadCold
//                                            rewrites these as "q")
//   "h" hash of the labels (BE64)         -> refs (BE64 each)
// lp() is a varint length then the bytes.
#ifndef VIGIL_STORAGE_INTERNAL_COLD_KEYS_H_
#define VIGIL_STORAGE_INTERNAL_COLD_KEYS_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/time.h"
#include "storage/internal/coding.h"

namespace vigil::storage::internal {

inline std::string ColdSeriesKey(uint64_t ref) {
  std::string k = "s";
  PutBE64(&k, ref);
  return k;
}
inline std::string ColdSeriesValue(Timestamp last_t, double last_v) {
  std::string v;
  PutOrderedI64(&v, last_t);
  PutDouble(&v, last_v);
  return v;
}
// Postings are ordered by label pair, then by the series' newest sample, so
// a query seeks past the series that went cold before its range.
inline std::string ColdNamePrefix(std::string_view name) {
  std::string k = "q";
  PutLengthPrefixed(&k, name);
  return k;
}
inline std::string ColdValuePrefix(std::string_view name,
                                   std::string_view value) {
  std::string k = ColdNamePrefix(name);
  PutLengthPrefixed(&k, value);
  return k;
}
// Where the postings of a value prefix (ColdValuePrefix) with newest
// sample >= t start.
inline std::string ColdPostingsFrom(std::string prefix, Timestamp t) {
  PutOrderedI64(&prefix, t);
  return prefix;
}
// Past every posting of a value prefix.
inline std::string ColdPostingsEnd(std::string prefix) {
  prefix.append(16, '\xff');
  return prefix;
}
inline std::string ColdPostingKey(std::string_view name, std::string_view value,
                                  Timestamp last_t, uint64_t ref) {
  std::string k = ColdPostingsFrom(ColdValuePrefix(name, value), last_t);
  PutBE64(&k, ref);
  return k;
}
// The first layout of a posting ("p", no time in the key; the time is the
// value).
inline std::string LegacyPostingKey(std::string_view name,
                                    std::string_view value, uint64_t ref) {
  std::string k = "p";
  PutLengthPrefixed(&k, name);
  PutLengthPrefixed(&k, value);
  PutBE64(&k, ref);
  return k;
}
inline std::string ColdHashKey(uint64_t hash) {
  std::string k = "h";
  PutBE64(&k, hash);
  return k;
}
// Both posting layouts: `letter`, lp(name), lp(value), then a tail of
// `tail_size` bytes (returned in *tail); false if the key is not that.
inline bool SplitPostingKey(std::string_view key, char letter, size_t tail_size,
                            std::string_view* name, std::string_view* value,
                            const char** tail) {
  if (key.empty() || key[0] != letter) return false;
  key.remove_prefix(1);
  if (!GetLengthPrefixed(&key, name) || !GetLengthPrefixed(&key, value) ||
      key.size() != tail_size) {
    return false;
  }
  *tail = key.data();
  return true;
}
// A posting key's name, value, newest sample time and ref; false if
// malformed.
inline bool ParsePostingKey(std::string_view key, std::string_view* name,
                            std::string_view* value, Timestamp* last_t,
                            uint64_t* ref) {
  const char* tail;
  if (!SplitPostingKey(key, 'q', 16, name, value, &tail)) return false;
  *last_t = GetOrderedI64(tail);
  *ref = GetBE64(tail + 8);
  return true;
}
// A first-layout ("p") posting key's name, value and ref.
inline bool ParseLegacyPostingKey(std::string_view key, std::string_view* name,
                                  std::string_view* value, uint64_t* ref) {
  const char* tail;
  if (!SplitPostingKey(key, 'p', 8, name, value, &tail)) return false;
  *ref = GetBE64(tail);
  return true;
}
inline std::vector<uint64_t> DecodeRefs(std::string_view v) {
  std::vector<uint64_t> out;
  for (size_t i = 0; i + 8 <= v.size(); i += 8) out.push_back(GetBE64(&v[i]));
  return out;
}
inline std::string EncodeRefs(const std::vector<uint64_t>& refs) {
  std::string v;
  for (uint64_t r : refs) PutBE64(&v, r);
  return v;
}

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_COLD_KEYS_H_
