// -----------------------------------------------------------------------------
// File: symbols.h
// -----------------------------------------------------------------------------
//
// Interned strings: every label name and value is stored once and referred
// to by a 32-bit id, so a series costs a few integers, not strings.
// Thread-safe. Each Intern counts a reference; Release drops one, and a
// string whose count reaches zero is no longer found by Intern/Find. Its
// memory and its id are given back by Free, which the head calls once no
// reader can hold the id any more (epoch.h), so views stay valid while a
// reader that could have seen the id runs. Freed ids are reused.
#ifndef VIGIL_STORAGE_INTERNAL_SYMBOLS_H_
#define VIGIL_STORAGE_INTERNAL_SYMBOLS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "core/sync.h"

namespace vigil::storage::internal {

class SymbolTable {
 public:
  SymbolTable() = default;
  SymbolTable(const SymbolTable&) = delete;
  SymbolTable& operator=(const SymbolTable&) = delete;
  ~SymbolTable();

  static constexpr uint32_t kNotFound = 0xffffffffu;

  // Returns the id of `s`, interning it if new, and counts a reference.
  uint32_t Intern(std::string_view s) ABSL_LOCKS_EXCLUDED(mu_);
  // Drops one reference to each of ids[0..n); appends to *dead the ids
  // left without references (no longer found by Intern or Find; pass them
  // to Free once no reader can hold them).
  void Release(const uint32_t* ids, size_t n, std::vector<uint32_t>* dead)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Frees the strings of ids Release reported dead, for reuse.
  void Free(const std::vector<uint32_t>& dead) ABSL_LOCKS_EXCLUDED(mu_);
  // Returns the id of `s`, or kNotFound.
  uint32_t Find(std::string_view s) const ABSL_LOCKS_EXCLUDED(mu_);
  // REQUIRES: id was returned by Intern. The view lives as long as the table.
  std::string_view Get(uint32_t id) const ABSL_LOCKS_EXCLUDED(mu_);
  // Get for ids[0..n) into out[0..n), under one lock acquisition.
  void GetMany(const uint32_t* ids, size_t n, std::string_view* out) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Live strings (interned, not released to zero).
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
  // by_id_[id] points into its own heap block (new char[]), owned here.
  std::vector<std::string_view> by_id_ ABSL_GUARDED_BY(mu_);
  std::vector<uint32_t> refs_ ABSL_GUARDED_BY(mu_);
  std::vector<uint32_t> free_ids_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string_view, uint32_t, Hash> ids_
      ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_SYMBOLS_H_
