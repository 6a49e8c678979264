// The in-memory postings index (storage/internal/postings.h): ids in any
// order come back sorted, selections follow Prometheus's matcher rules, and
// lists are compressed (posting_list.h), so a label every series has costs
// a few bytes in all and one on every fourth series a byte a series.
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

TEST_CASE("postings: long lists cost a byte an id or less",
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
  // Lists: job=node (200k, one run), i=0..3 (50k each, a stride of 4: a
  // byte an id), all (200k, one run): 200 KB, against 2.4 MB as ids.
  CHECK(index.MemoryBytes() <= size_t{kIds} * 9 / 8 + 4096);
  CHECK(index.MemoryBytes() >= size_t{kIds});

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

TEST_CASE("postings: many ids out of order fold in and stay selectable",
          "[storage][postings]") {
  SymbolTable syms;
  PostingsIndex index;
  const uint32_t job = syms.Intern("job"), a = syms.Intern("a"),
                 b = syms.Intern("b");
  // Series 1..3000 first, then the even ones of 3001..6000 (job a), then
  // the odd ones below them (job b), as series revived with their old refs
  // arrive: 1,500 ids below their lists' largest, several folds.
  auto add = [&](uint32_t id) {
    const uint32_t pairs[2] = {job, id % 2 ? b : a};
    index.Add(id, pairs, 1);
  };
  for (uint32_t id = 1; id <= 3000; ++id) add(id);
  for (uint32_t id = 3002; id <= 6000; id += 2) add(id);
  for (uint32_t id = 6000 - 1; id > 3000; id -= 2) add(id);
  add(3001);  // again: no duplicate
  Postings all = index.All();
  REQUIRE(all.size() == 6000);
  for (uint32_t i = 0; i < 6000; ++i) REQUIRE(all[i] == i + 1);
  Postings odd = index.Select(syms, {Eq("job", "b")});
  REQUIRE(odd.size() == 3000);
  CHECK(std::is_sorted(odd.begin(), odd.end()));
  CHECK(odd.back() == 5999);
  // A regex over both values: the two lists merged in order.
  CHECK(index.Select(syms, {testutil::Re("job", "a|b")}) == all);
  // Removing ids still waiting in the side list and ids folded in.
  for (uint32_t id : {5999u, 3001u, 1u, 2u}) {
    const uint32_t pairs[2] = {job, id % 2 ? b : a};
    index.Remove(id, pairs, 1);
  }
  odd = index.Select(syms, {Eq("job", "b")});
  CHECK(odd.size() == 2997);
  CHECK(odd.front() == 3);
  CHECK(odd.back() == 5997);
  CHECK_FALSE(std::binary_search(odd.begin(), odd.end(), 3001u));
  CHECK(index.All().size() == 5996);
}

}  // namespace
}  // namespace vigil::storage::internal
