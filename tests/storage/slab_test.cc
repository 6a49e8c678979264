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

uintptr_t PageAddr(const void* p) {
  return reinterpret_cast<uintptr_t>(p) & ~(uintptr_t{Slab::kPageBytes} - 1);
}

TEST_CASE("Consolidate moves objects off sparse pages onto fuller ones",
          "[slab]") {
  Slab slab;
  constexpr size_t kSize = 64;
  const size_t per_page = (Slab::kPageBytes - 32) / kSize;
  // Four full pages, in allocation order.
  std::vector<Obj> objs;
  for (size_t i = 0; i < 4 * per_page; ++i) {
    objs.push_back({static_cast<unsigned char*>(slab.Alloc(kSize)), kSize,
                    static_cast<unsigned char>(i)});
    Fill(objs.back());
  }
  std::map<uintptr_t, std::vector<size_t>> by_page;
  for (size_t i = 0; i < objs.size(); ++i) {
    by_page[PageAddr(objs[i].p)].push_back(i);
  }
  REQUIRE(by_page.size() == 4);
  std::vector<std::vector<size_t>> pages;
  for (auto& [addr, idx] : by_page) pages.push_back(idx);
  auto free_obj = [&](size_t i) {
    slab.Free(objs[i].p, kSize);
    objs[i].p = nullptr;
  };
  // Page 0 keeps 10 objects (sparse), page 1 all but 10 (nearly full),
  // page 2 stays full, page 3 keeps a little over half.
  for (size_t k = 10; k < per_page; ++k) free_obj(pages[0][k]);
  for (size_t k = 0; k < 10; ++k) free_obj(pages[1][k]);
  for (size_t k = 0; k < per_page / 2 - 1; ++k) free_obj(pages[3][k]);
  REQUIRE(slab.stats().used_pages == 4);

  // On a full page, and on one at least half full: stays.
  const size_t on_full = pages[2][0], on_half = pages[3].back();
  REQUIRE(slab.Consolidate(objs[on_full].p, kSize) == objs[on_full].p);
  REQUIRE(slab.Consolidate(objs[on_half].p, kSize) == objs[on_half].p);
  // The sparse page's objects move to the nearly full page, intact, and
  // the sparse page goes back to the pool.
  const uintptr_t dense = PageAddr(objs[pages[1].back()].p);
  for (size_t k = 0; k < 10; ++k) {
    Obj& o = objs[pages[0][k]];
    unsigned char* moved =
        static_cast<unsigned char*>(slab.Consolidate(o.p, kSize));
    REQUIRE(moved != o.p);
    REQUIRE(PageAddr(moved) == dense);
    o.p = moved;
    REQUIRE(Intact(o));
  }
  REQUIRE(slab.stats().used_pages == 3);
  REQUIRE(slab.stats().moves == 10);
  REQUIRE(slab.stats().object_bytes ==
          (3 * per_page - per_page / 2 + 1) * kSize);
  for (const Obj& o : objs) {
    if (o.p != nullptr) REQUIRE(Intact(o));
  }
  for (size_t i = 0; i < objs.size(); ++i) {
    if (objs[i].p != nullptr) free_obj(i);
  }
}

TEST_CASE("Consolidate gathers a class drained evenly onto few pages",
          "[slab]") {
  Slab slab;
  constexpr size_t kSize = 24;
  const size_t per_page = (Slab::kPageBytes - 32) / kSize;
  // A wave: 20 pages filled, then all but every 25th object freed, so
  // every page keeps the same few (the slowest growers stay behind).
  std::vector<void*> objs;
  for (size_t i = 0; i < 20 * per_page; ++i) objs.push_back(slab.Alloc(kSize));
  std::vector<void*> kept;
  for (size_t i = 0; i < objs.size(); ++i) {
    if (i % 25 == 0) {
      kept.push_back(objs[i]);
    } else {
      slab.Free(objs[i], kSize);
    }
  }
  REQUIRE(slab.stats().used_pages == 20);
  // A page left alone with its objects and no page at least as full: the
  // last one stays where it is.
  for (int round = 0; round < 3; ++round) {
    for (void*& p : kept) p = slab.Consolidate(p, kSize);
  }
  std::map<uintptr_t, int> pages;
  for (void* p : kept) ++pages[PageAddr(p)];
  const size_t needed = (kept.size() + per_page - 1) / per_page;
  REQUIRE(pages.size() == needed);
  REQUIRE(slab.stats().used_pages == needed);
  for (void* p : kept) slab.Free(p, kSize);
}

TEST_CASE("A page with the fewest objects of its class does not take more",
          "[slab]") {
  Slab slab;
  constexpr size_t kSize = 32;
  const size_t per_page = (Slab::kPageBytes - 32) / kSize;
  std::vector<void*> first, second;
  for (size_t i = 0; i < per_page; ++i) first.push_back(slab.Alloc(kSize));
  for (int i = 0; i < 5; ++i) second.push_back(slab.Alloc(kSize));
  // The full page has no room and the sparse page is the only one with
  // room: nothing to move to.
  for (void* p : second) REQUIRE(slab.Consolidate(p, kSize) == p);
  // Free 10 from the first page (now at least as full as the second): the
  // second's objects move there.
  for (int i = 0; i < 10; ++i) slab.Free(first[i], kSize);
  first.erase(first.begin(), first.begin() + 10);
  for (void*& p : second) {
    void* moved = slab.Consolidate(p, kSize);
    REQUIRE(PageAddr(moved) == PageAddr(first.back()));
    p = moved;
  }
  REQUIRE(slab.stats().used_pages == 1);
  for (void* p : first) slab.Free(p, kSize);
  for (void* p : second) slab.Free(p, kSize);
}

TEST_CASE("Open-chunk buffers that grow slowest gather on few pages",
          "[slab]") {
  if (!SmallAllocUsesSlab()) return;  // sanitizer build: malloc
  // 2,000 series appended in step, as a scrape does: most with values
  // that take bytes per sample and leave the first size at once, every
  // 20th constant (a few bits per sample), still in the first size at the
  // end and left behind on the pages the others emptied.
  constexpr int kSeries = 2000, kSlow = 20, kSamples = 30;
  std::vector<OpenChunk> chunks(kSeries);
  std::mt19937_64 rng(11);
  std::vector<std::vector<double>> want(kSeries);
  const uint64_t moves_before = Slab::Global().stats().moves;
  for (int n = 0; n < kSamples; ++n) {
    for (int i = 0; i < kSeries; ++i) {
      const double v =
          i % kSlow == 0 ? 1.0 : static_cast<double>(rng() % 1000000) / 7;
      chunks[i].Append(1000 + 5000 * Timestamp{n}, v);
      want[i].push_back(v);
    }
  }
  std::map<uintptr_t, int> slow_pages;
  size_t slow_bytes = 0;
  for (int i = 0; i < kSeries; i += kSlow) {
    slow_pages[PageAddr(chunks[i].bytes().data())]++;
    slow_bytes += SlotBytes(chunks[i].MemoryBytes() - sizeof(OpenChunk));
  }
  INFO("slow buffers: " << kSeries / kSlow << ", " << slow_bytes << " bytes on "
                        << slow_pages.size() << " pages");
  REQUIRE(Slab::Global().stats().moves > moves_before);
  // 100 buffers of 24 bytes fit on one page; left where the wave left
  // them they would pin all six that the 2,000 first buffers filled.
  REQUIRE(slow_pages.size() <= slow_bytes / (Slab::kPageBytes - 32) + 2);
  // Every buffer, moved or not, keeps its samples.
  for (int i = 0; i < kSeries; ++i) {
    ChunkIterator it(chunks[i].bytes());
    int n = 0;
    while (it.Next()) {
      REQUIRE(it.t() == 1000 + 5000 * Timestamp{n});
      REQUIRE(it.v() == want[i][n]);
      ++n;
    }
    REQUIRE(it.err().ok());
    REQUIRE(n == kSamples);
  }
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
        // Every fourth step, one of this thread's objects may move off a
        // sparse page while the others allocate and free on its pages.
        if (step % 4 == 3 && !mine.empty()) {
          Obj& m = mine[rng() % mine.size()];
          m.p = static_cast<unsigned char*>(slab.Consolidate(m.p, m.n));
          if (!Intact(m)) ++bad[t];
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
