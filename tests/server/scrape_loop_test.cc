// ScrapeLoop::Process over a real DB: report series, honor_labels,
// staleness, limits, invalid lines and the series cache.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "server/scrape/loop.h"
#include "tests/server/scrape_testutil.h"

namespace {

using vigil::IsStaleNaN;
using vigil::Labels;
using vigil::scrape::ScrapeLoop;
using vigil::scrape::ScrapePoolOptions;
using vigil::scrape::ScrapeReport;
using vigil::scrape::testing::ReadFixture;
using vigil::scrape::testing::TestDB;

constexpr vigil::Timestamp kT0 = 1'700'000'000'000;
constexpr vigil::Timestamp kStep = 15'000;

const Labels kTarget{{"job", "node"}, {"instance", "10.0.0.1:9100"}};

ScrapePoolOptions Opts() {
  ScrapePoolOptions o;
  o.job_name = "node";
  return o;
}

ScrapeReport Scrape(ScrapeLoop& l, std::string_view body, vigil::Timestamp t,
                    std::string_view ct = "text/plain; version=0.0.4") {
  return l.Process(body, ct, t, 42, "");
}

TEST_CASE("A scrape stores samples with target labels and the report series",
          "[scrape]") {
  TestDB db;
  ScrapeLoop loop(db.app.get(), kTarget, "http://10.0.0.1:9100/metrics", Opts(),
                  nullptr);
  auto rep = Scrape(loop,
                    "# HELP a_total Things.\n# TYPE a_total counter\n"
                    "a_total{x=\"1\"} 3\na_total{x=\"2\"} 4\nb 5\n",
                    kT0);
  REQUIRE(rep.up);
  CHECK(rep.samples_scraped == 3);
  auto a = db.Metric("a_total");
  REQUIRE(a.count(
      R"({__name__="a_total", instance="10.0.0.1:9100", job="node", x="1"})"));
  CHECK(a.begin()->second == vigil::scrape::testing::Samples{{kT0, 3}});
  CHECK(db.ValueAt("up", kT0) == 1);
  CHECK(db.ValueAt("scrape_duration_seconds", kT0) == 0.042);
  CHECK(db.ValueAt("scrape_samples_scraped", kT0) == 3);
  CHECK(db.ValueAt("scrape_samples_post_metric_relabeling", kT0) == 3);
  CHECK(db.ValueAt("scrape_series_added", kT0) == 3);
  CHECK(db.Metric("scrape_samples_invalid").empty());  // tolerant mode only
  auto up = db.Metric("up");
  REQUIRE(up.size() == 1);
  CHECK(up.begin()->first ==
        R"({__name__="up", instance="10.0.0.1:9100", job="node"})");
  auto md = loop.Metadata();
  REQUIRE(md.size() == 1);
  CHECK(md[0].metric == "a_total");
  CHECK(md[0].type == "counter");
  CHECK(md[0].help == "Things.");
}

TEST_CASE("The second scrape of a page appends by ref only", "[scrape]") {
  TestDB db;
  ScrapeLoop loop(db.app.get(), kTarget, "u", Opts(), nullptr);
  std::string page = "a{x=\"1\"} 1\na{x=\"2\"} 2\nb 3\n";
  REQUIRE(Scrape(loop, page, kT0).up);
  CHECK(db.app->by_labels == 3 + 5);  // samples + report series
  db.ResetCounts();
  auto rep = Scrape(loop, page, kT0 + kStep);
  REQUIRE(rep.up);
  CHECK(db.app->by_labels == 0);
  CHECK(db.app->by_ref == 3 + 5);
  CHECK(rep.series_added == 0);
  CHECK(db.ValueAt("scrape_series_added", kT0 + kStep) == 0);
  CHECK(loop.CacheSize() == 3);
}

TEST_CASE("Exposed labels that clash with target labels become exported_",
          "[scrape]") {
  TestDB db;
  ScrapeLoop loop(db.app.get(), kTarget, "u", Opts(), nullptr);
  REQUIRE(Scrape(loop,
                 "m{job=\"pushed\",exported_job=\"x\",instance=\"i\"} 1\n", kT0)
              .up);
  auto m = db.Metric("m");
  REQUIRE(m.size() == 1);
  CHECK(
      m.begin()->first ==
      R"({__name__="m", exported_exported_job="pushed", exported_instance="i", exported_job="x", instance="10.0.0.1:9100", job="node"})");

  TestDB db2;
  auto o = Opts();
  o.honor_labels = true;
  ScrapeLoop honor(db2.app.get(), kTarget, "u", o, nullptr);
  REQUIRE(Scrape(honor, "m{job=\"pushed\"} 1\n", kT0).up);
  auto h = db2.Metric("m");
  REQUIRE(h.size() == 1);
  CHECK(h.begin()->first ==
        R"({__name__="m", instance="10.0.0.1:9100", job="pushed"})");
}

TEST_CASE("honor_timestamps decides whose timestamp a sample gets",
          "[scrape]") {
  TestDB db;
  ScrapeLoop loop(db.app.get(), kTarget, "u", Opts(), nullptr);
  REQUIRE(Scrape(loop, "m 1 1600000000000\n", kT0).up);
  CHECK(db.Metric("m").begin()->second[0].first == 1600000000000);
  TestDB db2;
  auto o = Opts();
  o.honor_timestamps = false;
  ScrapeLoop loop2(db2.app.get(), kTarget, "u", o, nullptr);
  REQUIRE(Scrape(loop2, "m 1 1600000000000\n", kT0).up);
  CHECK(db2.Metric("m").begin()->second[0].first == kT0);
}

TEST_CASE("Series that leave the page get one staleness marker", "[scrape]") {
  TestDB db;
  ScrapeLoop loop(db.app.get(), kTarget, "u", Opts(), nullptr);
  REQUIRE(Scrape(loop, "a 1\nb 2\nc 3 1600000000000\n", kT0).up);
  REQUIRE(Scrape(loop, "a 1\n", kT0 + kStep).up);
  REQUIRE(Scrape(loop, "a 1\n", kT0 + 2 * kStep).up);
  auto b = db.Metric("b").begin()->second;
  REQUIRE(b.size() == 2);
  CHECK(b[1].first == kT0 + kStep);
  CHECK(IsStaleNaN(b[1].second));
  // Explicit timestamps are not tracked (track_timestamps_staleness off).
  CHECK(db.Metric("c").begin()->second.size() == 1);
}

TEST_CASE("A failed scrape marks everything stale and reports up 0",
          "[scrape]") {
  TestDB db;
  ScrapeLoop loop(db.app.get(), kTarget, "u", Opts(), nullptr);
  REQUIRE(Scrape(loop, "a 1\nb 2\n", kT0).up);
  auto rep = loop.Process("", "", kT0 + kStep, 10,
                          "server returned HTTP status 500 Internal Server "
                          "Error");
  CHECK_FALSE(rep.up);
  CHECK(db.ValueAt("up", kT0 + kStep) == 0);
  CHECK(db.ValueAt("scrape_samples_scraped", kT0 + kStep) == 0);
  for (const char* name : {"a", "b"}) {
    auto s = db.Metric(name).begin()->second;
    REQUIRE(s.size() == 2);
    CHECK(IsStaleNaN(s[1].second));
  }
  // Recovery: the series come back, no second marker on the next failure
  // of a page that never had them.
  REQUIRE(Scrape(loop, "a 5\n", kT0 + 2 * kStep).up);
  CHECK(db.Metric("a").begin()->second.back().second == 5);
}

TEST_CASE("One malformed line fails the whole scrape by default", "[scrape]") {
  TestDB db;
  ScrapeLoop loop(db.app.get(), kTarget, "u", Opts(), nullptr);
  REQUIRE(Scrape(loop, "a 1\n", kT0).up);
  auto rep = Scrape(loop, "a 2\nbad ERROR\nc 3\n", kT0 + kStep);
  CHECK_FALSE(rep.up);
  CHECK(rep.error.rfind("2:", 0) == 0);  // "2:5: ..." names the line
  auto a = db.Metric("a").begin()->second;
  REQUIRE(a.size() == 2);
  CHECK(IsStaleNaN(a[1].second));  // the valid "a 2" was not kept
  CHECK(db.Metric("c").empty());
  CHECK(db.ValueAt("up", kT0 + kStep) == 0);
}

TEST_CASE("tolerate_invalid_lines keeps the valid samples and counts the rest",
          "[scrape]") {
  TestDB db;
  auto o = Opts();
  o.tolerate_invalid_lines = true;
  ScrapeLoop loop(db.app.get(), kTarget, "u", o, nullptr);
  auto rep = Scrape(loop, "a 2\nbad ERROR\nc 3\nd{ 1\ne 4\n", kT0);
  CHECK(rep.up);
  CHECK(rep.samples_scraped == 3);
  CHECK(rep.samples_invalid == 2);
  CHECK(rep.invalid_error.rfind("2:", 0) == 0);
  CHECK(db.ValueAt("e", kT0) == 4);
  CHECK(db.ValueAt("scrape_samples_invalid", kT0) == 2);
  CHECK(db.ValueAt("up", kT0) == 1);
  // The same page in OpenMetrics, which needs its "# EOF".
  auto rep2 = Scrape(loop, "a 2\nbad ERROR\ne 4\n# EOF\n", kT0 + kStep,
                     "application/openmetrics-text; version=1.0.0");
  CHECK(rep2.up);
  CHECK(rep2.samples_invalid == 1);
  CHECK(db.ValueAt("e", kT0 + kStep) == 4);
}

TEST_CASE("sample_limit fails the scrape and appends nothing", "[scrape]") {
  TestDB db;
  auto o = Opts();
  o.sample_limit = 2;
  ScrapeLoop loop(db.app.get(), kTarget, "u", o, nullptr);
  auto ok = Scrape(loop, "a 1\nb 2\n", kT0);
  REQUIRE(ok.up);
  CHECK_FALSE(ok.sample_limit_exceeded);
  auto rep = Scrape(loop, "a 1\nb 2\nc 3\n", kT0 + kStep);
  CHECK_FALSE(rep.up);
  CHECK(rep.error == "sample limit exceeded");
  CHECK(rep.sample_limit_exceeded);
  CHECK(db.Metric("c").empty());
  CHECK(db.ValueAt("scrape_samples_scraped", kT0 + kStep) == 3);
  CHECK(db.ValueAt("scrape_samples_post_metric_relabeling", kT0 + kStep) == 3);
  CHECK(IsStaleNaN(db.Metric("a").begin()->second.back().second));
}

TEST_CASE("Label limits fail the scrape with Prometheus's texts", "[scrape]") {
  TestDB db;
  auto o = Opts();
  o.label_limit = 4;
  ScrapeLoop loop(db.app.get(), kTarget, "u", o, nullptr);
  auto rep = Scrape(loop, "m{a=\"1\",b=\"2\"} 1\n", kT0);
  CHECK_FALSE(rep.up);
  CHECK(rep.error ==
        "label_limit exceeded (metric: m, number of labels: 5, limit: 4)");
  o = Opts();
  o.label_value_length_limit = 3;
  ScrapeLoop loop2(db.app.get(), kTarget, "u2", o, nullptr);
  auto rep2 = Scrape(loop2, "m{a=\"1\"} 1\n", kT0);
  CHECK_FALSE(rep2.up);
  CHECK(rep2.error.rfind("label_value_length_limit exceeded (metric: m, "
                         "label name: instance",
                         0) == 0);
}

TEST_CASE("metric_relabel_configs drop and rewrite series", "[scrape]") {
  TestDB db;
  auto o = Opts();
  vigil::RelabelConfig drop;
  drop.source_labels = {"__name__"};
  drop.regex = *vigil::RelabelRegex::Compile(".*_created");
  drop.action = vigil::RelabelAction::kDrop;
  o.metric_relabel_configs = {drop};
  ScrapeLoop loop(db.app.get(), kTarget, "u", o, nullptr);
  auto rep = Scrape(loop, "a_total 1\na_created 1.7e9\n", kT0);
  REQUIRE(rep.up);
  CHECK(rep.samples_scraped == 2);
  CHECK(rep.samples_post_relabel == 1);
  CHECK(db.Metric("a_created").empty());
  db.ResetCounts();
  REQUIRE(Scrape(loop, "a_total 2\na_created 1.7e9\n", kT0 + kStep).up);
  CHECK(db.app->by_labels == 0);  // the dropped series is remembered
}

TEST_CASE("Stop(stale) marks every series and the report series", "[scrape]") {
  TestDB db;
  ScrapeLoop loop(db.app.get(), kTarget, "u", Opts(), nullptr);
  REQUIRE(Scrape(loop, "a 1\n", kT0).up);
  loop.Stop(true, kT0 + kStep);
  CHECK(IsStaleNaN(db.ValueAt("a", kT0 + kStep)));
  CHECK(IsStaleNaN(db.ValueAt("up", kT0 + kStep)));
  CHECK(IsStaleNaN(db.ValueAt("scrape_series_added", kT0 + kStep)));
}

TEST_CASE("Real exporter pages scrape cleanly, twice", "[scrape][shared]") {
  for (const char* f :
       {"vllm-v1.txt", "node-exporter-e2e.txt",
        "dcgm-exporter-h100x8-sampled-aicr.txt", "sglang.txt", "vllm-v0.txt"}) {
    INFO(f);
    TestDB db;
    ScrapeLoop loop(db.app.get(), kTarget, "u", Opts(), nullptr);
    std::string page = ReadFixture(f);
    auto rep = Scrape(loop, page, kT0);
    INFO(rep.error);
    REQUIRE(rep.up);
    CHECK(rep.samples_scraped > 20);
    CHECK(rep.series_added == rep.samples_scraped);
    // The sampled dcgm page has no HELP/TYPE at all (CATALOG.md).
    CHECK(loop.Metadata().empty() == (std::string(f).find("dcgm") == 0));
    db.ResetCounts();
    REQUIRE(Scrape(loop, page, kT0 + kStep).up);
    CHECK(db.app->by_labels == 0);
  }
}

TEST_CASE(
    "A dcgm MIG page with ERROR values: down by default, kept when "
    "tolerant",
    "[scrape][shared]") {
  std::string page = ReadFixture("dcgm-exporter-h100x8-sampled-aicr.txt");
  page +=
      "DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION{gpu=\"0\"} ERROR - FAILED TO "
      "CONVERT TO STRING\n";
  TestDB db;
  ScrapeLoop strict(db.app.get(), kTarget, "u", Opts(), nullptr);
  auto rep = Scrape(strict, page, kT0);
  CHECK_FALSE(rep.up);
  CHECK(rep.error.find("ERROR") != std::string::npos);
  auto o = Opts();
  o.tolerate_invalid_lines = true;
  TestDB db2;
  ScrapeLoop tolerant(db2.app.get(), kTarget, "u", o, nullptr);
  auto rep2 = Scrape(tolerant, page, kT0);
  CHECK(rep2.up);
  CHECK(rep2.samples_invalid == 1);
  CHECK(rep2.samples_scraped > 20);
}

// Forwards to `base`; with `forget` set, an append by ref alone gets
// NotFound, as from a storage that deleted the series.
class ForgetfulAppendable : public vigil::storage::Appendable {
 public:
  explicit ForgetfulAppendable(vigil::storage::Appendable* base)
      : base_(base) {}
  std::unique_ptr<vigil::storage::Appender> NewAppender() override {
    return std::make_unique<App>(this, base_->NewAppender());
  }
  bool forget = false;
  int refused = 0;

 private:
  class App : public vigil::storage::Appender {
   public:
    App(ForgetfulAppendable* f, std::unique_ptr<vigil::storage::Appender> a)
        : f_(f), a_(std::move(a)) {}
    absl::StatusOr<vigil::storage::SeriesRef> Append(
        vigil::storage::SeriesRef ref, const Labels& l, vigil::Timestamp t,
        double v) override {
      if (f_->forget && ref != 0 && l.empty()) {
        ++f_->refused;
        return absl::NotFoundError("unknown series ref");
      }
      return a_->Append(ref, l, t, v);
    }
    absl::Status Commit() override { return a_->Commit(); }
    void Rollback() override { a_->Rollback(); }

   private:
    ForgetfulAppendable* f_;
    std::unique_ptr<vigil::storage::Appender> a_;
  };
  vigil::storage::Appendable* base_;
};

TEST_CASE("A cached series the storage forgot is found by its labels again",
          "[scrape]") {
  TestDB db;
  ForgetfulAppendable app(db.app.get());
  ScrapeLoop loop(&app, kTarget, "u", Opts(), nullptr);
  const std::string page = "a{x=\"1\",y=\"\\\"q\"} 1\nb 2\n";
  REQUIRE(Scrape(loop, page, kT0).up);
  app.forget = true;
  db.ResetCounts();
  // The parser skips the labels of the cached text; the loop parses them
  // after all when the storage asks for them.
  auto rep = Scrape(loop, page, kT0 + kStep);
  REQUIRE(rep.up);
  CHECK(app.refused == 2);
  CHECK(db.app->by_labels == 2);
  auto a = db.Metric("a");
  REQUIRE(a.size() == 1);
  CHECK(a.begin()->first ==
        R"({__name__="a", instance="10.0.0.1:9100", job="node", x="1", )"
        R"(y="\"q"})");
  CHECK(a.begin()->second.size() == 2);
}

TEST_CASE("A cached series with a bad value fails the scrape as uncached",
          "[scrape]") {
  const std::string bad = "a{x=\"1\"} 1\na{x=\"2\"} zz\n";
  TestDB fresh_db;
  ScrapeLoop fresh(fresh_db.app.get(), kTarget, "u", Opts(), nullptr);
  auto want = Scrape(fresh, bad, kT0);
  REQUIRE_FALSE(want.up);
  TestDB db;
  ScrapeLoop loop(db.app.get(), kTarget, "u", Opts(), nullptr);
  REQUIRE(Scrape(loop, "a{x=\"1\"} 1\na{x=\"2\"} 1\n", kT0).up);
  auto got = Scrape(loop, bad, kT0 + kStep);
  CHECK_FALSE(got.up);
  CHECK(got.error == want.error);
}

TEST_CASE("A series text trusted in one format is checked again in the other",
          "[scrape]") {
  // Blanks inside the braces: fine in text 0.0.4, an error in OpenMetrics.
  const std::string text = "a{x=\"1\" } 1\n";
  const std::string om = "a{x=\"1\" } 2\n# EOF\n";
  const std::string_view kOM = "application/openmetrics-text; version=1.0.0";
  TestDB fresh_db;
  ScrapeLoop fresh(fresh_db.app.get(), kTarget, "u", Opts(), nullptr);
  auto want = Scrape(fresh, om, kT0, kOM);
  REQUIRE_FALSE(want.up);
  TestDB db;
  ScrapeLoop loop(db.app.get(), kTarget, "u", Opts(), nullptr);
  REQUIRE(Scrape(loop, text, kT0).up);
  auto got = Scrape(loop, om, kT0 + kStep, kOM);
  CHECK_FALSE(got.up);
  CHECK(got.error == want.error);
  // Back in text format the cache still holds the series.
  db.ResetCounts();
  auto rep = Scrape(loop, text, kT0 + 2 * kStep);
  CHECK(rep.up);
  CHECK(rep.series_added == 0);
  CHECK(db.app->by_labels == 0);
}

TEST_CASE("A text cached from a text page is appended by ref in OpenMetrics",
          "[scrape]") {
  TestDB db;
  ScrapeLoop loop(db.app.get(), kTarget, "u", Opts(), nullptr);
  REQUIRE(Scrape(loop, "a{x=\"1\"} 1\n", kT0).up);
  db.ResetCounts();
  const std::string_view kOM = "application/openmetrics-text; version=1.0.0";
  auto rep = Scrape(loop, "a{x=\"1\"} 2\n# EOF\n", kT0 + kStep, kOM);
  REQUIRE(rep.up);
  CHECK(rep.series_added == 0);
  CHECK(db.app->by_labels == 0);
  CHECK(db.ValueAt("a", kT0 + kStep) == 2);
}

TEST_CASE("Series texts one byte apart are distinct cache entries",
          "[scrape]") {
  // The cache keys series by a hash of their text; texts of every length
  // around the hash's 8- and 16-byte blocks, differing in any one byte,
  // must not share an entry.
  std::string page;
  int lines = 0;
  for (int len = 0; len <= 40; ++len) {
    page += "m{l=\"" + std::string(len, 'a') + "\"} 1\n";
    ++lines;
    for (int pos = 0; pos < len; ++pos) {
      std::string v(len, 'a');
      v[pos] = 'b';
      page += "m{l=\"" + v + "\"} 1\n";
      ++lines;
    }
  }
  TestDB db;
  ScrapeLoop loop(db.app.get(), kTarget, "u", Opts(), nullptr);
  auto rep = Scrape(loop, page, kT0);
  REQUIRE(rep.up);
  // l="" is the bare series m.
  CHECK(rep.series_added == static_cast<uint64_t>(lines));
  CHECK(loop.CacheSize() == static_cast<size_t>(lines));
  db.ResetCounts();
  REQUIRE(Scrape(loop, page, kT0 + kStep).up);
  CHECK(db.app->by_labels == 0);
}

}  // namespace

namespace {

// An Appendable whose refs do not fit 32 bits (the DB's always do).
class WideRefAppendable : public vigil::storage::Appendable {
 public:
  std::unique_ptr<vigil::storage::Appender> NewAppender() override {
    return std::make_unique<App>();
  }

 private:
  class App : public vigil::storage::Appender {
   public:
    absl::StatusOr<vigil::storage::SeriesRef> Append(vigil::storage::SeriesRef,
                                                     const Labels&,
                                                     vigil::Timestamp,
                                                     double) override {
      return vigil::storage::SeriesRef{1} << 33;
    }
    absl::Status Commit() override { return absl::OkStatus(); }
    void Rollback() override {}
  };
};

TEST_CASE("A storage ref beyond 32 bits fails the scrape, naming it",
          "[scrape]") {
  WideRefAppendable app;
  ScrapeLoop loop(&app, kTarget, "http://10.0.0.1:9100/metrics", Opts(),
                  nullptr);
  auto rep = Scrape(loop, "a 1\n", kT0);
  CHECK_FALSE(rep.up);
  CHECK(rep.error.find("series ref 8589934592 beyond 32 bits") !=
        std::string::npos);
}

}  // namespace
