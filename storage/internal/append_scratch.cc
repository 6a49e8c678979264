#include "storage/internal/append_scratch.h"

#include <algorithm>
#include <bit>
#include <iterator>
#include <utility>

namespace vigil::storage::internal {

uint64_t LastSampleTable::Hash(const MemSeries* s) {
  // Series are heap blocks at least 16 bytes apart: drop the low bits and
  // mix the rest (Fibonacci hashing).
  return (reinterpret_cast<uintptr_t>(s) >> 4) * uint64_t{0x9E3779B97F4A7C15};
}

size_t LastSampleTable::Slot(uint64_t hash) const {
  // The top bits are the best mixed.
  return static_cast<size_t>(hash >> (64 - std::countr_zero(slots_.size())));
}

const LastSampleTable::Entry* LastSampleTable::Find(const MemSeries* s) const {
  if (size_ == 0) return nullptr;
  const uint64_t h = Hash(s);
  const size_t bit = FilterBit(h);
  if ((filter_[bit / 64] >> (bit % 64) & 1) == 0) return nullptr;
  const size_t mask = slots_.size() - 1;
  for (size_t i = Slot(h);; i = (i + 1) & mask) {
    const Entry& e = slots_[i];
    if (e.gen != gen_) return nullptr;
    if (e.key == s) return &e;
  }
}

void LastSampleTable::Put(const MemSeries* s, Timestamp t, double v) {
  if ((size_ + 1) * 2 > slots_.size()) Grow();
  const uint64_t h = Hash(s);
  const size_t bit = FilterBit(h);
  filter_[bit / 64] |= uint64_t{1} << (bit % 64);
  const size_t mask = slots_.size() - 1;
  for (size_t i = Slot(h);; i = (i + 1) & mask) {
    Entry& e = slots_[i];
    if (e.gen != gen_) {
      e = {s, gen_, t, v};
      ++size_;
      return;
    }
    if (e.key == s) {
      e.t = t;
      e.v = v;
      return;
    }
  }
}

void LastSampleTable::Clear() {
  if (size_ == 0) return;
  size_ = 0;
  std::fill(std::begin(filter_), std::end(filter_), 0);
  if (++gen_ == 0) {  // wrapped: stale entries could look current
    for (Entry& e : slots_) e.gen = 0;
    gen_ = 1;
  }
}

void LastSampleTable::Grow() {
  std::vector<Entry> old = std::move(slots_);
  const uint32_t old_gen = gen_;
  slots_.assign(old.empty() ? 64 : old.size() * 2, Entry{});
  gen_ = 1;
  size_ = 0;
  for (const Entry& e : old) {
    if (e.gen == old_gen) Put(e.key, e.t, e.v);
  }
}

void AppendScratch::StartTracking() {
  tracking = true;
  track_from = samples.size();
  for (size_t i = 0; i < samples.size(); ++i) {
    last.Put(series[i], samples[i].t, samples[i].v);
  }
}

std::unique_ptr<AppendScratch> AppendScratchPool::Get() {
  {
    vigil::MutexLock l(&mu_);
    if (!free_.empty()) {
      std::unique_ptr<AppendScratch> s = std::move(free_.back());
      free_.pop_back();
      return s;
    }
  }
  return std::make_unique<AppendScratch>();
}

void AppendScratchPool::Put(std::unique_ptr<AppendScratch> s) {
  if (s == nullptr || s->samples.capacity() > kMaxPooledSamples ||
      s->last.capacity() > 2 * kMaxPooledSamples) {
    return;
  }
  s->Clear();
  vigil::MutexLock l(&mu_);
  if (free_.size() < kMaxPooled) free_.push_back(std::move(s));
}

}  // namespace vigil::storage::internal
