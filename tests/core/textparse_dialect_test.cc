// Edge cases where Prometheus's scrape parser (model/textparse), expfmt
// (`promtool check metrics`) and OpenMetrics disagree. Every scrape verdict
// here was checked against a real Prometheus 2.42 scrape (`up` and the
// target's lastError) and against the current model/textparse source; the
// expfmt verdicts against promtool 2.42.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "core/textparse/parser.h"

namespace {

using vigil::textparse::Dialect;
using vigil::textparse::Entry;
using vigil::textparse::Format;
using vigil::textparse::Parser;

struct Outcome {
  bool ok = false;
  int series = 0;
  double last_value = 0;
  std::string error;
};

Outcome RunDialect(std::string_view body, Format f, Dialect d) {
  Parser p(body, f, {.dialect = d});
  Outcome o;
  for (;;) {
    absl::StatusOr<Entry> e = p.Next();
    if (!e.ok()) {
      o.error = std::string(e.status().message());
      return o;
    }
    if (*e == Entry::kEOF) break;
    if (*e == Entry::kSeries) {
      ++o.series;
      o.last_value = p.Value();
    }
  }
  o.ok = true;
  return o;
}

struct Case {
  std::string body;
  bool scrape;  // a Prometheus scrape accepts it (up == 1)
  bool expfmt;  // promtool check metrics parses it
};

}  // namespace

TEST_CASE(
    "Text format: scrape and expfmt dialects accept what Prometheus and "
    "promtool accept",
    "[textparse][dialect]") {
  const std::vector<Case> cases = {
      // '#' without a blank: a comment to the scrape parser; expfmt skips
      // zero blanks and sees the keyword.
      {"#TYPE x\nx 1\n", true, true},
      {"#TYPE x gauge\nx 1\n", true, true},
      {"#HELP x\nx 1\n", true, true},
      // TYPE text is the rest of the line after one byte, blanks included.
      {"# TYPE n untyped \nn 1\n", false, false},
      {"# TYPE n  gauge\nn 1\n", false, true},
      {"# TYPE n\tgauge\nn 1\n", true, true},
      {"# TYPE n-gauge\nn 1\n", true, false},
      {"# TYPE n\nn 1\n", false, true},
      {"# TYPE n GAUGE\nn 1\n", false, true},
      {"# TYPE n gauge_histogram\nn 1\n", false, true},
      {"# HELP\nn 1\n", true, true},
      {"# HELPx y\nn 1\n", true, true},
      {"# HELP n a\xff"
       "b\nn 1\n",
       false, true},
      {"# HELP n a\\tb\nn 1\n", true, false},
      {"# HELP n  two\nn 1\n", true, true},
      // The value may follow the name or labels at once.
      {"s{a=\"\"}5\n", true, true},
      {"s.9\n", true, true},
      {"s-1\n", true, true},
      {"s {a=\"b\"} 1\n", true, true},
      // Go's ParseFloat behind Prometheus's "pP_" filter.
      {"s +NaN\n", false, false},
      {"s -NaN\n", false, false},
      {"s nan\n", true, true},
      {"s +inf\n", true, true},
      {"s -Infinity\n", true, true},
      {"s INF\n", true, true},
      {"s infin\n", false, false},
      {"s 0x1p3\n", false, false},
      {"s 0x10\n", false, false},
      {"s 1_000\n", false, false},
      {"s 1e-400\n", true, true},
      {"s -1e-400\n", true, true},
      {"s 2e-324\n", true, true},
      {"s 1e-320\n", true, true},
      {"s 1e400\n", false, false},
      {"s -1e400\n", false, false},
      {"s 1.7976931348623158e308\n", true, true},
      {"s 1.7976931348623159e308\n", false, false},
      {"s .5\n", true, true},
      {"s 5.\n", true, true},
      {"s 1e\n", false, false},
      // Labels: commas optional and unknown escapes kept when scraping.
      {"s{a=\"b\" c=\"d\"} 1\n", true, false},
      {"s{a=\"\\t\"} 1\n", true, false},
      {"s{a=\"b\",} 1\n", true, true},
      {"s{,a=\"b\"} 1\n", false, false},
      {"s{a=\"b\",,} 1\n", false, false},
      {"s{a=\"b\",a=\"c\"} 1\n", false, false},
      // Timestamps: digits only when scraping; expfmt takes ParseInt and
      // nothing after it, not even a blank.
      {"s 1 -5\n", false, true},
      {"s 1 +5\n", false, true},
      {"s 1 2 \n", true, false},
      {"s 1 \n", true, false},
      {"s 1 # x\n", false, false},
      // A NUL where a line starts ends a scrape; expfmt wants a name.
      {std::string("s 1\n\0garbage\n", 14), true, false},
      {std::string("s{a=\"\0\"} 1\n", 11), true, true},
  };
  for (const Case& c : cases) {
    INFO(c.body);
    Outcome s = RunDialect(c.body, Format::kPrometheusText, Dialect::kScrape);
    INFO("scrape: " << s.error);
    CHECK(s.ok == c.scrape);
    Outcome e = RunDialect(c.body, Format::kPrometheusText, Dialect::kExpfmt);
    INFO("expfmt: " << e.error);
    CHECK(e.ok == c.expfmt);
  }
}

TEST_CASE("Scrape dialect: the values Prometheus stores for the edge cases",
          "[textparse][dialect]") {
  auto value = [](std::string_view body) {
    Outcome o = RunDialect(body, Format::kPrometheusText, Dialect::kScrape);
    REQUIRE(o.ok);
    REQUIRE(o.series == 1);
    return o.last_value;
  };
  CHECK(value("s.9\n") == 0.9);
  CHECK(value("s-1\n") == -1);
  CHECK(value("s{a=\"\"}5\n") == 5);
  CHECK(value("s 1e-400\n") == 0);
  CHECK_FALSE(std::signbit(value("s 1e-400\n")));
  CHECK(std::signbit(value("s -1e-400\n")));
  CHECK(value("s 1e-320\n") == 1e-320);
  CHECK(value("s 1.7976931348623158e308\n") == 1.7976931348623157e308);
  CHECK(std::isinf(value("s -Infinity\n")));

  Parser p("s{a=\"x\\ty\",b=\"q\\\"\"} 1\n", Format::kPrometheusText);
  REQUIRE(*p.Next() == Entry::kSeries);
  CHECK(p.Label(0).value == "x\\ty");
  CHECK(p.Label(1).value == "q\"");

  Parser h("# TYPE n\tgauge\n# HELP n  two\n# TYPE\n", Format::kPrometheusText);
  REQUIRE(*h.Next() == Entry::kType);
  CHECK(h.Type() == vigil::textparse::MetricType::kGauge);
  REQUIRE(*h.Next() == Entry::kHelp);
  CHECK(h.Help() == " two");
  REQUIRE(*h.Next() == Entry::kComment);

  // Everything from a NUL at a line start on is ignored, as Prometheus does.
  Outcome o = RunDialect(std::string("a 1\n\0b 2\nc 3\n", 13),
                         Format::kPrometheusText, Dialect::kScrape);
  CHECK(o.ok);
  CHECK(o.series == 1);
}

TEST_CASE("Expfmt dialect: HELP and TYPE lines without text are comments",
          "[textparse][dialect]") {
  Parser p("# HELP x\n# TYPE x \n# HELP x  a\\\\b\n", Format::kPrometheusText,
           {.dialect = Dialect::kExpfmt});
  CHECK(*p.Next() == Entry::kComment);
  CHECK(*p.Next() == Entry::kComment);
  REQUIRE(*p.Next() == Entry::kHelp);
  CHECK(p.Help() == "a\\b");
}

TEST_CASE("OpenMetrics: single spaces only, as Prometheus's OpenMetrics parser",
          "[textparse][dialect][openmetrics]") {
  struct OmCase {
    std::string body;
    bool ok;
  };
  const std::vector<OmCase> cases = {
      {"s 1\n", true},
      {"#TYPE x gauge\nx 1\n", false},
      {"# TYPE n unknown \nn 1\n", false},
      {"# TYPE\tn gauge\nn 1\n", false},
      {"# TYPE n gauge\nn 1\n", true},
      {"# HELP n\nn 1\n", false},
      {"# HELP n \nn 1\n", true},
      {"# UNIT n_seconds seconds \n", false},
      {"s{a=\"\"}5\n", false},
      {"s.9\n", false},
      {"s +NaN\n", false},
      {"s 1e-400\n", true},
      {"s 1e400\n", false},
      {"s 0x1p3\n", false},
      {"s{a=\"b\", c=\"d\"} 1\n", false},
      {"s{a=\"b\",c=\"d\",} 1\n", true},
      {"s{a=\"b\" } 1\n", false},
      {"s 1 \n", false},
      {"s  1\n", false},
      {"s\t1\n", false},
      {"s 1\t2\n", false},
      {"s{a=\"\\t\"} 1\n", true},
      {"s 1 2 # {a=\"b\"} 1\n", true},
      {"s 1 # {a=\"b\"} 1 2\n", true},
      {"s 1 #  {a=\"b\"} 1\n", false},
      {"s 1 # {a=\"b\"}  1\n", false},
      {"s 1 # {a=\"b\"} 1 \n", false},
  };
  for (const OmCase& c : cases) {
    const std::string body = c.body + "# EOF\n";
    INFO(body);
    Outcome o = RunDialect(body, Format::kOpenMetrics, Dialect::kScrape);
    INFO(o.error);
    CHECK(o.ok == c.ok);
  }
  CHECK_FALSE(
      RunDialect("s 1\n# EOF \n", Format::kOpenMetrics, Dialect::kScrape).ok);
  CHECK_FALSE(
      RunDialect("s 1\n#  EOF\n", Format::kOpenMetrics, Dialect::kScrape).ok);
  CHECK(RunDialect("s 1\n# EOF", Format::kOpenMetrics, Dialect::kScrape).ok);
}
