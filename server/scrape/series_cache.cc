#include "server/scrape/series_cache.h"

#include <algorithm>
#include <cstring>

namespace vigil::scrape {

namespace {

inline uint64_t Load64(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

// 64x64 -> 128-bit multiply, folded (wyhash's mum).
inline uint64_t Mum(uint64_t a, uint64_t b) {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

}  // namespace

SeriesCache::Key SeriesCache::KeyOf(std::string_view text) {
  // wyhash-style: each 16-byte block folded into the state with one
  // 64x64 -> 128-bit multiply. It runs once per sample, so it matters.
  constexpr uint64_t kS0 = 0xa0761d6478bd642fULL, kS1 = 0xe7037ed1a0b428dbULL,
                     kS4 = 0x1d8e4e27c47d124fULL, kS5 = 0x9e3779b97f4a7c15ULL;
  const char* p = text.data();
  size_t n = text.size();
  uint64_t a = kS0 ^ Mum(n ^ kS1, kS4);
  for (; n >= 16; n -= 16, p += 16) {
    a = Mum(Load64(p) ^ kS1, Load64(p + 8) ^ a);
  }
  uint64_t w0 = 0, w1 = 0;
  if (n >= 8) {
    w0 = Load64(p);
    w1 = Load64(p + n - 8);  // overlaps w0 when n < 16: fine, n is mixed in
  } else if (n > 0) {
    std::memcpy(&w0, p, n);
  }
  return {Mum(a ^ kS4 ^ w0, Mum(w1 ^ kS1, a ^ kS5))};
}

namespace {
// Slots for n entries at most 3/4 full, in steps of 16.
size_t SlotsFor(size_t n) {
  const size_t want = n * 4 / 3 + 1;
  return std::max<size_t>(16, (want + 15) / 16 * 16);
}
}  // namespace

uint32_t SeriesCache::Find(const Key& key) {
  if (cursor_ < entries_.size() && entries_[cursor_].key == key) {
    return static_cast<uint32_t>(cursor_++);
  }
  if (nslots_ == 0) return kNotFound;
  for (size_t i = Home(key);;) {
    const uint32_t s = SlotAt(i);
    if (s == 0) return kNotFound;
    if (entries_[s - 1].key == key) {
      cursor_ = s;
      return s - 1;
    }
    if (++i == nslots_) i = 0;
  }
}

uint32_t SeriesCache::Add(const Entry& e) {
  const size_t n = entries_.size() + 1;
  entries_.push_back(e);
  if (n * 4 > nslots_ * 3) {
    Rehash(SlotsFor(2 * n));  // room to grow before the next
  } else {
    Insert(static_cast<uint32_t>(n - 1));
  }
  return static_cast<uint32_t>(n - 1);
}

void SeriesCache::Insert(uint32_t pos) {
  size_t i = Home(entries_[pos].key);
  while (SlotAt(i) != 0) {
    if (++i == nslots_) i = 0;
  }
  if (wide_) {
    slots32_[i] = pos + 1;
  } else {
    slots16_[i] = static_cast<uint16_t>(pos + 1);
  }
}

void SeriesCache::Rehash(size_t slots) {
  nslots_ = slots;
  // At most 3/4 of the slots fill before the next Rehash, so positions + 1
  // stay below nslots_: 16 bits hold them while nslots_ does.
  wide_ = nslots_ > UINT16_MAX;
  if (wide_) {
    std::vector<uint32_t>(nslots_, 0).swap(slots32_);
    std::vector<uint16_t>().swap(slots16_);
  } else {
    std::vector<uint16_t>(nslots_, 0).swap(slots16_);
    std::vector<uint32_t>().swap(slots32_);
  }
  for (size_t i = 0; i < entries_.size(); ++i) {
    Insert(static_cast<uint32_t>(i));
  }
}

void SeriesCache::BeginScrape() {
  cursor_ = 0;
  scrape_start_ = entries_.size();
}

void SeriesCache::RollBack() {
  if (entries_.size() <= scrape_start_) return;
  entries_.resize(scrape_start_);
  Rehash(SlotsFor(entries_.size()));
  cursor_ = 0;
}

void SeriesCache::KeepOnly(Iter iter) {
  auto end =
      std::remove_if(entries_.begin(), entries_.end(),
                     [iter](const Entry& e) { return e.last_iter != iter; });
  if (end == entries_.end()) return;
  entries_.erase(end, entries_.end());
  Rehash(SlotsFor(entries_.size()));
  cursor_ = 0;
  scrape_start_ = std::min(scrape_start_, entries_.size());
}

void SeriesCache::EndScrape() {
  const size_t n = entries_.size();
  // A first scrape leaves up to twice the vector a page needs and an index
  // sized for growth; a page that shrank, both sized for more.
  if (entries_.capacity() > n + n / 8 + 16) entries_.shrink_to_fit();
  if (nslots_ > SlotsFor(n) + SlotsFor(n) / 4) Rehash(SlotsFor(n));
}

void SeriesCache::Clear() {
  entries_ = {};
  slots16_ = {};
  slots32_ = {};
  nslots_ = 0;
  wide_ = false;
  cursor_ = 0;
  scrape_start_ = 0;
}

size_t SeriesCache::NumSeries() const {
  return static_cast<size_t>(
      std::count_if(entries_.begin(), entries_.end(),
                    [](const Entry& e) { return !e.dropped; }));
}

size_t SeriesCache::MemoryBytes() const {
  return entries_.capacity() * sizeof(Entry) +
         slots16_.capacity() * sizeof(uint16_t) +
         slots32_.capacity() * sizeof(uint32_t);
}

static_assert(sizeof(SeriesCache::Entry) == 16);

}  // namespace vigil::scrape
