#include "storage/internal/slab.h"

#include <sys/mman.h>

#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>

#include "core/status_macros.h"

#if defined(__SANITIZE_ADDRESS__)
#define VIGIL_SLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VIGIL_SLAB_ASAN 1
#endif
#endif

namespace vigil::storage::internal {

// The header at the start of every page. Slots follow it; a free slot
// holds the offset of the next free one (0 ends the list).
struct Slab::Page {
  Page* next;  // in its class's list of pages with a free slot
  Page* prev;
  uint16_t free_head;  // offset of the first free slot, 0 if none
  uint16_t bump;       // offset of the first slot never handed out
  uint16_t live;       // objects in the page
  uint16_t cls;        // slot size / kGranule
  uint16_t slots;      // slots the page holds
  // The list it is in, -1 if none (full). Written under the class's lock;
  // Consolidate reads it without, to skip objects on full pages cheaply.
  int8_t bucket;
};

namespace {
int8_t LoadBucket(const int8_t& b) {
  return std::atomic_ref<int8_t>(const_cast<int8_t&>(b))
      .load(std::memory_order_relaxed);
}
void StoreBucket(int8_t& b, int v) {
  std::atomic_ref<int8_t>(b).store(static_cast<int8_t>(v),
                                   std::memory_order_relaxed);
}
}  // namespace

namespace {
constexpr size_t kHeaderBytes = 32;
static_assert(kHeaderBytes % Slab::kGranule == 0);
static_assert(Slab::kPageBytes <= UINT16_MAX + 1, "slot offsets are 16-bit");
static_assert(Slab::kMaxBytes % Slab::kGranule == 0);
}  // namespace

Slab::Slab() = default;

Slab::~Slab() {
  SpinLockHolder l(&pool_mu_);
  for (const Mapping& m : mappings_) munmap(m.addr, m.len);
}

Slab& Slab::Global() {
  static Slab* const slab = new Slab;
  return *slab;
}

// 0 for the fullest pages .. kBuckets - 1 for the emptiest.
// REQUIRES: the page has a free slot.
int Slab::Bucket(const Page* p) {
  const int free_slots = p->slots - p->live;
  return (free_slots * kBuckets - 1) / p->slots;
}

void Slab::Link(Class* c, Page* p) {
  const int b = Bucket(p);
  p->prev = nullptr;
  p->next = c->lists[b];
  if (p->next != nullptr) p->next->prev = p;
  c->lists[b] = p;
  c->nonempty |= 1u << b;
  StoreBucket(p->bucket, b);
  ++c->listed;
}

void Slab::Unlink(Class* c, Page* p) {
  const int b = p->bucket;
  if (p->prev != nullptr) {
    p->prev->next = p->next;
  } else {
    c->lists[b] = p->next;
    if (p->next == nullptr) c->nonempty &= ~(1u << b);
  }
  if (p->next != nullptr) p->next->prev = p->prev;
  p->next = p->prev = nullptr;
  StoreBucket(p->bucket, -1);
  --c->listed;
}

Slab::Page* Slab::TakePage(uint16_t cls) {
  char* mem = nullptr;
  {
    SpinLockHolder l(&pool_mu_);
    ++used_pages_;
    if (!cached_.empty()) {
      mem = reinterpret_cast<char*>(cached_.back());
      cached_.pop_back();
    } else if (!released_.empty()) {
      mem = reinterpret_cast<char*>(released_.back());
      released_.pop_back();
    } else {
      if (fresh_ == fresh_end_) {
        // Over-map by a page so that the pages can be aligned, then give
        // the unaligned ends back.
        const size_t len = kSpanBytes + kPageBytes;
        void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        VIGIL_CHECK(m != MAP_FAILED);
        const auto start = reinterpret_cast<uintptr_t>(m);
        const uintptr_t aligned =
            (start + kPageBytes - 1) & ~(uintptr_t{kPageBytes} - 1);
        if (aligned > start) munmap(m, aligned - start);
        const uintptr_t end = aligned + kSpanBytes;
        if (start + len > end)
          munmap(reinterpret_cast<void*>(end), start + len - end);
        mappings_.push_back({reinterpret_cast<void*>(aligned), kSpanBytes});
        fresh_ = reinterpret_cast<char*>(aligned);
        fresh_end_ = fresh_ + kSpanBytes;
      }
      mem = fresh_;
      fresh_ += kPageBytes;
    }
  }
  static_assert(sizeof(Page) <= kHeaderBytes);
  Page* p = reinterpret_cast<Page*>(mem);
  p->next = p->prev = nullptr;
  p->free_head = 0;
  p->bump = kHeaderBytes;
  p->live = 0;
  p->cls = cls;
  p->slots =
      static_cast<uint16_t>((kPageBytes - kHeaderBytes) / (cls * kGranule));
  StoreBucket(p->bucket, -1);
  return p;
}

void Slab::ReturnPage(Page* p) {
  {
    SpinLockHolder l(&pool_mu_);
    --used_pages_;
    if (cached_.size() < kCachedFreePages) {
      cached_.push_back(p);
      return;
    }
  }
  // Outside the lock: the kernel's work is the slow part.
  madvise(p, kPageBytes, MADV_DONTNEED);
  SpinLockHolder l(&pool_mu_);
  released_.push_back(p);
}

char* Slab::AllocLocked(Class* c, uint16_t cls) {
  Page* p;
  if (c->nonempty != 0) {
    p = c->lists[std::countr_zero(c->nonempty)];  // the fullest with room
  } else {
    p = TakePage(cls);
    Link(c, p);
  }
  return TakeSlot(c, p);
}

char* Slab::TakeSlot(Class* c, Page* p) {
  const uint32_t size = uint32_t{p->cls} * kGranule;
  char* obj;
  if (p->free_head != 0) {
    obj = reinterpret_cast<char*>(p) + p->free_head;
    std::memcpy(&p->free_head, obj, sizeof(p->free_head));
  } else {
    obj = reinterpret_cast<char*>(p) + p->bump;
    p->bump = static_cast<uint16_t>(p->bump + size);
  }
  ++p->live;
  if (p->live == p->slots) {
    Unlink(c, p);
  } else if (Bucket(p) != p->bucket) {
    Unlink(c, p);
    Link(c, p);
  }
  return obj;
}

Slab::Page* Slab::FreeLocked(Class* c, uint16_t cls, void* ptr) {
  Page* p = PageOf(ptr);
  // A size that does not match the page's would corrupt the page.
  VIGIL_CHECK(p->cls == cls && p->live > 0);
  const auto off = static_cast<uint16_t>(static_cast<char*>(ptr) -
                                         reinterpret_cast<char*>(p));
  std::memcpy(ptr, &p->free_head, sizeof(p->free_head));
  p->free_head = off;
  --p->live;
  if (p->bucket < 0) {
    Link(c, p);  // was full
  } else if (p->live == 0 && c->listed > 1) {
    // Empty: back to the pool, unless it is the class's only page with
    // room (a class that empties and refills would thrash).
    Unlink(c, p);
    return p;
  } else if (Bucket(p) != p->bucket) {
    Unlink(c, p);
    Link(c, p);
  }
  return nullptr;
}

void* Slab::Alloc(size_t n) {
  VIGIL_CHECK(n > 0 && n <= kMaxBytes);
  const auto cls = static_cast<uint16_t>((n + kGranule - 1) / kGranule);
  Class& c = classes_[cls];
  char* obj;
  {
    SpinLockHolder l(&c.mu);
    obj = AllocLocked(&c, cls);
  }
  object_bytes_.fetch_add(uint32_t{cls} * kGranule, std::memory_order_relaxed);
  return obj;
}

void Slab::Free(void* ptr, size_t n) {
  const auto cls = static_cast<uint16_t>((n + kGranule - 1) / kGranule);
  Page* empty;
  {
    Class& c = classes_[cls];
    SpinLockHolder l(&c.mu);
    empty = FreeLocked(&c, cls, ptr);
  }
  object_bytes_.fetch_sub(uint32_t{cls} * kGranule, std::memory_order_relaxed);
  if (empty != nullptr) ReturnPage(empty);
}

void* Slab::Consolidate(void* ptr, size_t n) {
  Page* p = PageOf(ptr);
  // Most objects are on pages at least half full (or full: -1): one
  // relaxed load of the header, no lock.
  if (LoadBucket(p->bucket) < kSparseBucket) return ptr;
  const auto cls = static_cast<uint16_t>((n + kGranule - 1) / kGranule);
  Class& c = classes_[cls];
  Page* empty;
  char* obj;
  {
    SpinLockHolder l(&c.mu);
    VIGIL_CHECK(p->cls == cls && p->live > 0);
    if (p->bucket < kSparseBucket) return ptr;
    // To the fullest other page with room, if it holds at least as many
    // objects: each move makes the sum of the squared page counts grow, so
    // objects never move back and forth, and a class whose pages all
    // drained evenly (a wave that left a few objects on each) gathers
    // them on the fewest pages.
    Page* to = c.lists[std::countr_zero(c.nonempty)];  // p's list at worst
    if (to == p) to = p->next;
    if (to == nullptr || to->live < p->live) return ptr;
    obj = TakeSlot(&c, to);
    std::memcpy(obj, ptr, uint32_t{cls} * kGranule);
    empty = FreeLocked(&c, cls, ptr);
  }
  moves_.fetch_add(1, std::memory_order_relaxed);
  if (empty != nullptr) ReturnPage(empty);
  return obj;
}

Slab::Stats Slab::stats() const {
  Stats s;
  SpinLockHolder l(&pool_mu_);
  s.used_pages = used_pages_;
  s.cached_pages = cached_.size();
  s.released_pages = released_.size();
  s.object_bytes = object_bytes_.load(std::memory_order_relaxed);
  s.moves = moves_.load(std::memory_order_relaxed);
  return s;
}

#ifdef VIGIL_SLAB_ASAN
void* SmallAlloc(size_t n) {
  void* p = std::malloc(n);
  VIGIL_CHECK(p != nullptr);
  return p;
}
void SmallFree(void* p, size_t) { std::free(p); }
void* SmallConsolidate(void* p, size_t) { return p; }
bool SmallAllocUsesSlab() { return false; }
#else
bool SmallAllocUsesSlab() { return true; }
void* SmallAlloc(size_t n) {
  if (n > 0 && n <= Slab::kMaxBytes) return Slab::Global().Alloc(n);
  void* p = std::malloc(n);
  VIGIL_CHECK(p != nullptr);
  return p;
}
void SmallFree(void* p, size_t n) {
  if (p == nullptr) return;
  if (n > 0 && n <= Slab::kMaxBytes) {
    Slab::Global().Free(p, n);
  } else {
    std::free(p);
  }
}
void* SmallConsolidate(void* p, size_t n) {
  if (p == nullptr || n == 0 || n > Slab::kMaxBytes) return p;
  return Slab::Global().Consolidate(p, n);
}
#endif

}  // namespace vigil::storage::internal
