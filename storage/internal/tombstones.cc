#include "storage/internal/tombstones.h"

#include <algorithm>

#include "storage/internal/coding.h"

namespace vigil::storage::internal {

void AddInterval(Intervals* ivs, Interval iv) {
  auto it = std::lower_bound(
      ivs->begin(), ivs->end(), iv,
      [](const Interval& a, const Interval& b) { return a.mint < b.mint; });
  // Merge with the predecessor if it reaches iv (or touches it).
  if (it != ivs->begin()) {
    auto prev = std::prev(it);
    if (prev->maxt == kMaxTimestamp || prev->maxt + 1 >= iv.mint) {
      it = prev;
      iv.mint = prev->mint;
      iv.maxt = std::max(iv.maxt, prev->maxt);
    }
  }
  auto last = it;
  while (last != ivs->end() &&
         (iv.maxt == kMaxTimestamp || last->mint <= iv.maxt + 1)) {
    iv.maxt = std::max(iv.maxt, last->maxt);
    ++last;
  }
  it = ivs->erase(it, last);
  ivs->insert(it, iv);
}

bool InIntervals(const Intervals& ivs, Timestamp t) {
  for (const Interval& iv : ivs) {
    if (t < iv.mint) return false;
    if (t <= iv.maxt) return true;
  }
  return false;
}

bool CoveredBy(const Intervals& ivs, Timestamp mint, Timestamp maxt) {
  for (const Interval& iv : ivs) {
    if (iv.mint <= mint && maxt <= iv.maxt) return true;
  }
  return false;
}

bool Overlaps(const Intervals& ivs, Timestamp mint, Timestamp maxt) {
  for (const Interval& iv : ivs) {
    if (iv.mint <= maxt && mint <= iv.maxt) return true;
  }
  return false;
}

size_t FilterSamples(const Intervals& ivs, std::vector<Timestamp>* ts,
                     std::vector<double>* vs) {
  size_t out = 0, k = 0;  // k: first interval not wholly before ts[i]
  for (size_t i = 0; i < ts->size(); ++i) {
    Timestamp t = (*ts)[i];
    while (k < ivs.size() && ivs[k].maxt < t) ++k;
    if (k < ivs.size() && ivs[k].mint <= t) continue;  // deleted
    (*ts)[out] = t;
    (*vs)[out] = (*vs)[i];
    ++out;
  }
  ts->resize(out);
  vs->resize(out);
  return out;
}

std::string EncodeTombstone(const Tombstone& t) {
  std::string p;
  PutOrderedI64(&p, t.hidden_until);
  PutVarint(&p, t.intervals.size());
  for (const Interval& iv : t.intervals) {
    PutOrderedI64(&p, iv.mint);
    PutOrderedI64(&p, iv.maxt);
  }
  return Frame(p);
}

bool DecodeTombstone(std::string_view in, Tombstone* out) {
  std::string_view p;
  if (!Unframe(in, &p) || p.size() < 8) return false;
  Tombstone t;
  t.hidden_until = GetOrderedI64(p.data());
  p.remove_prefix(8);
  uint64_t n;
  if (!GetVarint(&p, &n) || n == 0 || p.size() != n * 16) return false;
  for (uint64_t i = 0; i < n; ++i) {
    Interval iv{GetOrderedI64(p.data() + 16 * i),
                GetOrderedI64(p.data() + 16 * i + 8)};
    // Sorted, disjoint, not adjacent: what AddInterval keeps.
    if (iv.mint > iv.maxt) return false;
    if (i > 0 && (t.intervals.back().maxt == kMaxTimestamp ||
                  t.intervals.back().maxt + 1 >= iv.mint)) {
      return false;
    }
    t.intervals.push_back(iv);
  }
  *out = std::move(t);
  return true;
}

bool TombstoneIndex::Get(uint64_t ref, Tombstone* out) const {
  vigil::ReaderMutexLock l(&mu_);
  auto it = map_.find(ref);
  if (it == map_.end()) return false;
  *out = it->second;
  return true;
}

Timestamp TombstoneIndex::HiddenUntil(uint64_t ref) const {
  vigil::ReaderMutexLock l(&mu_);
  auto it = map_.find(ref);
  return it == map_.end() ? kMinTimestamp : it->second.hidden_until;
}

void TombstoneIndex::Set(uint64_t ref, Tombstone t) {
  vigil::MutexLock l(&mu_);
  auto [it, inserted] = map_.try_emplace(ref);
  if (!inserted && it->second.hidden_until != kMinTimestamp) {
    hidden_.fetch_sub(1, std::memory_order_relaxed);
  }
  if (t.hidden_until != kMinTimestamp) {
    hidden_.fetch_add(1, std::memory_order_relaxed);
  }
  it->second = std::move(t);
  size_.store(map_.size(), std::memory_order_release);
}

void TombstoneIndex::Erase(uint64_t ref) {
  vigil::MutexLock l(&mu_);
  auto it = map_.find(ref);
  if (it == map_.end()) return;
  if (it->second.hidden_until != kMinTimestamp) {
    hidden_.fetch_sub(1, std::memory_order_relaxed);
  }
  map_.erase(it);
  size_.store(map_.size(), std::memory_order_release);
}

std::vector<std::pair<uint64_t, Tombstone>> TombstoneIndex::All() const {
  std::vector<std::pair<uint64_t, Tombstone>> out;
  {
    vigil::ReaderMutexLock l(&mu_);
    out.assign(map_.begin(), map_.end());
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace vigil::storage::internal
