// server/heap_trimmer.h: when the free heap is counted (and trimmed). The
// count is seen through vigil_malloc_free_bytes, which only a count sets.
#include "server/heap_trimmer.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/process.h"
#include "tests/testutil/sanitizers.h"

namespace vigil::server {
namespace {

// A metric's line as /metrics shows it (vigil_malloc_free_bytes by default).
std::string FreeLine(const metrics::Registry& reg,
                     const std::string& metric = "vigil_malloc_free_bytes") {
  std::string text;
  reg.WriteText(&text);
  const std::string name = "\n" + metric + " ";
  const size_t at = text.find(name);
  REQUIRE(at != std::string::npos);
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

// Frees every other of `n` blocks of `size` bytes: free heap that stays
// between live blocks (the live ones are returned, to be freed later).
std::vector<void*> Fragment(size_t n, size_t size) {
  std::vector<void*> live;
  std::vector<void*> all;
  for (size_t i = 0; i < n; ++i) {
    void* p = std::malloc(size);
    if (p == nullptr) FAIL("malloc failed");
    std::memset(p, 1, size);
    all.push_back(p);
  }
  for (size_t i = 0; i < n; ++i) {
    if (i % 2 == 0) {
      std::free(all[i]);
    } else {
      live.push_back(all[i]);
    }
  }
  return live;
}

TEST_CASE(
    "HeapTrimmer counts the free heap only when it could be over its "
    "limit, and once a minute",
    "[server][heap_trimmer]") {
#ifdef VIGIL_TEST_OWN_MALLOC
  SUCCEED("sanitizers bring their own allocator: nothing to count");
#else
  TuneMallocForQueries();  // small blocks stay in the heap, as in the server
  const int64_t t0 = 1'000'000;
  SECTION("above the process's anonymous memory: skipped between minutes") {
    metrics::Registry reg;
    HeapTrimmer trimmer(&reg, size_t{1} << 40);
    trimmer.MaybeRun(t0);  // the first check always counts
    const std::string first = FreeLine(reg);
    std::vector<void*> live = Fragment(512, 64 << 10);  // 16 MiB more free
    trimmer.MaybeRun(t0 + HeapTrimmer::kEveryMs);
    CHECK(FreeLine(reg) == first);  // not counted
    CHECK(trimmer.next() == t0 + 2 * HeapTrimmer::kEveryMs);
    trimmer.MaybeRun(t0 + HeapTrimmer::kCountEveryMs);
    CHECK(FreeLine(reg) != first);  // the minute's count
    for (void* p : live) std::free(p);
  }
  SECTION("below the process's anonymous memory: every check counts") {
    metrics::Registry reg;
    HeapTrimmer trimmer(&reg, 1);
    trimmer.MaybeRun(t0);
    const std::string first = FreeLine(reg);
    std::vector<void*> live = Fragment(512, 64 << 10);
    trimmer.MaybeRun(t0 + HeapTrimmer::kEveryMs);
    CHECK(FreeLine(reg) != first);
    for (void* p : live) std::free(p);
  }
  SECTION("trims once the free heap passes its share of anonymous memory") {
    // 32 MiB of free heap between live blocks is more than a sixteenth of
    // what this process has resident (the live half included), and more
    // than the 4 MiB floor; after the trim the free pages are gone.
    metrics::Registry reg;
    HeapTrimmer trimmer(&reg);
    trimmer.MaybeRun(t0);
    const std::string trims = FreeLine(reg, "vigil_malloc_trims_total");
    std::vector<void*> live = Fragment(1024, 64 << 10);
    const size_t before = AnonymousResidentBytes();
    trimmer.MaybeRun(t0 + HeapTrimmer::kEveryMs);
    CHECK(FreeLine(reg, "vigil_malloc_trims_total") != trims);
    CHECK(AnonymousResidentBytes() + (16 << 20) < before);
    for (void* p : live) std::free(p);
  }
#endif
}

}  // namespace
}  // namespace vigil::server
