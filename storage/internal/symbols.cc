#include "storage/internal/symbols.h"

#include <cstring>

namespace vigil::storage::internal {

namespace {
constexpr size_t kOverhead = 48;  // map slot, view, count, malloc header
}  // namespace

SymbolTable::~SymbolTable() {
  for (std::string_view v : by_id_) delete[] v.data();
}

uint32_t SymbolTable::Intern(std::string_view s) {
  vigil::MutexLock l(&mu_);
  auto it = ids_.find(s);
  if (it != ids_.end()) {
    ++refs_[it->second];
    return it->second;
  }
  char* mem = new char[s.size() ? s.size() : 1];
  if (!s.empty()) std::memcpy(mem, s.data(), s.size());
  std::string_view v(mem, s.size());
  uint32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
    by_id_[id] = v;
    refs_[id] = 1;
  } else {
    id = uint32_t(by_id_.size());
    by_id_.push_back(v);
    refs_.push_back(1);
  }
  ids_.emplace(v, id);
  bytes_ += s.size() + kOverhead;
  return id;
}

void SymbolTable::Release(const uint32_t* ids, size_t n,
                          std::vector<uint32_t>* dead) {
  vigil::MutexLock l(&mu_);
  for (size_t i = 0; i < n; ++i) {
    uint32_t id = ids[i];
    if (refs_[id] == 0) continue;  // a bug upstream; never underflow
    if (--refs_[id] == 0) {
      ids_.erase(by_id_[id]);
      dead->push_back(id);
    }
  }
}

void SymbolTable::Free(const std::vector<uint32_t>& dead) {
  vigil::MutexLock l(&mu_);
  for (uint32_t id : dead) {
    // Interned again meanwhile under a new id; this one stays dead.
    if (refs_[id] != 0 || by_id_[id].data() == nullptr) continue;
    bytes_ -= by_id_[id].size() + kOverhead;
    delete[] by_id_[id].data();
    by_id_[id] = std::string_view();
    free_ids_.push_back(id);
  }
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
  return ids_.size();
}

size_t SymbolTable::MemoryBytes() const {
  vigil::ReaderMutexLock l(&mu_);
  return bytes_ + by_id_.capacity() * sizeof(std::string_view) +
         refs_.capacity() * sizeof(uint32_t);
}

}  // namespace vigil::storage::internal
