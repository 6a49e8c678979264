#include "storage/internal/postings.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"

namespace vigil::storage::internal {

namespace {
// Ids below a list's largest wait in its side list until there are this
// many plus a sixteenth of the list, then fold in: an out-of-order id costs
// O(1) re-encoded ids amortised, and a side list stays short to merge.
bool FoldDue(size_t late, size_t list) { return late > 64 + list / 16; }

void InsertSorted(std::vector<uint32_t>* v, uint32_t id) {
  auto it = std::lower_bound(v->begin(), v->end(), id);
  if (it == v->end() || *it != id) v->insert(it, id);
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

void PostingsIndex::AddTo(uint64_t key, PostingList* list, uint32_t id) {
  if (list->empty() || id > list->back()) {
    list->Append(id);
    return;
  }
  if (list->Contains(id)) return;
  std::vector<uint32_t>& late = late_[key];
  InsertSorted(&late, id);
  if (FoldDue(late.size(), list->size())) {
    list->Merge(late);
    late_.erase(key);
  }
}

void PostingsIndex::SubtractFrom(uint64_t key, PostingList* list,
                                 const std::vector<uint32_t>& ids) {
  if (auto it = late_.find(key); it != late_.end()) {
    std::vector<uint32_t> kept;
    std::set_difference(it->second.begin(), it->second.end(), ids.begin(),
                        ids.end(), std::back_inserter(kept));
    if (kept.empty()) {
      late_.erase(it);
    } else {
      it->second = std::move(kept);
    }
  }
  list->Subtract(ids);
}

bool PostingsIndex::ListEmpty(uint64_t key, const PostingList& list) const {
  return list.empty() && !late_.contains(key);
}

Postings PostingsIndex::Materialize(uint64_t key,
                                    const PostingList& list) const {
  Postings out = list.Decode();
  if (auto it = late_.find(key); it != late_.end()) {
    const size_t mid = out.size();
    out.insert(out.end(), it->second.begin(), it->second.end());
    std::inplace_merge(out.begin(), out.begin() + mid, out.end());
  }
  return out;
}

void PostingsIndex::Add(uint32_t id, const uint32_t* pairs, size_t n) {
  vigil::MutexLock l(&mu_);
  for (size_t i = 0; i < n; ++i) {
    uint32_t name = pairs[2 * i], value = pairs[2 * i + 1];
    const uint64_t key = Key(name, value);
    auto [it, inserted] = lists_.try_emplace(key);
    if (inserted) values_[name].push_back(value);
    AddTo(key, &it->second, id);
  }
  AddTo(kAllKey, &all_, id);
}

void PostingsIndex::Remove(uint32_t id, const uint32_t* pairs, size_t n) {
  RemoveMany({id}, {pairs}, {n});
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
  vigil::MutexLock l(&mu_);
  absl::flat_hash_map<uint32_t, absl::flat_hash_set<uint32_t>> gone_values;
  for (auto& [key, victims] : drop) {
    auto it = lists_.find(key);
    if (it == lists_.end()) continue;
    SubtractFrom(key, &it->second, victims);
    if (!ListEmpty(key, it->second)) continue;
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
  SubtractFrom(kAllKey, &all_, ids);
}

Postings PostingsIndex::MatchingValues(const SymbolTable& symbols,
                                       uint32_t name_sym, const Matcher& m,
                                       bool negate) const {
  auto vit = values_.find(name_sym);
  if (vit == values_.end()) return {};
  if (!negate && m.type() == MatchType::kEqual) {
    uint32_t v = symbols.Find(m.value());
    if (v == SymbolTable::kNotFound) return {};
    auto it = lists_.find(Key(name_sym, v));
    return it == lists_.end() ? Postings{} : Materialize(it->first, it->second);
  }
  // Every accepted value's ids into one vector, then sorted once.
  Postings out;
  size_t n = 0;
  for (uint32_t v : vit->second) {
    if (m.Matches(symbols.Get(v)) != negate) {
      auto it = lists_.find(Key(name_sym, v));
      if (it == lists_.end()) continue;
      if (late_.contains(it->first)) {
        const Postings merged = Materialize(it->first, it->second);
        out.insert(out.end(), merged.begin(), merged.end());
      } else {
        it->second.AppendTo(&out);
      }
      ++n;
    }
  }
  // Each list is sorted and the lists are disjoint (a series has one value
  // per name), so one list needs no sort.
  if (n > 1) std::sort(out.begin(), out.end());
  return out;
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
  if (!have) result = Materialize(kAllKey, all_);
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
  return Materialize(kAllKey, all_);
}

size_t PostingsIndex::MemoryBytes() const {
  vigil::ReaderMutexLock l(&mu_);
  size_t b =
      all_.HeapBytes() + lists_.capacity() * (8 + sizeof(PostingList) + 1);
  for (const auto& [_, p] : lists_) b += p.HeapBytes();
  for (const auto& [_, v] : values_) b += v.capacity() * 4 + 40;
  for (const auto& [_, v] : late_) b += v.capacity() * 4 + 40;
  return b;
}

}  // namespace vigil::storage::internal
