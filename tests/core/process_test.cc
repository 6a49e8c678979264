// core/process.h: ReleaseFreeMemory gives free pages inside the heap back to
// the kernel, which glibc's own trimming (top of the heap only) does not.
#include "core/process.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tests/testutil/sanitizers.h"

namespace vigil {
namespace {

// Resident bytes of this process (/proc/self/statm).
size_t Rss() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  REQUIRE(f != nullptr);
  unsigned long size = 0, resident = 0;
  REQUIRE(std::fscanf(f, "%lu %lu", &size, &resident) == 2);
  std::fclose(f);
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

TEST_CASE("ReleaseFreeMemory returns free pages inside the heap",
          "[core][process]") {
#ifdef VIGIL_TEST_OWN_MALLOC
  SUCCEED("sanitizers bring their own allocator: nothing to measure");
#else
  // Blocks below the mmap threshold come from the heap, as in the server.
  TuneMallocForQueries();
  constexpr size_t kBlock = 1 << 20, kBlocks = 96;
  std::vector<char*> blocks;
  for (size_t i = 0; i < kBlocks; ++i) {
    char* p = static_cast<char*>(std::malloc(kBlock));
    REQUIRE(p != nullptr);
    std::memset(p, 1, kBlock);
    blocks.push_back(p);
  }
  // Free all but every eighth block: the free ones sit between live ones,
  // so no trimming at the top can give them back.
  for (size_t i = 0; i < kBlocks; ++i) {
    if (i % 8 != 7) {
      std::free(blocks[i]);
      blocks[i] = nullptr;
    }
  }
  const size_t before = Rss();
  // Below the threshold nothing is given back.
  const TrimResult kept = ReleaseFreeMemory(size_t{1} << 40);
  CHECK_FALSE(kept.trimmed);
  CHECK(kept.free_bytes >= 84 * kBlock);
  CHECK(kept.micros >= 0);
  CHECK(Rss() + 4 * kBlock >= before);
  const TrimResult trim = ReleaseFreeMemory(16 * kBlock);
  const size_t after = Rss();
  CHECK(trim.trimmed);
  CHECK(trim.free_bytes >= 84 * kBlock);
  INFO("RSS " << before << " -> " << after);
  // 84 MiB were free; at least half of that must have gone.
  REQUIRE(before > after);
  CHECK(before - after >= 42 * kBlock);
  for (char* p : blocks) std::free(p);
#endif
}

TEST_CASE(
    "AnonymousResidentBytes follows anonymous memory touched and unmapped",
    "[core][process]") {
  constexpr size_t kBytes = size_t{64} << 20;
  const size_t before = AnonymousResidentBytes();
  REQUIRE(before > 0);
  void* p = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  // Mapped but untouched: not resident.
  CHECK(AnonymousResidentBytes() < before + kBytes / 4);
  std::memset(p, 1, kBytes);
  const size_t touched = AnonymousResidentBytes();
  INFO("anonymous resident " << before << " -> " << touched);
  CHECK(touched >= before + kBytes - kBytes / 8);
  munmap(p, kBytes);
  CHECK(AnonymousResidentBytes() + kBytes - kBytes / 8 <= touched);
}

}  // namespace
}  // namespace vigil
