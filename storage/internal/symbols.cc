#include "storage/internal/symbols.h"

namespace vigil::storage::internal {

uint32_t SymbolTable::Intern(std::string_view s) {
  {
    vigil::ReaderMutexLock l(&mu_);
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
  }
  vigil::MutexLock l(&mu_);
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  strings_.emplace_back(s);
  std::string_view v = strings_.back();
  uint32_t id = uint32_t(by_id_.size());
  by_id_.push_back(v);
  ids_.emplace(v, id);
  bytes_ += s.size() + 48;
  return id;
}

uint32_t SymbolTable::Find(std::string_view s) const {
  vigil::ReaderMutexLock l(&mu_);
  auto it = ids_.find(s);
  return it == ids_.end() ? kNotFound : it->second;
}

std::string_view SymbolTable::Get(uint32_t id) const {
  vigil::ReaderMutexLock l(&mu_);
  return by_id_[id];
}

void SymbolTable::GetMany(const uint32_t* ids, size_t n,
                          std::string_view* out) const {
  vigil::ReaderMutexLock l(&mu_);
  for (size_t i = 0; i < n; ++i) out[i] = by_id_[ids[i]];
}

size_t SymbolTable::size() const {
  vigil::ReaderMutexLock l(&mu_);
  return by_id_.size();
}

size_t SymbolTable::MemoryBytes() const {
  vigil::ReaderMutexLock l(&mu_);
  return bytes_ + by_id_.capacity() * sizeof(std::string_view);
}

}  // namespace vigil::storage::internal
