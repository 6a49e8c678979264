#include "storage/internal/postings.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"

namespace vigil::storage::internal {

namespace {
// A list of a label that many series share (job, __name__, all series)
// grows by an eighth, not by doubling: it never shrinks while series keep
// coming, so doubling would leave a third of it unused on average.
// Still amortised O(1) per id.
void Grow(Postings* p) {
  constexpr size_t kSmall = 1024;
  if (p->size() == p->capacity() && p->size() >= kSmall) {
    p->reserve(p->size() + p->size() / 8);
  }
}

void InsertSorted(Postings* p, uint32_t id) {
  Grow(p);
  if (p->empty() || p->back() < id) {
    p->push_back(id);
    return;
  }
  auto it = std::lower_bound(p->begin(), p->end(), id);
  if (it == p->end() || *it != id) p->insert(it, id);
}
}  // namespace

Postings Intersect(const Postings& a, const Postings& b) {
  Postings out;
  const Postings& small = a.size() <= b.size() ? a : b;
  const Postings& large = a.size() <= b.size() ? b : a;
  out.reserve(small.size());
  if (small.size() * 32 < large.size()) {
    // Galloping: seek each element of the small list in the large one.
    auto lo = large.begin();
    for (uint32_t x : small) {
      lo = std::lower_bound(lo, large.end(), x);
      if (lo == large.end()) break;
      if (*lo == x) out.push_back(x);
    }
    return out;
  }
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(),
                        std::back_inserter(out));
  return out;
}

Postings Union(const std::vector<const Postings*>& lists) {
  if (lists.empty()) return {};
  if (lists.size() == 1) return *lists[0];
  size_t total = 0;
  for (auto* l : lists) total += l->size();
  Postings out;
  out.reserve(total);
  for (auto* l : lists) out.insert(out.end(), l->begin(), l->end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Postings Subtract(const Postings& a, const Postings& b) {
  Postings out;
  out.reserve(a.size());
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(),
                      std::back_inserter(out));
  return out;
}

void PostingsIndex::Add(uint32_t id, const uint32_t* pairs, size_t n) {
  vigil::MutexLock l(&mu_);
  for (size_t i = 0; i < n; ++i) {
    uint32_t name = pairs[2 * i], value = pairs[2 * i + 1];
    auto [it, inserted] = lists_.try_emplace(Key(name, value));
    if (inserted) values_[name].push_back(value);
    InsertSorted(&it->second, id);
  }
  InsertSorted(&all_, id);
}

void PostingsIndex::Remove(uint32_t id, const uint32_t* pairs, size_t n) {
  vigil::MutexLock l(&mu_);
  auto erase_id = [id](Postings* p) {
    auto it = std::lower_bound(p->begin(), p->end(), id);
    if (it != p->end() && *it == id) p->erase(it);
  };
  for (size_t i = 0; i < n; ++i) {
    uint32_t name = pairs[2 * i], value = pairs[2 * i + 1];
    auto it = lists_.find(Key(name, value));
    if (it == lists_.end()) continue;
    erase_id(&it->second);
    if (!it->second.empty()) continue;
    lists_.erase(it);
    auto vit = values_.find(name);
    if (vit == values_.end()) continue;
    std::erase(vit->second, value);
    if (vit->second.empty()) values_.erase(vit);
  }
  erase_id(&all_);
}

void PostingsIndex::RemoveMany(const std::vector<uint32_t>& ids,
                               const std::vector<const uint32_t*>& pairs,
                               const std::vector<size_t>& num_labels) {
  if (ids.empty()) return;
  // Ids to drop per list, ascending since `ids` is.
  absl::flat_hash_map<uint64_t, Postings> drop;
  for (size_t i = 0; i < ids.size(); ++i) {
    for (size_t j = 0; j < num_labels[i]; ++j) {
      drop[Key(pairs[i][2 * j], pairs[i][2 * j + 1])].push_back(ids[i]);
    }
  }
  auto shrink = [](Postings* p) {
    if (p->capacity() > 64 && p->size() < p->capacity() / 4) p->shrink_to_fit();
  };
  vigil::MutexLock l(&mu_);
  absl::flat_hash_map<uint32_t, absl::flat_hash_set<uint32_t>> gone_values;
  for (auto& [key, victims] : drop) {
    auto it = lists_.find(key);
    if (it == lists_.end()) continue;
    it->second = Subtract(it->second, victims);
    if (!it->second.empty()) {
      shrink(&it->second);
      continue;
    }
    lists_.erase(it);
    gone_values[uint32_t(key >> 32)].insert(uint32_t(key));
  }
  for (auto& entry : gone_values) {
    // Not a structured binding: clang 14 cannot capture those.
    const uint32_t name = entry.first;
    const absl::flat_hash_set<uint32_t>& values = entry.second;
    auto vit = values_.find(name);
    if (vit == values_.end()) continue;
    std::erase_if(vit->second,
                  [&values](uint32_t v) { return values.contains(v); });
    if (vit->second.empty()) {
      values_.erase(vit);
    } else if (vit->second.size() < vit->second.capacity() / 4) {
      vit->second.shrink_to_fit();
    }
  }
  all_ = Subtract(all_, ids);
}

Postings PostingsIndex::MatchingValues(const SymbolTable& symbols,
                                       uint32_t name_sym, const Matcher& m,
                                       bool negate) const {
  auto vit = values_.find(name_sym);
  if (vit == values_.end()) return {};
  std::vector<const Postings*> lists;
  if (!negate && m.type() == MatchType::kEqual) {
    uint32_t v = symbols.Find(m.value());
    if (v == SymbolTable::kNotFound) return {};
    auto it = lists_.find(Key(name_sym, v));
    return it == lists_.end() ? Postings{} : it->second;
  }
  for (uint32_t v : vit->second) {
    if (m.Matches(symbols.Get(v)) != negate) {
      auto it = lists_.find(Key(name_sym, v));
      if (it != lists_.end()) lists.push_back(&it->second);
    }
  }
  return Union(lists);
}

Postings PostingsIndex::Select(const SymbolTable& symbols,
                               const std::vector<Matcher>& matchers) const {
  vigil::ReaderMutexLock l(&mu_);
  // Positive matchers (not accepting "") first: they bound the result.
  std::vector<const Matcher*> pos, neg;
  for (const auto& m : matchers) (m.MatchesEmpty() ? neg : pos).push_back(&m);
  Postings result;
  bool have = false;
  for (const Matcher* m : pos) {
    uint32_t name = symbols.Find(m->name());
    if (name == SymbolTable::kNotFound) return {};
    Postings p = MatchingValues(symbols, name, *m, /*negate=*/false);
    result = have ? Intersect(result, p) : std::move(p);
    have = true;
    if (result.empty()) return result;
  }
  if (!have) result = all_;
  // A matcher accepting "" removes the series whose value it rejects.
  for (const Matcher* m : neg) {
    uint32_t name = symbols.Find(m->name());
    if (name == SymbolTable::kNotFound) continue;  // label absent everywhere
    Postings drop = MatchingValues(symbols, name, *m, /*negate=*/true);
    if (!drop.empty()) result = Subtract(result, drop);
  }
  return result;
}

std::vector<uint32_t> PostingsIndex::Names() const {
  vigil::ReaderMutexLock l(&mu_);
  std::vector<uint32_t> out;
  out.reserve(values_.size());
  for (const auto& [n, _] : values_) out.push_back(n);
  return out;
}

std::vector<uint32_t> PostingsIndex::Values(uint32_t name_sym) const {
  vigil::ReaderMutexLock l(&mu_);
  auto it = values_.find(name_sym);
  return it == values_.end() ? std::vector<uint32_t>{} : it->second;
}

Postings PostingsIndex::All() const {
  vigil::ReaderMutexLock l(&mu_);
  return all_;
}

size_t PostingsIndex::MemoryBytes() const {
  vigil::ReaderMutexLock l(&mu_);
  size_t b =
      all_.capacity() * 4 + lists_.capacity() * (8 + sizeof(Postings) + 1);
  for (const auto& [_, p] : lists_) b += p.capacity() * 4;
  for (const auto& [_, v] : values_) b += v.capacity() * 4 + 40;
  return b;
}

}  // namespace vigil::storage::internal
