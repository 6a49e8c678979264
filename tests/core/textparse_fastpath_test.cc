// Tests for the parser's fast paths: Next(KnownSeries*) skipping the labels
// of series a caller already knows, the one-pass label value scan and the
// plain-decimal value parse. Each is checked against the general path.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/textparse/parser.h"
#include "core/textparse/scan.h"

namespace {

using vigil::textparse::Entry;
using vigil::textparse::Format;
using vigil::textparse::KnownSeries;
using vigil::textparse::Parser;

const std::filesystem::path kFastpathFixtures =
    std::filesystem::path(VIGIL_SHARED_DIR) / "fixtures" / "metrics";

std::string ReadFastpathFixture(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Knows every text in `texts`; records what it was asked.
class SetKnown : public KnownSeries {
 public:
  bool IsKnown(std::string_view text) override {
    asked.emplace_back(text);
    return texts.count(std::string(text)) > 0;
  }
  std::set<std::string> texts;
  std::vector<std::string> asked;
};

// One entry as a string: kind, series text, labels, value bits, timestamp.
std::string Describe(Parser& p, Entry e) {
  std::string s = std::to_string(static_cast<int>(e));
  if (e != Entry::kSeries) return s + " " + std::string(p.MetricName());
  REQUIRE(p.ParseSkippedLabels().ok());
  s += " " + std::string(p.SeriesText()) + " " + p.BuildLabels().ToString();
  double v = p.Value();
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  s += " " + std::to_string(bits);
  if (p.Timestamp()) s += " @" + std::to_string(*p.Timestamp());
  return s;
}

// Every entry of `body` (and the final status) with Next(), and with
// Next(known) where `known` knows every series text of the page.
void CheckSameWithKnown(std::string_view body, Format f) {
  std::vector<std::string> plain;
  SetKnown known;
  {
    Parser p(body, f);
    for (;;) {
      absl::StatusOr<Entry> e = p.Next();
      if (!e.ok()) {
        plain.push_back("error " + std::string(e.status().message()));
        break;
      }
      if (*e == Entry::kSeries) known.texts.emplace(p.SeriesText());
      plain.push_back(Describe(p, *e));
      if (*e == Entry::kEOF) break;
    }
  }
  std::vector<std::string> fast;
  int skipped = 0;
  Parser p(body, f);
  for (;;) {
    absl::StatusOr<Entry> e = p.Next(&known);
    if (!e.ok()) {
      fast.push_back("error " + std::string(e.status().message()));
      break;
    }
    if (*e == Entry::kSeries && p.LabelsSkipped()) ++skipped;
    fast.push_back(Describe(p, *e));
    if (*e == Entry::kEOF) break;
  }
  CHECK(fast == plain);
  if (known.texts.size() > 0 && body.find('{') != std::string_view::npos) {
    CHECK(skipped > 0);
  }
}

TEST_CASE("Next(known) gives the entries Next() gives on real pages",
          "[textparse][fastpath]") {
  int pages = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(kFastpathFixtures)) {
    if (entry.path().extension() != ".txt") continue;
    const std::string body = ReadFastpathFixture(entry.path());
    INFO(entry.path().filename().string());
    CheckSameWithKnown(body, Format::kPrometheusText);
    ++pages;
  }
  CHECK(pages > 5);
}

TEST_CASE("Next(known) keeps Next()'s verdicts on odd and malformed lines",
          "[textparse][fastpath]") {
  const char* text_pages[] = {
      "a{x=\"1\"} 1\na{x=\"1\"} zz\n",    // known text, bad value
      "a{x=\"1\"} 1\na{x=\"1\"}\n",       // known text, no value
      "a{x=\"1\"} 1\na{x=\"1\"} 1 -5\n",  // known text, bad timestamp
      "a{x=\"1\"} 1\na{x=\"1\"} 1 # {a=\"b\"} 1\n",  // exemplar in 0.0.4
      "a {x=\"1\" , y=\"2\" } 1\na {x=\"1\" , y=\"2\" } 2 17\n",
      "a{x=\"1\" y=\"2\"} 1\na{x=\"1\" y=\"2\"} 2\n",    // no comma (scrape)
      "a{x=\"}\\\"{\\\\\"} 1\na{x=\"}\\\"{\\\\\"} 2\n",  // braces, escapes
      "a{x=\"\\t\"} 1\na{x=\"\\t\"} 2\n",
      "a{x=\"1\"} 1\na{x=\"1\",x=\"2\"} 2\n",  // duplicate label
      "a{x=\"1\"} 1\na{x=\"1} 2\n",            // unterminated value
      "a{x=\"1\"} 1\na{x=\"1\"\n",             // unterminated set
      "a{x=\"1\"} 1\na{1x=\"1\"} 2\n",         // bad label name
      "a{} 1\na{} 2\nb 3\nb 4\n",
      "a{x=\"\"} 1\na{x=\"\"} 2\n",  // empty value: dropped label
      "a{x=\"\xff\"} 1\n",           // invalid UTF-8
      "a{x=\"1\"}1\na{x=\"1\"}2\n",  // value right after '}'
  };
  for (const char* page : text_pages) {
    INFO(page);
    CheckSameWithKnown(page, Format::kPrometheusText);
  }
  const char* om_pages[] = {
      "a{x=\"1\"} 1\na{x=\"1\"} 2 17.5 # {t=\"x\"} 1 2\n# EOF\n",
      "a{x=\"1\"} 1\na{x=\"1\"}  2\n# EOF\n",  // two spaces
      "a{x=\"1\"} 1\na{x=\"1\"} zz\n# EOF\n",
  };
  for (const char* page : om_pages) {
    INFO(page);
    CheckSameWithKnown(page, Format::kOpenMetrics);
  }
}

TEST_CASE("Next(known) finds the end of label sets of every shape",
          "[textparse][fastpath]") {
  // Quotes, braces and backslashes at every offset around 16-byte blocks.
  const std::string pieces[] = {"a",   "\\\"", "\\\\", "}", "{",
                                "\\}", "\\",   ",",    " "};
  std::mt19937 rng(3);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string set = "{";
    const int labels = 1 + static_cast<int>(rng() % 3);
    for (int l = 0; l < labels; ++l) {
      set += "l" + std::to_string(l) + "=\"";
      const int n = static_cast<int>(rng() % 40);
      for (int i = 0; i < n; ++i) {
        set += rng() % 3 != 0 ? std::string("x")
                              : pieces[rng() % std::size(pieces)];
      }
      set += "\",";
    }
    set += "}";
    const std::string page =
        "m" + set + " 1\nm" + set + " 2 17\nm" + set + " zz\n";
    INFO(page);
    CheckSameWithKnown(page, Format::kPrometheusText);
  }
}

TEST_CASE("Next(known) asks once per sample line, with its series text",
          "[textparse][fastpath]") {
  SetKnown known;
  known.texts = {"a{x=\"1\"}"};
  Parser p("# TYPE a gauge\na{x=\"1\"} 1\nb 2\na {x=\"2\"} 3\n",
           Format::kPrometheusText);
  std::vector<bool> skipped;
  for (;;) {
    absl::StatusOr<Entry> e = p.Next(&known);
    REQUIRE(e.ok());
    if (*e == Entry::kEOF) break;
    if (*e == Entry::kSeries) skipped.push_back(p.LabelsSkipped());
  }
  CHECK(known.asked ==
        std::vector<std::string>{"a{x=\"1\"}", "b", "a {x=\"2\"}"});
  CHECK(skipped == std::vector<bool>{true, false, false});
}

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
                          "1e5",
                          "12345678e3",
                          "12345678.87654321",
                          "0000000000000000000001"}) {
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
  for (const char* bad : {".", "-", "1.2.3", "1..", "", "+-1", "1_0", "0x10",
                          "1234567:", "12345678:", "1234567/", "12345678 "}) {
    INFO(bad);
    CHECK_FALSE(ParseFloat(bad, &v));
  }
}

}  // namespace
