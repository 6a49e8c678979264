// The in-memory postings index (storage/internal/postings.h): ids in any
// order come back sorted, selections follow Prometheus's matcher rules, and
// long lists grow by an eighth, so a label every series has costs little
// more than 4 bytes a series.
#include "storage/internal/postings.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "storage/internal/symbols.h"
#include "tests/storage/db_testutil.h"

namespace vigil::storage::internal {
namespace {

using testutil::Eq;

TEST_CASE("postings: long lists keep little spare capacity",
          "[storage][postings]") {
  SymbolTable syms;
  PostingsIndex index;
  const uint32_t job = syms.Intern("job"), node = syms.Intern("node");
  const uint32_t i_name = syms.Intern("i");
  std::vector<uint32_t> values;
  for (int v = 0; v < 4; ++v) values.push_back(syms.Intern(std::to_string(v)));
  constexpr uint32_t kIds = 200000;
  for (uint32_t id = 1; id <= kIds; ++id) {
    const uint32_t pairs[4] = {i_name, values[id % 4], job, node};
    index.Add(id, pairs, 2);
  }
  // Lists: job=node (200k), i=0..3 (50k each), all (200k): 600k ids.
  const size_t ids_bytes = 3 * size_t{kIds} * 4;
  CHECK(index.MemoryBytes() <= ids_bytes * 9 / 8 + 4096);
  CHECK(index.MemoryBytes() >= ids_bytes);

  Postings got = index.Select(syms, {Eq("job", "node"), Eq("i", "2")});
  REQUIRE(got.size() == kIds / 4);
  CHECK(std::is_sorted(got.begin(), got.end()));
  CHECK(got.front() == 2);
  CHECK(got.back() == kIds - 2);
}

TEST_CASE("postings: ids out of order are kept sorted, removal forgets values",
          "[storage][postings]") {
  SymbolTable syms;
  PostingsIndex index;
  const uint32_t job = syms.Intern("job"), a = syms.Intern("a"),
                 b = syms.Intern("b");
  for (uint32_t id : {5u, 3u, 9u, 8u, 1u, 7u, 3u, 4u}) {
    const uint32_t pairs[2] = {job, id % 2 ? a : b};
    index.Add(id, pairs, 1);
  }
  const Matcher m = Eq("job", "a");
  CHECK(index.Select(syms, {m}) == Postings{1, 3, 5, 7, 9});
  CHECK(index.All() == Postings{1, 3, 4, 5, 7, 8, 9});
  for (uint32_t id : {1u, 3u, 5u, 7u, 9u}) {
    const uint32_t pairs[2] = {job, a};
    index.Remove(id, pairs, 1);
  }
  CHECK(index.Select(syms, {m}).empty());
  CHECK(index.Values(job) == std::vector<uint32_t>{b});
  CHECK(index.Names() == std::vector<uint32_t>{job});
  CHECK(index.Select(syms, {Eq("job", "b")}) == Postings{4, 8});
}

}  // namespace
}  // namespace vigil::storage::internal
