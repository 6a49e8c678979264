// -----------------------------------------------------------------------------
// File: scrape/series_cache.h
// -----------------------------------------------------------------------------
//
// The per-target cache of a scrape loop: each raw series text of a page
// (`name{labels}` as scraped), by a 64-bit hash of it, to the storage ref
// of its series, or to "dropped by metric_relabel_configs".
//
// Entries are kept in a vector in the order they were first seen, which is
// the page's order, and a lookup first tries the entry after the previous
// hit: on a steady page every lookup is one comparison with the next entry
// in memory. Only when that fails does it probe an open-addressing index of
// positions (16-bit while the cache holds fewer than 65,535 entries). An
// entry costs 16 bytes plus about 3 of index: 19 bytes a series, where
// 128-bit keys, 64-bit refs and a power-of-two index of 32-bit positions
// cost 31, and a hash map of the same entries about 67.
//
// Keys: two different texts of one target with the same 64-bit hash would
// share an entry (the second's samples going to the first's series). For
// a page of n texts that is about n^2 / 2^65 per page change: 3e-14 for
// 1,000 series; the hash mixes every byte of the text (wyhash's multiply
// and fold), so texts that differ in one byte are no likelier to collide.
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
  // A raw series text by its 64-bit hash.
  struct Key {
    uint64_t a = 0;
    bool operator==(const Key&) const = default;
  };
  static Key KeyOf(std::string_view text);

  // The low 16 bits of the loop's iteration count. An entry is at most ten
  // iterations old when CleanCache looks at it, so the wrap is harmless (an
  // alias keeps an unseen entry for ten more iterations at worst).
  using Iter = uint16_t;
  // The storage refs an entry keeps: Appendable refs below 2^32 (the
  // DB's are below 2^30; storage/appender.h).
  using Ref = uint32_t;
  static constexpr storage::SeriesRef kMaxRef = UINT32_MAX;
  struct Entry {
    Key key;
    Ref ref = 0;           // unused when dropped
    Iter last_iter = 0;    // the loop's iteration that last saw it
    uint8_t formats = 0;   // bits of the formats it parsed in
    bool dropped = false;  // metric relabelling dropped it
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
  // Rebuilds the index with `slots` slots (at least entries_.size() * 4 /
  // 3 + 1).
  void Rehash(size_t slots);
  void Insert(uint32_t pos);
  // The slot a key's probe starts at: its hash scaled to [0, nslots_).
  size_t Home(const Key& key) const {
    return static_cast<size_t>(
        (static_cast<unsigned __int128>(key.a) * nslots_) >> 64);
  }
  // Position + 1 of the entry in slot i, 0 if free.
  uint32_t SlotAt(size_t i) const {
    return wide_ ? slots32_[i] : uint32_t{slots16_[i]};
  }

  std::vector<Entry> entries_;
  // Open addressing, linear probing, at most 3/4 full: position + 1 of an
  // entry, 0 if free. 16-bit slots while positions fit, else 32-bit.
  std::vector<uint16_t> slots16_;
  std::vector<uint32_t> slots32_;
  size_t nslots_ = 0;
  bool wide_ = false;
  size_t cursor_ = 0;
  size_t scrape_start_ = 0;
};

}  // namespace vigil::scrape

#endif  // VIGIL_SERVER_SCRAPE_SERIES_CACHE_H_
