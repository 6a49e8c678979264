#include "storage/internal/posting_list.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <utility>

#include "core/status_macros.h"

namespace vigil::storage::internal {

PostingList::~PostingList() { Clear(); }

PostingList::PostingList(PostingList&& o) noexcept { *this = std::move(o); }

PostingList& PostingList::operator=(PostingList&& o) noexcept {
  if (this == &o) return *this;
  Clear();
  u_ = o.u_;
  size_ = std::exchange(o.size_, 0);
  count_ = std::exchange(o.count_, 0);
  last_ = std::exchange(o.last_, 0);
  run_ = std::exchange(o.run_, 0);
  return *this;
}

void PostingList::Clear() {
  if (size_ > kInline) std::free(u_.heap);
  u_.heap = nullptr;
  size_ = count_ = last_ = run_ = 0;
}

uint32_t PostingList::Capacity(uint32_t n) {
  if (n <= kInline) return kInline;
  const uint32_t step = std::max<uint32_t>(16, std::bit_floor(n) / 8);
  return (n + step - 1) / step * step;
}

void PostingList::AppendBytes(const uint8_t* b, uint32_t n) {
  const uint32_t size = size_ + n;
  if (size <= kInline) {
    std::memcpy(u_.inl + size_, b, n);
  } else if (size_ <= kInline) {
    // Out of the object: to the heap.
    auto* heap = static_cast<uint8_t*>(std::malloc(Capacity(size)));
    VIGIL_CHECK(heap != nullptr);
    std::memcpy(heap, u_.inl, size_);
    std::memcpy(heap + size_, b, n);
    u_.heap = heap;
  } else {
    if (Capacity(size) != Capacity(size_)) {
      auto* heap = static_cast<uint8_t*>(std::realloc(u_.heap, Capacity(size)));
      VIGIL_CHECK(heap != nullptr);
      u_.heap = heap;
    }
    std::memcpy(u_.heap + size_, b, n);
  }
  size_ = size;
}

void PostingList::PutToken(uint64_t v) {
  uint8_t b[10];
  uint32_t n = 0;
  while (v >= 0x80) {
    b[n++] = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  b[n++] = static_cast<uint8_t>(v);
  AppendBytes(b, n);
}

void PostingList::FlushRun() {
  if (run_ == 0) return;
  PutToken((uint64_t{run_} << 1) | 1);
  run_ = 0;
}

void PostingList::Append(uint32_t id) {
  if (count_ > 0) {
    VIGIL_CHECK(id > last_);
    if (id == last_ + 1) {
      ++run_;
    } else {
      FlushRun();
      PutToken(uint64_t{id - last_} << 1);
    }
  } else {
    PutToken((uint64_t{id} + 1) << 1);
  }
  last_ = id;
  ++count_;
}

void PostingList::Assign(const uint32_t* ids, size_t n) {
  PostingList fresh;
  for (size_t i = 0; i < n; ++i) fresh.Append(ids[i]);
  *this = std::move(fresh);
}

void PostingList::Merge(const std::vector<uint32_t>& ids) {
  if (ids.empty()) return;
  if (empty() || ids.front() > last_) {
    for (uint32_t id : ids) Append(id);
    return;
  }
  const std::vector<uint32_t> cur = Decode();
  std::vector<uint32_t> out;
  out.reserve(cur.size() + ids.size());
  std::set_union(cur.begin(), cur.end(), ids.begin(), ids.end(),
                 std::back_inserter(out));
  Assign(out.data(), out.size());
}

void PostingList::Subtract(const std::vector<uint32_t>& ids) {
  if (ids.empty() || empty()) return;
  const std::vector<uint32_t> cur = Decode();
  std::vector<uint32_t> out;
  out.reserve(cur.size());
  std::set_difference(cur.begin(), cur.end(), ids.begin(), ids.end(),
                      std::back_inserter(out));
  if (out.size() != cur.size()) Assign(out.data(), out.size());
}

namespace {
// Reads one varint token at *p (the encoding is our own: well formed).
uint64_t GetToken(const uint8_t** p) {
  uint64_t v = 0;
  int shift = 0;
  while (**p & 0x80) {
    v |= uint64_t{static_cast<uint8_t>(**p & 0x7f)} << shift;
    shift += 7;
    ++*p;
  }
  v |= uint64_t{**p} << shift;
  ++*p;
  return v;
}

// Calls f(first, n) for each span of n consecutive ids the encoding holds
// (a gap token is a span of one, a run token a span following the previous
// id), in order, until f returns false. Returns the last id visited (-1
// before any).
template <typename F>
int64_t ForEachSpan(const uint8_t* p, size_t size, F f) {
  const uint8_t* end = p + size;
  int64_t prev = -1;
  while (p < end) {
    const uint64_t v = GetToken(&p);
    int64_t first, n;
    if (v & 1) {
      first = prev + 1;
      n = static_cast<int64_t>(v >> 1);
    } else {
      first = prev + static_cast<int64_t>(v >> 1);
      n = 1;
    }
    prev = first + n - 1;
    if (!f(first, n)) break;
  }
  return prev;
}
}  // namespace

bool PostingList::Contains(uint32_t id) const {
  if (empty() || id > last_) return false;
  if (id > last_ - run_) return true;  // in the unencoded run
  bool found = false;
  ForEachSpan(data(), size_, [&](int64_t first, int64_t n) {
    if (int64_t{id} < first) return false;  // passed it
    found = int64_t{id} < first + n;
    return !found;
  });
  return found;
}

void PostingList::AppendTo(std::vector<uint32_t>* out) const {
  if (empty()) return;
  size_t at = out->size();
  out->resize(at + count_);
  uint32_t* o = out->data();
  int64_t prev = ForEachSpan(data(), size_, [&](int64_t first, int64_t n) {
    for (int64_t k = 0; k < n; ++k) o[at++] = static_cast<uint32_t>(first + k);
    return true;
  });
  for (uint32_t k = run_; k > 0; --k) o[at++] = static_cast<uint32_t>(++prev);
  VIGIL_CHECK(at == out->size() && prev == int64_t{last_});
}

std::vector<uint32_t> PostingList::Decode() const {
  std::vector<uint32_t> out;
  AppendTo(&out);
  return out;
}

size_t PostingList::HeapBytes() const {
  return size_ <= kInline ? 0 : Capacity(size_);
}

}  // namespace vigil::storage::internal
