// -----------------------------------------------------------------------------
// File: postings.h
// -----------------------------------------------------------------------------
//
// The in-memory inverted index: (label name, label value) → sorted series
// ids, plus the set operations queries combine them with. Regex matchers run
// over the distinct values of one label name, never over series. The lists
// are kept compressed (posting_list.h) and decoded when a query asks.
// PostingsIndex is thread-safe.
#ifndef VIGIL_STORAGE_INTERNAL_POSTINGS_H_
#define VIGIL_STORAGE_INTERNAL_POSTINGS_H_

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "core/matcher.h"
#include "core/sync.h"
#include "storage/internal/posting_list.h"
#include "storage/internal/symbols.h"

namespace vigil::storage::internal {

using Postings = std::vector<uint32_t>;  // ascending series ids

Postings Intersect(const Postings& a, const Postings& b);
Postings Union(const std::vector<const Postings*>& lists);
Postings Subtract(const Postings& a, const Postings& b);  // a \ b

class PostingsIndex {
 public:
  // Adds series `id` with labels given as (name, value) symbol pairs.
  // Ids should arrive in ascending order (appending is O(1)); an id below
  // a list's largest waits in a small sorted side list until enough of
  // them have gathered to fold in with one re-encoding of the list.
  void Add(uint32_t id, const uint32_t* pairs, size_t num_labels)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Removes series `id` (same pairs as its Add); label names and values
  // left without series are forgotten. O(series per value) per label: to
  // remove many, RemoveMany.
  void Remove(uint32_t id, const uint32_t* pairs, size_t num_labels)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Removes many series at once (head GC): one pass over each affected
  // list, however many of its ids go. `ids` ascending; pairs[i] and
  // num_labels[i] as for Remove.
  void RemoveMany(const std::vector<uint32_t>& ids,
                  const std::vector<const uint32_t*>& pairs,
                  const std::vector<size_t>& num_labels)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Series ids matching all matchers, Prometheus semantics (a matcher that
  // accepts "" also accepts series lacking the label). If every matcher
  // accepts "", starts from all series.
  Postings Select(const SymbolTable& symbols,
                  const std::vector<Matcher>& matchers) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // Symbol ids of all label names / of the values of `name_sym`.
  std::vector<uint32_t> Names() const ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<uint32_t> Values(uint32_t name_sym) const
      ABSL_LOCKS_EXCLUDED(mu_);
  Postings All() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t MemoryBytes() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  static uint64_t Key(uint32_t n, uint32_t v) {
    return (uint64_t(n) << 32) | v;
  }
  // The key of all_'s side list (no symbol id reaches 2^32 - 1).
  static constexpr uint64_t kAllKey = ~uint64_t{0};
  // A list's ids, its side list merged in.
  Postings Materialize(uint64_t key, const PostingList& list) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void AddTo(uint64_t key, PostingList* list, uint32_t id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes `ids` (ascending) from the list and its side list.
  void SubtractFrom(uint64_t key, PostingList* list,
                    const std::vector<uint32_t>& ids)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ListEmpty(uint64_t key, const PostingList& list) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Union of the postings of values of `name_sym` accepted (or, with
  // `negate`, rejected) by m.
  Postings MatchingValues(const SymbolTable& symbols, uint32_t name_sym,
                          const Matcher& m, bool negate) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  mutable vigil::Mutex mu_;
  absl::flat_hash_map<uint64_t, PostingList> lists_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> values_
      ABSL_GUARDED_BY(mu_);
  PostingList all_ ABSL_GUARDED_BY(mu_);
  // Ids that arrived below their list's largest (a series revived or
  // re-indexed with its old ref), sorted, by list key (kAllKey: all_).
  absl::flat_hash_map<uint64_t, std::vector<uint32_t>> late_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_POSTINGS_H_
