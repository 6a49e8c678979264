// Shared helpers of the scrape tests: a DB on a temp dir behind an
// Appendable that counts label lookups, and a reader of what it stored.
#ifndef VIGIL_TESTS_SERVER_SCRAPE_TESTUTIL_H_
#define VIGIL_TESTS_SERVER_SCRAPE_TESTUTIL_H_

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/matcher.h"
#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::scrape::testing {

using Samples = std::vector<std::pair<Timestamp, double>>;

// Forwards to the DB, counting appends by label set (ref 0) and by ref.
class CountingAppendable : public storage::Appendable {
 public:
  explicit CountingAppendable(storage::Appendable* base) : base_(base) {}
  std::unique_ptr<storage::Appender> NewAppender() override {
    return std::make_unique<App>(this, base_->NewAppender());
  }
  std::atomic<int> by_labels{0}, by_ref{0};

 private:
  class App : public storage::Appender {
   public:
    App(CountingAppendable* c, std::unique_ptr<storage::Appender> a)
        : c_(c), a_(std::move(a)) {}
    absl::StatusOr<storage::SeriesRef> Append(storage::SeriesRef ref,
                                              const Labels& l, Timestamp t,
                                              double v) override {
      (ref == 0 ? c_->by_labels : c_->by_ref)++;
      return a_->Append(ref, l, t, v);
    }
    absl::Status Commit() override { return a_->Commit(); }
    void Rollback() override { a_->Rollback(); }

   private:
    CountingAppendable* c_;
    std::unique_ptr<storage::Appender> a_;
  };
  storage::Appendable* base_;
};

struct TestDB {
  testutil::TempDir dir;
  std::unique_ptr<storage::DB> db;
  std::unique_ptr<CountingAppendable> app;
  TestDB() {
    auto d = storage::DB::Open({}, dir.path());
    REQUIRE(d.ok());
    db = std::move(*d);
    app = std::make_unique<CountingAppendable>(db.get());
  }
  void ResetCounts() {
    app->by_labels = 0;
    app->by_ref = 0;
  }
  // Every series matching name=`value` (or all if `name` empty), keyed by
  // the label string.
  std::map<std::string, Samples> Query(std::string_view name,
                                       std::string_view value) {
    auto q = db->NewQuerier(kMinTimestamp, kMaxTimestamp);
    REQUIRE(q.ok());
    std::vector<Matcher> ms;
    if (name.empty()) {
      ms.push_back(*Matcher::Make(MatchType::kRegexMatch, "__name__", ".+"));
    } else {
      ms.push_back(*Matcher::Make(MatchType::kEqual, name, value));
    }
    auto set = (*q)->Select(ms);
    REQUIRE(set.ok());
    std::map<std::string, Samples> out;
    while ((*set)->Next()) {
      auto it = (*set)->At().Iterator();
      Samples& s = out[(*set)->At().labels().ToString()];
      while (it->Next()) s.push_back({it->t(), it->v()});
    }
    return out;
  }
  std::map<std::string, Samples> Metric(std::string_view name) {
    return Query("__name__", name);
  }
  // The single value of `name` at `t` (NaN if absent).
  double ValueAt(std::string_view name, Timestamp t) {
    for (auto& [l, s] : Metric(name)) {
      for (auto& [ts, v] : s) {
        if (ts == t) return v;
      }
    }
    return std::nan("");
  }
};

inline std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::filesystem::path(VIGIL_SHARED_DIR) / "fixtures" /
                   "metrics" / name);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace vigil::scrape::testing

#endif  // VIGIL_TESTS_SERVER_SCRAPE_TESTUTIL_H_
