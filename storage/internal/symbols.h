// -----------------------------------------------------------------------------
// File: symbols.h
// -----------------------------------------------------------------------------
//
// Interned strings: every label name and value is stored once and referred
// to by a 32-bit id, so a series costs a few integers, not strings.
// Thread-safe. Ids are dense, start at 0, and are never reused; strings are
// never freed while the table lives (their views stay valid).
#ifndef VIGIL_STORAGE_INTERNAL_SYMBOLS_H_
#define VIGIL_STORAGE_INTERNAL_SYMBOLS_H_

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "core/sync.h"

namespace vigil::storage::internal {

class SymbolTable {
 public:
  static constexpr uint32_t kNotFound = 0xffffffffu;

  // Returns the id of `s`, interning it if new.
  uint32_t Intern(std::string_view s) ABSL_LOCKS_EXCLUDED(mu_);
  // Returns the id of `s`, or kNotFound.
  uint32_t Find(std::string_view s) const ABSL_LOCKS_EXCLUDED(mu_);
  // REQUIRES: id was returned by Intern. The view lives as long as the table.
  std::string_view Get(uint32_t id) const ABSL_LOCKS_EXCLUDED(mu_);
  // Get for ids[0..n) into out[0..n), under one lock acquisition.
  void GetMany(const uint32_t* ids, size_t n, std::string_view* out) const
      ABSL_LOCKS_EXCLUDED(mu_);
  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t MemoryBytes() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>()(s);
    }
  };
  mutable vigil::Mutex mu_;
  std::deque<std::string> strings_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string_view> by_id_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string_view, uint32_t, Hash> ids_
      ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_SYMBOLS_H_
