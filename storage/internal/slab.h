// -----------------------------------------------------------------------------
// File: slab.h
// -----------------------------------------------------------------------------
//
// Slab: a size-segregated allocator for the head's series records and
// open-chunk buffers: millions of objects of a few dozen sizes (56 bytes
// and the varint label ids; a chunk's capacity), created together when a
// target is first scraped and walked in that order by every commit.
//
// Each 8 KiB page holds slots of one size only (a multiple of 8 bytes, no
// per-object header, so a 69-byte record takes 72 bytes, not malloc's 80,
// and the records of a page lie packed in creation order), a freed slot
// is reused by the next object of its size (from the fullest page that has
// one, so that sparse pages drain), and a page whose objects are all freed
// goes back to a pool shared by every size: beyond a few cached ones,
// pooled pages are given back to the kernel (MADV_DONTNEED).
//
// Every series' buffer grows through the sizes at about the same pace, so
// a wave of buffers leaves a size at once, and the few that grow slowest
// (constant series) would keep its pages resident but sparse (at 400 k
// series a quarter of the slab's resident bytes were such holes in the
// first minutes, bench/README.md, session 43). So an object whose owner
// can move it (a buffer, under its series' lock) is passed to Consolidate
// whenever it grows within its slot: if its page is less than half full
// and a page at least as full has room, it moves there, and the sparse
// pages drain.
//
// The caller passes the size to Free (a record knows its label bytes, a
// buffer its capacity), which picks the size class; the page is found
// from the pointer (pages are 8 KiB aligned). Objects are 8-byte
// aligned. Sizes above kMaxBytes are not served (SmallAlloc below sends
// them to malloc).
//
// Thread-safe: one spin lock per size class, one for the page pool.
#ifndef VIGIL_STORAGE_INTERNAL_SLAB_H_
#define VIGIL_STORAGE_INTERNAL_SLAB_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "storage/internal/spinlock.h"

namespace vigil::storage::internal {

class Slab {
 public:
  static constexpr size_t kPageBytes = 8192;
  static constexpr size_t kMaxBytes = 1024;
  static constexpr size_t kGranule = 8;
  // Pages are carved out of mappings of this size.
  static constexpr size_t kSpanBytes = size_t{1} << 20;
  // Empty pages kept resident for reuse before the next ones are given
  // back to the kernel.
  static constexpr size_t kCachedFreePages = 32;

  struct Stats {
    size_t used_pages = 0;      // pages holding at least one object
    size_t cached_pages = 0;    // empty, still resident, for reuse
    size_t released_pages = 0;  // empty, given back to the kernel
    size_t object_bytes = 0;    // the objects' slot sizes, summed
    uint64_t moves = 0;         // objects Consolidate moved, ever
    // Resident bytes of the slab: used and cached pages.
    size_t resident_bytes() const {
      return (used_pages + cached_pages) * kPageBytes;
    }
  };

  Slab();
  // Unmaps every page: no object may be used after.
  ~Slab();
  Slab(const Slab&) = delete;
  Slab& operator=(const Slab&) = delete;

  // REQUIRES: 0 < n <= kMaxBytes. Never fails (aborts when the kernel
  // refuses memory, as operator new would).
  void* Alloc(size_t n);
  // REQUIRES: p from Alloc(m) of this slab with m rounding to the same
  // size class as n (same multiple of 8), not freed since.
  void Free(void* p, size_t n);
  // Moves the object at p (allocated with size n) to another page of its
  // size if its own page is less than half full and one of the fullest
  // pages with a free slot holds at least as many objects. Returns where
  // the object is now: p if it stayed, else a new address, p being freed.
  // Costs one relaxed load when p's page is at least half full.
  // REQUIRES: as Free; no one else uses p meanwhile.
  void* Consolidate(void* p, size_t n);

  Stats stats() const;

  // The process's slab (never destroyed).
  static Slab& Global();

 private:
  struct Page;
  // Pages with a free slot, by how full they are: allocation takes from
  // the fullest, so that the emptiest drain and go back to the pool (a
  // wave of chunk buffers growing through a size leaves its pages sparse).
  static constexpr int kBuckets = 8;
  // Pages in this bucket or emptier are less than half full.
  static constexpr int kSparseBucket = kBuckets / 2;
  struct Class {
    SpinLock mu;
    Page* lists[kBuckets] ABSL_GUARDED_BY(mu) = {};
    uint32_t nonempty ABSL_GUARDED_BY(mu) = 0;  // bit b: lists[b] has a page
    uint32_t listed ABSL_GUARDED_BY(mu) = 0;    // pages in the lists
  };
  static constexpr size_t kNumClasses = kMaxBytes / kGranule + 1;

  static Page* PageOf(void* obj) {
    return reinterpret_cast<Page*>(reinterpret_cast<uintptr_t>(obj) &
                                   ~(uintptr_t{kPageBytes} - 1));
  }
  char* AllocLocked(Class* c, uint16_t cls)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu);
  // A slot of `p`, a page of c with a free slot.
  char* TakeSlot(Class* c, Page* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu);
  // Returns the page if it became empty and left its class's lists (the
  // caller returns it to the pool outside the class's lock), else null.
  Page* FreeLocked(Class* c, uint16_t cls, void* obj)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu);
  Page* TakePage(uint16_t cls);
  void ReturnPage(Page* p);
  static int Bucket(const Page* p);
  static void Link(Class* c, Page* p);
  static void Unlink(Class* c, Page* p);

  Class classes_[kNumClasses];

  mutable SpinLock pool_mu_;
  std::vector<Page*> cached_ ABSL_GUARDED_BY(pool_mu_);    // resident
  std::vector<Page*> released_ ABSL_GUARDED_BY(pool_mu_);  // not resident
  char* fresh_ ABSL_GUARDED_BY(pool_mu_) = nullptr;  // next never-used page
  char* fresh_end_ ABSL_GUARDED_BY(pool_mu_) = nullptr;
  struct Mapping {
    void* addr;
    size_t len;
  };
  std::vector<Mapping> mappings_ ABSL_GUARDED_BY(pool_mu_);
  size_t used_pages_ ABSL_GUARDED_BY(pool_mu_) = 0;
  std::atomic<size_t> object_bytes_{0};
  std::atomic<uint64_t> moves_{0};
};

// The head's small allocations: the global slab for sizes up to
// Slab::kMaxBytes, malloc beyond. Sanitizer builds use malloc for every
// size, so that AddressSanitizer sees each object's bounds and lifetime.
void* SmallAlloc(size_t n);
void SmallFree(void* p, size_t n);
// Slab::Consolidate for an object of SmallAlloc(n); p itself for sizes
// malloc serves, and in sanitizer builds.
void* SmallConsolidate(void* p, size_t n);
// False in sanitizer builds.
bool SmallAllocUsesSlab();

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_SLAB_H_
