// `vigil check metrics`: reads a /metrics page (Prometheus text format 0.0.4)
// on stdin and reports what `promtool check metrics` reports, in the same
// shape, so scripts written for promtool keep working:
//
//   * a parse error prints "error while linting: LINE:COL: why" and exits 1
//     (promtool: "... text format parsing error in line N: why", exit 1);
//   * lint problems print "<family> <problem>" lines on stderr, sorted by
//     family then text, and exit 3;
//   * a clean page prints nothing and exits 0.
//
// The lint rules are those of client_golang's promlint as vendored by
// promtool 2.42. They apply per metric family as Go's expfmt text parser
// groups samples: `x_bucket`/`x_sum`/`x_count` join family `x` only if `x`
// was declared histogram/summary before; families without samples are not
// linted. Unlike our scrape path, a page without a final newline is an
// error here, as it is for promtool.
#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "core/textparse/parser.h"
#include "fmt/format.h"
#include "server/cli/cli.h"

namespace vigil::cli {
namespace {

using textparse::Entry;
using textparse::MetricType;

struct Problem {
  std::string metric;
  std::string text;
};

// One expfmt "metric" (a series; for histograms and summaries the buckets or
// quantiles of one label set) keeps only what the lint rules look at.
struct Metric {
  std::vector<std::string> label_names;  // without le / quantile
};

struct Family {
  std::string name;
  MetricType type = MetricType::kUnknown;
  bool has_type = false;
  bool has_help = false;
  std::vector<Metric> metrics;
  std::map<std::string, size_t> by_signature;  // histogram/summary grouping
};

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

bool ContainsTypeWord(std::string_view lower, std::string_view word) {
  std::string mid = fmt::format("_{}_", word);
  return lower.find(mid) != std::string_view::npos ||
         EndsWith(lower, mid.substr(0, mid.size() - 1));
}

bool HasCamelCase(std::string_view s) {
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] >= 'a' && s[i] <= 'z' && s[i + 1] >= 'A' && s[i + 1] <= 'Z') {
      return true;
    }
  }
  return false;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  absl::AsciiStrToLower(&out);
  return out;
}

// promlint's unit table: unit -> base unit.
constexpr std::array<std::pair<std::string_view, std::string_view>, 24> kUnits =
    {{{"amperes", "amperes"},    {"bytes", "bytes"},     {"celsius", "celsius"},
      {"grams", "grams"},        {"joules", "joules"},   {"kelvin", "kelvin"},
      {"meters", "meters"},      {"metres", "metres"},   {"seconds", "seconds"},
      {"volts", "volts"},        {"minutes", "seconds"}, {"hours", "seconds"},
      {"days", "seconds"},       {"weeks", "seconds"},   {"kelvins", "kelvin"},
      {"fahrenheit", "celsius"}, {"rankine", "celsius"}, {"inches", "meters"},
      {"yards", "meters"},       {"miles", "meters"},    {"bits", "bytes"},
      {"calories", "joules"},    {"pounds", "grams"},    {"ounces", "grams"}}};
constexpr std::array<std::string_view, 19> kUnitPrefixes = {
    "pico",  "nano", "micro", "milli", "centi", "deci", "deca",
    "hecto", "kilo", "kibi",  "mega",  "mibi",  "giga", "gibi",
    "tera",  "tebi", "peta",  "pebi",  ""};
constexpr std::array<std::string_view, 14> kUnitAbbreviations = {
    "s",  "ms", "us", "ns", "sec", "b", "kb",
    "mb", "gb", "tb", "pb", "m",   "h", "d"};
constexpr std::array<std::string_view, 5> kTypeWords = {
    "counter", "gauge", "summary", "histogram", "gauge_histogram"};

void LintUnits(const Family& f, std::vector<Problem>* out) {
  std::vector<std::string_view> parts;
  std::string_view n = f.name;
  for (size_t p = 0;;) {
    size_t u = n.find('_', p);
    parts.push_back(n.substr(p, u == std::string_view::npos ? u : u - p));
    if (u == std::string_view::npos) break;
    p = u + 1;
  }
  for (const auto& [unit, base] : kUnits) {
    for (std::string_view prefix : kUnitPrefixes) {
      const std::string full = fmt::format("{}{}", prefix, unit);
      for (std::string_view part : parts) {
        if (part != full) continue;
        if (full != base) {
          out->push_back({f.name, fmt::format("use base unit \"{}\" instead "
                                              "of \"{}\"",
                                              base, full)});
        }
        return;
      }
    }
  }
}

void Lint(const Family& f, std::vector<Problem>* out) {
  auto add = [&](std::string text) {
    out->push_back({f.name, std::move(text)});
  };
  const MetricType t = f.type;
  const std::string_view n = f.name;
  if (!f.has_help) add("no help text");
  LintUnits(f, out);
  const bool is_counter = t == MetricType::kCounter;
  const bool untyped = t == MetricType::kUnknown;
  if (is_counter && !EndsWith(n, "_total")) {
    add("counter metrics should have \"_total\" suffix");
  } else if (!untyped && !is_counter && EndsWith(n, "_total")) {
    add("non-counter metrics should not have \"_total\" suffix");
  }
  if (!untyped) {
    const bool hist = t == MetricType::kHistogram;
    const bool summ = t == MetricType::kSummary;
    if (!hist && EndsWith(n, "_bucket")) {
      add("non-histogram metrics should not have \"_bucket\" suffix");
    }
    if (!hist && !summ && EndsWith(n, "_count")) {
      add("non-histogram and non-summary metrics should not have \"_count\" "
          "suffix");
    }
    if (!hist && !summ && EndsWith(n, "_sum")) {
      add("non-histogram and non-summary metrics should not have \"_sum\" "
          "suffix");
    }
    for (const Metric& m : f.metrics) {
      for (const std::string& ln : m.label_names) {
        if (!hist && ln == "le") {
          add("non-histogram metrics should not have \"le\" label");
        }
        if (!summ && ln == "quantile") {
          add("non-summary metrics should not have \"quantile\" label");
        }
      }
    }
  }
  const std::string lower = ToLower(n);
  for (std::string_view word : kTypeWords) {
    if (ContainsTypeWord(lower, word)) {
      add(fmt::format("metric name should not include type '{}'", word));
    }
  }
  if (n.find(':') != std::string_view::npos) {
    add("metric names should not contain ':'");
  }
  if (HasCamelCase(n)) {
    add("metric names should be written in 'snake_case' not 'camelCase'");
  }
  for (const Metric& m : f.metrics) {
    for (const std::string& ln : m.label_names) {
      if (HasCamelCase(ln)) {
        add("label names should be written in 'snake_case' not 'camelCase'");
      }
    }
  }
  for (std::string_view a : kUnitAbbreviations) {
    if (ContainsTypeWord(lower, a)) {
      add("metric names should not contain abbreviated units");
    }
  }
}

// Groups the page into families the way expfmt does. On a parse error
// returns false with *error set.
bool ReadFamilies(std::string_view body, std::map<std::string, Family>* fams,
                  std::string* error) {
  // promtool check metrics parses with expfmt, not the scrape parser.
  textparse::Parser p(body, textparse::Format::kPrometheusText,
                      {.dialect = textparse::Dialect::kExpfmt});
  auto get = [&](std::string_view name) -> Family& {
    auto [it, inserted] = fams->try_emplace(std::string(name));
    if (inserted) it->second.name = std::string(name);
    return it->second;
  };
  for (;;) {
    absl::StatusOr<Entry> e = p.Next();
    if (!e.ok()) {
      *error = std::string(e.status().message());
      return false;
    }
    if (*e == Entry::kEOF) break;
    if (*e == Entry::kHelp) {
      Family& f = get(p.MetricName());
      if (f.has_help) {
        *error = fmt::format("{}:1: second HELP line for metric name \"{}\"",
                             p.line(), p.MetricName());
        return false;
      }
      f.has_help = true;
    } else if (*e == Entry::kType) {
      Family& f = get(p.MetricName());
      if (f.has_type || !f.metrics.empty()) {
        *error = fmt::format(
            "{}:1: second TYPE line for metric name \"{}\", or "
            "TYPE reported after samples",
            p.line(), p.MetricName());
        return false;
      }
      f.has_type = true;
      f.type = p.Type();
    } else if (*e == Entry::kSeries) {
      std::string_view name = p.MetricName();
      Family* f = nullptr;
      if (auto it = fams->find(std::string(name)); it != fams->end()) {
        f = &it->second;
      } else {
        for (std::string_view suffix : {"_bucket", "_count", "_sum"}) {
          if (!EndsWith(name, suffix)) continue;
          auto base = fams->find(
              std::string(name.substr(0, name.size() - suffix.size())));
          if (base == fams->end()) continue;
          MetricType t = base->second.type;
          if (t == MetricType::kHistogram ||
              (t == MetricType::kSummary && suffix != "_bucket")) {
            f = &base->second;
          }
        }
      }
      if (f == nullptr) f = &get(name);
      const bool hist = f->type == MetricType::kHistogram;
      const bool summ = f->type == MetricType::kSummary;
      Metric m;
      std::string signature;
      for (size_t i = 0; i < p.NumLabels(); ++i) {
        textparse::LabelView l = p.Label(i);
        if ((hist && l.name == "le") || (summ && l.name == "quantile"))
          continue;
        m.label_names.emplace_back(l.name);
        signature += fmt::format("{}\xff{}\xff", l.name, l.value);
      }
      if (hist || summ) {
        auto [it, inserted] =
            f->by_signature.try_emplace(signature, f->metrics.size());
        if (!inserted) continue;
      }
      f->metrics.push_back(std::move(m));
    }
  }
  if (!body.empty() && body.back() != '\n') {
    const size_t nl = body.rfind('\n');
    const size_t col =
        nl == std::string_view::npos ? body.size() + 1 : body.size() - nl;
    *error = fmt::format(
        "{}:{}: unexpected end of input: the last line has "
        "no final newline",
        p.line(), col);
    return false;
  }
  return true;
}

}  // namespace

int CheckMetrics(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") {
      std::fputs(
          "usage: vigil check metrics < page\n\nLints a /metrics page "
          "(Prometheus text format) read from stdin, as\n`promtool "
          "check metrics` does. Exit 0: clean; 1: parse error;\n3: "
          "lint problems.\n",
          stdout);
      return 0;
    }
    std::fprintf(stderr,
                 "vigil check metrics: unexpected argument \"%s\" "
                 "(the page is read from stdin)\n",
                 a.c_str());
    return 2;
  }
  std::string body;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) body.append(buf, n);
  if (std::ferror(stdin)) {
    std::fputs("vigil check metrics: cannot read stdin\n", stderr);
    return 1;
  }
  std::map<std::string, Family> fams;
  std::string error;
  if (!ReadFamilies(body, &fams, &error)) {
    std::fprintf(stderr, "error while linting: %s\n", error.c_str());
    return 1;
  }
  std::vector<Problem> problems;
  for (const auto& [name, f] : fams) {
    if (!f.metrics.empty()) Lint(f, &problems);
  }
  std::stable_sort(problems.begin(), problems.end(),
                   [](const Problem& a, const Problem& b) {
                     if (a.metric != b.metric) return a.metric < b.metric;
                     return a.text < b.text;
                   });
  for (const Problem& pr : problems) {
    std::fprintf(stderr, "%s %s\n", pr.metric.c_str(), pr.text.c_str());
  }
  return problems.empty() ? 0 : 3;
}

}  // namespace vigil::cli
