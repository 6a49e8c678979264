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
  // Two 64-bit hashes in one pass: two wyhash-style lanes with their own
  // secrets over the same 16-byte blocks. It runs once per sample, so it
  // matters: two separate hash functions cost three times as much.
  constexpr uint64_t kS0 = 0xa0761d6478bd642fULL, kS1 = 0xe7037ed1a0b428dbULL,
                     kS2 = 0x8ebc6af09c88c6e3ULL, kS3 = 0x589965cc75374cc3ULL,
                     kS4 = 0x1d8e4e27c47d124fULL, kS5 = 0x9e3779b97f4a7c15ULL;
  const char* p = text.data();
  size_t n = text.size();
  uint64_t a = kS0 ^ Mum(n ^ kS1, kS4);
  uint64_t b = kS2 ^ Mum(n ^ kS3, kS5);
  for (; n >= 16; n -= 16, p += 16) {
    const uint64_t w0 = Load64(p), w1 = Load64(p + 8);
    a = Mum(w0 ^ kS1, w1 ^ a);
    b = Mum(w1 ^ kS3, w0 ^ b ^ kS4);
  }
  uint64_t w0 = 0, w1 = 0;
  if (n >= 8) {
    w0 = Load64(p);
    w1 = Load64(p + n - 8);  // overlaps w0 when n < 16: fine, n is mixed in
  } else if (n > 0) {
    std::memcpy(&w0, p, n);
  }
  a = Mum(a ^ kS4 ^ w0, Mum(w1 ^ kS1, a ^ kS5));
  b = Mum(b ^ kS5 ^ w1, Mum(w0 ^ kS3, b ^ kS0));
  return {a, b};
}

uint32_t SeriesCache::Find(const Key& key) {
  if (cursor_ < entries_.size() && entries_[cursor_].key.Matches(key)) {
    return static_cast<uint32_t>(cursor_++);
  }
  if (slots_.empty()) return kNotFound;
  const size_t mask = slots_.size() - 1;
  for (size_t i = Slot(key);; i = (i + 1) & mask) {
    const uint32_t s = slots_[i];
    if (s == 0) return kNotFound;
    if (entries_[s - 1].key.Matches(key)) {
      cursor_ = s;
      return s - 1;
    }
  }
}

uint32_t SeriesCache::Add(const Entry& e) {
  const size_t n = entries_.size() + 1;
  entries_.push_back(e);
  if (n * 4 > slots_.size() * 3) {
    Rehash(n);
  } else {
    Insert(static_cast<uint32_t>(n - 1));
  }
  return static_cast<uint32_t>(n - 1);
}

void SeriesCache::Insert(uint32_t pos) {
  const size_t mask = slots_.size() - 1;
  size_t i = entries_[pos].key.a & mask;
  while (slots_[i] != 0) i = (i + 1) & mask;
  slots_[i] = pos + 1;
}

void SeriesCache::Rehash(size_t min_entries) {
  size_t cap = 16;
  while (cap * 3 < min_entries * 4) cap *= 2;
  if (cap != slots_.size()) {
    std::vector<uint32_t>(cap, 0).swap(slots_);
  } else {
    std::fill(slots_.begin(), slots_.end(), 0);
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
  Rehash(entries_.size());
  cursor_ = 0;
}

void SeriesCache::KeepOnly(Iter iter) {
  auto end =
      std::remove_if(entries_.begin(), entries_.end(),
                     [iter](const Entry& e) { return e.last_iter != iter; });
  if (end == entries_.end()) return;
  entries_.erase(end, entries_.end());
  Rehash(entries_.size());
  cursor_ = 0;
  scrape_start_ = std::min(scrape_start_, entries_.size());
}

void SeriesCache::EndScrape() {
  const size_t n = entries_.size();
  // A first scrape leaves up to twice the vector a page needs; a page that
  // shrank, a table sized for more.
  if (entries_.capacity() > n + n / 8 + 16) entries_.shrink_to_fit();
  if (slots_.size() > 16 && n * 16 <= slots_.size() * 3) Rehash(n);
}

void SeriesCache::Clear() {
  entries_ = {};
  slots_ = {};
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
         slots_.capacity() * sizeof(uint32_t);
}

static_assert(sizeof(SeriesCache::Entry) == 24);

}  // namespace vigil::scrape
