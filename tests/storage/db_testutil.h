// Helpers shared by the DB tests: open or fail, matchers, and every sample
// of a selection by label string.
#ifndef VIGIL_TESTS_STORAGE_DB_TESTUTIL_H_
#define VIGIL_TESTS_STORAGE_DB_TESTUTIL_H_

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/db.h"

namespace vigil::testutil {

using storage::DB;
using storage::Options;

using Samples = std::vector<std::pair<Timestamp, double>>;

inline std::unique_ptr<DB> MustOpen(const std::string& dir, Options o = {}) {
  auto db = DB::Open(o, dir);
  INFO(db.status().ToString());
  REQUIRE(db.ok());
  return std::move(*db);
}

inline Matcher Eq(std::string_view n, std::string_view v) {
  return *Matcher::Make(MatchType::kEqual, n, v);
}

inline Matcher Re(std::string_view n, std::string_view v) {
  return *Matcher::Make(MatchType::kRegexMatch, n, v);
}

// All series matching `ms` in [mint, maxt], by label string.
inline std::map<std::string, Samples> Query(DB* db, std::vector<Matcher> ms,
                                            Timestamp mint = kMinTimestamp,
                                            Timestamp maxt = kMaxTimestamp) {
  auto q = db->NewQuerier(mint, maxt);
  REQUIRE(q.ok());
  auto set = (*q)->Select(ms);
  INFO(set.status().ToString());
  REQUIRE(set.ok());
  std::map<std::string, Samples> out;
  while ((*set)->Next()) {
    auto it = (*set)->At().Iterator();
    Samples& s = out[(*set)->At().labels().ToString()];
    while (it->Next()) s.push_back({it->t(), it->v()});
    REQUIRE(it->err().ok());
  }
  REQUIRE((*set)->err().ok());
  return out;
}

}  // namespace vigil::testutil

#endif  // VIGIL_TESTS_STORAGE_DB_TESTUTIL_H_
