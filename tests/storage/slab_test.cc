// The head's small-object allocator: slots of one size per page, pages
// given back when empty, safe from several threads.
#include "storage/internal/slab.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "storage/internal/head.h"

namespace vigil::storage::internal {
namespace {

struct Obj {
  unsigned char* p;
  size_t n;
  unsigned char fill;
};

void Fill(const Obj& o) { std::memset(o.p, o.fill, o.n); }
bool Intact(const Obj& o) {
  for (size_t i = 0; i < o.n; ++i) {
    if (o.p[i] != o.fill) return false;
  }
  return true;
}
size_t SlotBytes(size_t n) { return (n + 7) / 8 * 8; }

TEST_CASE("Slab objects are aligned, distinct and keep their bytes", "[slab]") {
  Slab slab;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<size_t> size(1, Slab::kMaxBytes);
  std::vector<Obj> live;
  size_t bytes = 0;
  for (int step = 0; step < 60000; ++step) {
    if (live.empty() || rng() % 5 < 3) {
      const size_t n = size(rng);
      Obj o{static_cast<unsigned char*>(slab.Alloc(n)), n,
            static_cast<unsigned char>(step)};
      REQUIRE(reinterpret_cast<uintptr_t>(o.p) % 8 == 0);
      Fill(o);
      live.push_back(o);
      bytes += SlotBytes(n);
    } else {
      const size_t i = rng() % live.size();
      // Every byte as written: no other object overlapped it.
      REQUIRE(Intact(live[i]));
      slab.Free(live[i].p, live[i].n);
      bytes -= SlotBytes(live[i].n);
      live[i] = live.back();
      live.pop_back();
    }
    if (step % 5000 == 0) REQUIRE(slab.stats().object_bytes == bytes);
  }
  for (const Obj& o : live) REQUIRE(Intact(o));
  REQUIRE(slab.stats().object_bytes == bytes);
  for (const Obj& o : live) slab.Free(o.p, o.n);
  const Slab::Stats s = slab.stats();
  REQUIRE(s.object_bytes == 0);
  // At most the one page each size class keeps.
  REQUIRE(s.used_pages <= Slab::kMaxBytes / 8);
}

TEST_CASE("A size class packs its slots and gives emptied pages back",
          "[slab]") {
  Slab slab;
  constexpr size_t kSize = 72;  // a series record
  const size_t per_page = (Slab::kPageBytes - 32) / kSize;
  const size_t pages = 100;
  std::vector<void*> objs;
  for (size_t i = 0; i < per_page * pages; ++i) {
    objs.push_back(slab.Alloc(kSize));
  }
  // Full pages, no header per object: exactly `pages` pages.
  REQUIRE(slab.stats().used_pages == pages);
  REQUIRE(slab.stats().object_bytes == objs.size() * kSize);

  // Freeing all but one object per page keeps every page.
  for (size_t i = 0; i < objs.size(); ++i) {
    if (i % per_page != 0) slab.Free(objs[i], kSize);
  }
  REQUIRE(slab.stats().used_pages == pages);
  // A freed slot is reused before any new page is taken.
  std::vector<void*> again;
  for (size_t i = 0; i < per_page - 1; ++i) again.push_back(slab.Alloc(kSize));
  REQUIRE(slab.stats().used_pages == pages);
  for (void* p : again) slab.Free(p, kSize);

  // The last object of a page frees the page: all but the one the class
  // keeps go to the pool, the first few resident, the rest released.
  for (size_t i = 0; i < objs.size(); i += per_page) slab.Free(objs[i], kSize);
  Slab::Stats s = slab.stats();
  REQUIRE(s.object_bytes == 0);
  REQUIRE(s.used_pages == 1);
  REQUIRE(s.cached_pages == Slab::kCachedFreePages);
  REQUIRE(s.released_pages == pages - 1 - Slab::kCachedFreePages);
  REQUIRE(s.resident_bytes() ==
          (1 + Slab::kCachedFreePages) * Slab::kPageBytes);

  // Another size class takes pooled pages before mapping new ones.
  std::vector<void*> other;
  for (size_t i = 0; i < 40 * ((Slab::kPageBytes - 32) / 200); ++i) {
    other.push_back(slab.Alloc(200));
  }
  s = slab.stats();
  REQUIRE(s.used_pages == 41);
  REQUIRE(s.cached_pages + s.released_pages == pages - 1 - 40);
  for (void* p : other) slab.Free(p, 200);
}

TEST_CASE("A class allocates from its fullest page, so sparse pages drain",
          "[slab]") {
  Slab slab;
  constexpr size_t kSize = 128;
  const size_t per_page = (Slab::kPageBytes - 32) / kSize;
  // A wave: 50 pages filled, then 90 % of every page freed at random (the
  // buffers grown out of this size), leaving every page sparse.
  std::vector<void*> objs;
  for (size_t i = 0; i < 50 * per_page; ++i) objs.push_back(slab.Alloc(kSize));
  std::mt19937_64 rng(3);
  std::shuffle(objs.begin(), objs.end(), rng);
  const size_t keep = objs.size() / 10;
  for (size_t i = keep; i < objs.size(); ++i) slab.Free(objs[i], kSize);
  objs.resize(keep);
  REQUIRE(slab.stats().used_pages == 50);
  // Steady churn at the same population: each step frees a random object
  // and allocates another. Filling the fullest pages first lets the
  // others empty; the class ends near the pages its objects need.
  for (int step = 0; step < 20000; ++step) {
    const size_t i = rng() % objs.size();
    slab.Free(objs[i], kSize);
    objs[i] = slab.Alloc(kSize);
  }
  const size_t needed = (keep + per_page - 1) / per_page;
  REQUIRE(slab.stats().used_pages <= needed + 2);
  for (void* p : objs) slab.Free(p, kSize);
}

TEST_CASE("Slab sizes beyond its largest class go to malloc", "[slab]") {
  const size_t before = Slab::Global().stats().object_bytes;
  void* big = SmallAlloc(Slab::kMaxBytes + 1);
  REQUIRE(Slab::Global().stats().object_bytes == before);
  std::memset(big, 1, Slab::kMaxBytes + 1);
  SmallFree(big, Slab::kMaxBytes + 1);
  void* small = SmallAlloc(100);
  REQUIRE(Slab::Global().stats().object_bytes ==
          before + (SmallAllocUsesSlab() ? 104 : 0));
  SmallFree(small, 100);
  REQUIRE(Slab::Global().stats().object_bytes == before);
}

TEST_CASE("Series records take slab slots of their size", "[slab]") {
  if (!SmallAllocUsesSlab()) return;  // sanitizer build: malloc
  const size_t before = Slab::Global().stats().object_bytes;
  // Four labels whose symbol ids take 1, 1, 2, 3, 1, 1, 1, 2 varint bytes.
  const uint32_t ids[8] = {1, 2, 300, 70000, 5, 6, 7, 200};
  MemSeries* s = MemSeries::New(42, ids, 4);
  REQUIRE(s->SymBytes() == 12);
  REQUIRE(Slab::Global().stats().object_bytes == before + 72);  // 56 + 12
  uint32_t out[8];
  s->DecodeSyms(out);
  REQUIRE(std::equal(out, out + 8, ids));
  MemSeries::Delete(s);
  REQUIRE(Slab::Global().stats().object_bytes == before);
}

TEST_CASE("Threads allocating and freeing every size share the slab",
          "[slab][concurrency]") {
  Slab slab;
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int> bad(kThreads, 0);
  // Objects cross threads: each thread frees half of what its neighbour
  // allocated, so frees land on pages another thread is filling.
  std::vector<std::vector<Obj>> handoff(kThreads);
  std::vector<SpinLock> handoff_mu(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(100 + t);
      std::vector<Obj> mine;
      for (int step = 0; step < 40000; ++step) {
        const size_t n = 1 + rng() % 300;
        Obj o{static_cast<unsigned char*>(slab.Alloc(n)), n,
              static_cast<unsigned char>(t * 50 + step % 50)};
        Fill(o);
        if (step % 2 == 0) {
          SpinLockHolder l(&handoff_mu[(t + 1) % kThreads]);
          handoff[(t + 1) % kThreads].push_back(o);
        } else {
          mine.push_back(o);
        }
        if (mine.size() > 200) {
          for (const Obj& m : mine) {
            if (!Intact(m)) ++bad[t];
            slab.Free(m.p, m.n);
          }
          mine.clear();
          SpinLockHolder l(&handoff_mu[t]);
          for (const Obj& m : handoff[t]) {
            if (!Intact(m)) ++bad[t];
            slab.Free(m.p, m.n);
          }
          handoff[t].clear();
        }
      }
      for (const Obj& m : mine) {
        if (!Intact(m)) ++bad[t];
        slab.Free(m.p, m.n);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    for (const Obj& m : handoff[t]) {
      REQUIRE(Intact(m));
      slab.Free(m.p, m.n);
    }
  }
  for (int t = 0; t < kThreads; ++t) REQUIRE(bad[t] == 0);
  REQUIRE(slab.stats().object_bytes == 0);
}

}  // namespace
}  // namespace vigil::storage::internal
