#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "server/scrape/series_cache.h"

namespace vigil::scrape {
namespace {

using Key = SeriesCache::Key;

Key K(int i) {
  return SeriesCache::KeyOf("m{i=\"" + std::to_string(i) + "\"}");
}

// One scrape of series [from, to) in order (or reversed): every text is
// looked up, misses are added with ref = i + 1; returns the misses.
int CacheScrape(SeriesCache* c, uint32_t iter, int from, int to,
                bool reverse = false) {
  c->BeginScrape();
  int misses = 0;
  for (int n = 0; n < to - from; ++n) {
    const int i = reverse ? to - 1 - n : from + n;
    const uint32_t pos = c->Find(K(i));
    if (pos == SeriesCache::kNotFound) {
      ++misses;
      c->Add({.key = K(i),
              .ref = static_cast<SeriesCache::Ref>(i + 1),
              .last_iter = static_cast<SeriesCache::Iter>(iter)});
    } else {
      REQUIRE(c->at(pos).ref == static_cast<SeriesCache::Ref>(i + 1));
      c->at(pos).last_iter = static_cast<SeriesCache::Iter>(iter);
    }
  }
  return misses;
}

TEST_CASE("series cache: a page is found again in any order", "[scrape]") {
  SeriesCache c;
  CHECK(CacheScrape(&c, 1, 0, 3000) == 3000);
  c.EndScrape();
  CHECK(c.size() == 3000);
  CHECK(CacheScrape(&c, 2, 0, 3000) == 0);
  CHECK(CacheScrape(&c, 3, 0, 3000, /*reverse=*/true) == 0);
  // A page that grew in the middle of the order.
  CHECK(CacheScrape(&c, 4, 1500, 4500) == 1500);
  CHECK(c.size() == 4500);
  CHECK(CacheScrape(&c, 5, 0, 4500) == 0);
  CHECK(c.Find(K(4500)) == SeriesCache::kNotFound);
}

TEST_CASE("series cache: texts one byte apart are different keys", "[scrape]") {
  CHECK_FALSE(SeriesCache::KeyOf("a{b=\"c\"}") ==
              SeriesCache::KeyOf("a{b=\"d\"}"));
  CHECK_FALSE(SeriesCache::KeyOf("") ==
              SeriesCache::KeyOf(std::string(1, '\0')));
  CHECK_FALSE(SeriesCache::KeyOf(std::string(16, 'x')) ==
              SeriesCache::KeyOf(std::string(17, 'x')));
  CHECK(SeriesCache::KeyOf("up") == SeriesCache::KeyOf(std::string("up")));
}

TEST_CASE("series cache: RollBack forgets only what this scrape added",
          "[scrape]") {
  SeriesCache c;
  CacheScrape(&c, 1, 0, 100);
  c.EndScrape();
  CacheScrape(&c, 2, 50, 300);  // adds 100..299
  c.RollBack();
  CHECK(c.size() == 100);
  for (int i = 0; i < 100; ++i) CHECK(c.Find(K(i)) != SeriesCache::kNotFound);
  for (int i = 100; i < 300; ++i) CHECK(c.Find(K(i)) == SeriesCache::kNotFound);
  // A rollback with nothing added keeps everything.
  CacheScrape(&c, 3, 0, 100);
  c.RollBack();
  CHECK(c.size() == 100);
}

TEST_CASE("series cache: KeepOnly drops unseen entries and keeps the order",
          "[scrape]") {
  SeriesCache c;
  CacheScrape(&c, 1, 0, 1000);
  c.BeginScrape();
  for (int i = 0; i < 1000; i += 2) c.at(c.Find(K(i))).last_iter = 2;
  c.KeepOnly(2);
  REQUIRE(c.size() == 500);
  for (int i = 0; i < 1000; ++i) {
    const uint32_t pos = c.Find(K(i));
    if (i % 2 == 0) {
      REQUIRE(pos == static_cast<uint32_t>(i / 2));
      CHECK(c.at(pos).ref == static_cast<SeriesCache::Ref>(i + 1));
    } else {
      CHECK(pos == SeriesCache::kNotFound);
    }
  }
}

TEST_CASE("series cache: dropped entries are found but not counted as series",
          "[scrape]") {
  SeriesCache c;
  c.BeginScrape();
  c.Add({.key = K(1), .ref = 7, .last_iter = 1});
  c.Add({.key = K(2), .last_iter = 1, .formats = 2, .dropped = true});
  CHECK(c.size() == 2);
  CHECK(c.NumSeries() == 1);
  const uint32_t pos = c.Find(K(2));
  REQUIRE(pos != SeriesCache::kNotFound);
  CHECK(c.at(pos).dropped);
  CHECK(c.at(pos).formats == 2);
  c.Clear();
  CHECK(c.size() == 0);
  CHECK(c.Find(K(1)) == SeriesCache::kNotFound);
}

TEST_CASE("series cache: a steady page costs about 20 bytes a series",
          "[scrape]") {
  SeriesCache c;
  CacheScrape(&c, 1, 0, 1000);
  c.EndScrape();
  // 16-byte entries (the vector's doubling leaves 1,024) and 16-bit slots
  // at most 3/4 full.
  CHECK(c.MemoryBytes() <= 1000 * 20);
  // A page that shrank gives its memory back.
  CacheScrape(&c, 2, 0, 100);
  c.KeepOnly(2);
  c.EndScrape();
  CHECK(c.size() == 100);
  CHECK(c.MemoryBytes() <= 100 * 20 + 16 * 20);
  CHECK(CacheScrape(&c, 3, 0, 100) == 0);
}

TEST_CASE("series cache: keys one bit apart share a home and both stay",
          "[scrape]") {
  SeriesCache c;
  c.BeginScrape();
  // The index places a key by its high bits: these two start their probe
  // at the same slot, so the second is found by probing past the first.
  const Key k{0x1234}, other{0x1235};
  c.Add({.key = k, .ref = 1, .last_iter = 1});
  CHECK(c.Find(other) == SeriesCache::kNotFound);
  c.Add({.key = other, .ref = 2, .last_iter = 1});
  c.BeginScrape();  // the cursor back at the top: lookups use the index
  CHECK(c.at(c.Find(other)).ref == 2);
  CHECK(c.at(c.Find(k)).ref == 1);
  static_assert(sizeof(SeriesCache::Entry) == 16);
}

TEST_CASE("series cache: past 65,535 entries the index widens, and narrows",
          "[scrape]") {
  SeriesCache c;
  CHECK(CacheScrape(&c, 1, 0, 70000) == 70000);
  c.EndScrape();
  // Any order: through the index, whose positions no longer fit 16 bits.
  CHECK(CacheScrape(&c, 2, 0, 70000, /*reverse=*/true) == 0);
  CHECK(c.MemoryBytes() >= 70000 * (16 + 4));
  // Down to 1,000 (every 70th seen): 16-bit slots again.
  c.BeginScrape();
  for (int i = 0; i < 70000; i += 70) c.at(c.Find(K(i))).last_iter = 3;
  c.KeepOnly(3);
  c.EndScrape();
  REQUIRE(c.size() == 1000);
  CHECK(c.MemoryBytes() <= 1000 * 20);
  c.BeginScrape();
  for (int i = 69930; i >= 0; i -= 70) {
    const uint32_t pos = c.Find(K(i));
    REQUIRE(pos == static_cast<uint32_t>(i / 70));
    CHECK(c.at(pos).ref == static_cast<SeriesCache::Ref>(i + 1));
  }
}

}  // namespace
}  // namespace vigil::scrape
