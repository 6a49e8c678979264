// -----------------------------------------------------------------------------
// File: scrape/series_cache.h
// -----------------------------------------------------------------------------
//
// The per-target cache of a scrape loop: each raw series text of a page
// (`name{labels}` as scraped), by a 128-bit hash of it, to the storage ref
// of its series, or to "dropped by metric_relabel_configs".
//
// Entries are kept in a vector in the order they were first seen, which is
// the page's order, and a lookup first tries the entry after the previous
// hit: on a steady page every lookup is one comparison with the next entry
// in memory. Only when that fails does it probe an open-addressing index of
// 32-bit positions. An entry costs 24 bytes plus 5 to 11 of index, where a
// hash map of the same entries cost about 67 at the load a 1,000-series
// page gave it.
//
// Thread-compatible: the owning loop serialises all calls.
#ifndef VIGIL_SERVER_SCRAPE_SERIES_CACHE_H_
#define VIGIL_SERVER_SCRAPE_SERIES_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "storage/appender.h"

namespace vigil::scrape {

class SeriesCache {
 public:
  // A raw series text by two independent 64-bit hashes: two texts colliding
  // in both is ~2^-128 per pair, so the text itself is not kept.
  struct Key {
    uint64_t a = 0, b = 0;
    bool operator==(const Key&) const = default;
  };
  static Key KeyOf(std::string_view text);

  // What an entry keeps of a Key: all of `a` and the low 32 bits of `b`.
  // Two texts of one target agreeing in those 96 bits is ~2^-96 per pair.
  // Packed to 12 bytes so that an entry is 24.
  struct __attribute__((packed, aligned(4))) StoredKey {
    uint64_t a = 0;
    uint32_t b = 0;
    StoredKey() = default;
    StoredKey(const Key& k)  // NOLINT(runtime/explicit): a Key is stored so
        : a(k.a), b(static_cast<uint32_t>(k.b)) {}
    bool Matches(const Key& k) const {
      return a == k.a && b == static_cast<uint32_t>(k.b);
    }
  };
  // The low 16 bits of the loop's iteration count. An entry is at most ten
  // iterations old when CleanCache looks at it, so the wrap is harmless (an
  // alias keeps an unseen entry for ten more iterations at worst).
  using Iter = uint16_t;
  struct Entry {
    StoredKey key;
    Iter last_iter = 0;          // the loop's iteration that last saw it
    uint8_t formats = 0;         // bits of the formats it parsed in
    bool dropped = false;        // metric relabelling dropped it
    storage::SeriesRef ref = 0;  // unused when dropped
  };
  static constexpr uint32_t kNotFound = UINT32_MAX;

  // Position of `key`, or kNotFound. A hit moves the cursor past it.
  uint32_t Find(const Key& key);
  Entry& at(uint32_t pos) { return entries_[pos]; }
  const Entry& at(uint32_t pos) const { return entries_[pos]; }

  // Appends an entry whose key is not in the cache; returns its position.
  uint32_t Add(const Entry& e);

  // A scrape starts: the cursor goes back to the top, and what Add puts in
  // from now on is what RollBack takes out.
  void BeginScrape();
  void RollBack();
  // Forgets every entry whose last_iter is not `iter`, keeping the order of
  // the rest.
  void KeepOnly(Iter iter);
  // A scrape ended: gives back what a shrunken page no longer needs.
  void EndScrape();
  void Clear();

  size_t size() const { return entries_.size(); }
  // Entries that are not dropped.
  size_t NumSeries() const;
  size_t MemoryBytes() const;

 private:
  void Rehash(size_t min_entries);
  void Insert(uint32_t pos);
  size_t Slot(const Key& key) const { return key.a & (slots_.size() - 1); }

  std::vector<Entry> entries_;
  // Open addressing, linear probing: position + 1 of an entry, 0 if free.
  // Its size is a power of two holding entries_ at most 3/4 full.
  std::vector<uint32_t> slots_;
  size_t cursor_ = 0;
  size_t scrape_start_ = 0;
};

}  // namespace vigil::scrape

#endif  // VIGIL_SERVER_SCRAPE_SERIES_CACHE_H_
