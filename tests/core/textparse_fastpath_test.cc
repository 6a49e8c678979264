// Tests for the parser's fast paths: the one-pass label value scan and the
// plain-decimal value parse, each checked against the general rules.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "core/textparse/parser.h"
#include "core/textparse/scan.h"

namespace {

using vigil::textparse::Entry;
using vigil::textparse::Format;
using vigil::textparse::Parser;

// What ParseLabelValue must produce for the value between quotes: the
// scrape dialect's unescaping (\\ \" \n; any other escaped byte kept with
// its backslash), or "" with *bad set for invalid UTF-8.
TEST_CASE("Label values of every length and content around 8-byte blocks",
          "[textparse][fastpath]") {
  const std::string pieces[] = {"a",   "\\\"",     "\\\\", "\\n",
                                "\\t", "\xc3\xa9", "\xff", "}",
                                "{",   ",",        " ",    "="};
  std::mt19937 rng(7);
  for (int iter = 0; iter < 4000; ++iter) {
    std::string raw;
    const int n = static_cast<int>(rng() % 24);
    for (int i = 0; i < n; ++i) {
      // Mostly plain bytes, so values of every length hit the block loop.
      raw +=
          rng() % 4 != 0 ? std::string("x") : pieces[rng() % std::size(pieces)];
    }
    std::string want;
    bool bad_utf8 = false;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\\') {
        const char c = raw[++i];
        if (c == 'n') {
          want += '\n';
        } else if (c == '\\' || c == '"') {
          want += c;
        } else {
          want += '\\';
          want += c;
        }
        continue;
      }
      if (raw[i] == '\xff') bad_utf8 = true;
      want += raw[i];
    }
    const std::string line = "m{l=\"" + raw + "\",k=\"v\"} 1\n";
    INFO(line);
    Parser p(line, Format::kPrometheusText);
    absl::StatusOr<Entry> e = p.Next();
    if (bad_utf8) {
      REQUIRE_FALSE(e.ok());
      CHECK(std::string(e.status().message()).find("invalid UTF-8") !=
            std::string::npos);
      continue;
    }
    REQUIRE(e.ok());
    REQUIRE(p.NumLabels() == 2);
    CHECK(std::string(p.Label(0).value) == want);
    CHECK(std::string(p.Label(1).value) == "v");
    CHECK(p.SeriesText().size() == line.size() - 3);
  }
}

TEST_CASE("Plain decimal values parse exactly as strtod does",
          "[textparse][fastpath]") {
  using vigil::textparse::internal::ParseFloat;
  std::mt19937_64 rng(11);
  auto check = [](const std::string& tok) {
    INFO(tok);
    double got = -1;
    REQUIRE(ParseFloat(tok, &got));
    const double want = std::strtod(tok.c_str(), nullptr);
    CHECK(std::memcmp(&got, &want, sizeof(double)) == 0);
  };
  for (const char* tok : {"0",
                          "-0",
                          "+0",
                          "0.",
                          ".5",
                          "-.5",
                          "1.",
                          "00012",
                          "0.001",
                          "2.5",
                          "999999999999999",
                          "9999999999999999",
                          "0.7192242608591716",
                          "123456789012345.",
                          ".123456789012345",
                          "1781516249",
                          "-42.125",
                          "9007199254740992",
                          "9007199254740993",
                          "0.9007199254740993",
                          "9999999999999999999",
                          "99999999999999999999",
                          "1e5"}) {
    check(tok);
  }
  for (int i = 0; i < 20000; ++i) {
    const int digits = 1 + static_cast<int>(rng() % 22);
    std::string tok;
    if (rng() % 3 == 0) tok += rng() % 2 ? "-" : "+";
    const int dot = static_cast<int>(rng() % (digits + 2)) - 1;
    for (int d = 0; d < digits; ++d) {
      if (d == dot) tok += '.';
      tok += static_cast<char>('0' + rng() % 10);
    }
    if (dot == digits) tok += '.';
    check(tok);
  }
  double v = 0;
  for (const char* bad : {".", "-", "1.2.3", "1..", "", "+-1", "1_0", "0x10"}) {
    INFO(bad);
    CHECK_FALSE(ParseFloat(bad, &v));
  }
}

}  // namespace
