// libFuzzer target: the /metrics parser (core/textparse) over arbitrary
// bytes, in the three ways Vigil uses it: the Prometheus text format as a
// scrape reads it, as `promtool check metrics` (expfmt) reads it, and
// OpenMetrics. Besides not crashing, each parse must keep the parser's
// contract: errors are "LINE:COL: why" and sticky, kEOF repeats, and every
// accessor of an entry is usable.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/textparse/parser.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using vigil::textparse::Dialect;
using vigil::textparse::Entry;
using vigil::textparse::Format;
using vigil::textparse::Parser;

bool IsPositioned(std::string_view msg) {
  // "LINE:COL: ..." with both numbers present.
  size_t i = 0;
  while (i < msg.size() && msg[i] >= '0' && msg[i] <= '9') i++;
  if (i == 0 || i >= msg.size() || msg[i] != ':') return false;
  size_t j = ++i;
  while (j < msg.size() && msg[j] >= '0' && msg[j] <= '9') j++;
  return j > i && msg.substr(j, 2) == ": ";
}

void ParseAll(std::string_view body, Format format, Dialect dialect) {
  Parser p(body, format, {.dialect = dialect});
  // Every entry consumes at least one byte, so this bounds the loop.
  for (size_t n = 0; n <= body.size() + 1; n++) {
    auto e = p.Next();
    if (!e.ok()) {
      std::string msg(e.status().message());
      FUZZ_CHECK(IsPositioned(msg), msg);
      auto again = p.Next();
      FUZZ_CHECK(!again.ok() && again.status() == e.status(),
                 "errors must be sticky: " + msg);
      return;
    }
    if (*e == Entry::kEOF) {
      auto again = p.Next();
      FUZZ_CHECK(again.ok() && *again == Entry::kEOF, "kEOF must repeat");
      return;
    }
    FUZZ_CHECK(p.consumed() <= body.size(), "consumed past the body");
    switch (*e) {
      case Entry::kSeries: {
        FUZZ_CHECK(!p.MetricName().empty() || p.NumLabels() > 0,
                   "a series without name or labels");
        size_t bytes = 0;
        for (size_t i = 0; i < p.NumLabels(); i++) {
          auto l = p.Label(i);
          bytes += l.name.size() + l.value.size();
        }
        if (p.HasExemplar()) {
          for (size_t i = 0; i < p.NumExemplarLabels(); i++) {
            bytes += p.ExemplarLabel(i).value.size();
          }
          (void)p.ExemplarValue();
          (void)p.ExemplarTimestamp();
        }
        vigil::Labels ls = p.BuildLabels();
        FUZZ_CHECK(ls.size() <= p.NumLabels() + 1, "BuildLabels grew");
        (void)bytes;
        (void)p.Value();
        (void)p.Timestamp();
        (void)p.SeriesText();
        break;
      }
      case Entry::kHelp:
        (void)p.Help();
        break;
      case Entry::kType:
        (void)vigil::textparse::MetricTypeName(p.Type());
        break;
      case Entry::kUnit:
        (void)p.Unit();
        break;
      case Entry::kComment:
        FUZZ_CHECK(!p.Comment().empty() && p.Comment()[0] == '#',
                   "a comment that does not start with #");
        break;
      case Entry::kEOF:
        break;
    }
  }
  FUZZ_CHECK(false, "the parser does not advance");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  ParseAll(body, Format::kPrometheusText, Dialect::kScrape);
  ParseAll(body, Format::kPrometheusText, Dialect::kExpfmt);
  ParseAll(body, Format::kOpenMetrics, Dialect::kScrape);
  return 0;
}
