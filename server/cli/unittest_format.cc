#include "server/cli/unittest_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "fmt/format.h"

namespace vigil::cli {

std::string IndentLines(std::string_view lines, std::string_view indent) {
  std::string out;
  size_t start = 0;
  bool first = true;
  while (true) {
    size_t nl = lines.find('\n', start);
    if (!first) out += indent;
    first = false;
    if (nl == std::string_view::npos) {
      out += lines.substr(start);
      break;
    }
    out += lines.substr(start, nl - start + 1);
    start = nl + 1;
  }
  return out;
}

void SortAlerts(std::vector<LabelsAndAnnotations>* v) {
  std::stable_sort(
      v->begin(), v->end(),
      [](const LabelsAndAnnotations& a, const LabelsAndAnnotations& b) {
        int c = Compare(a.labels, b.labels);
        if (c != 0) return c < 0;
        return Compare(a.annotations, b.annotations) < 0;
      });
}

void SortSamples(std::vector<ParsedSample>* v) {
  std::stable_sort(v->begin(), v->end(),
                   [](const ParsedSample& a, const ParsedSample& b) {
                     return Compare(a.labels, b.labels) < 0;
                   });
}

namespace {
std::string AlertString(const LabelsAndAnnotations& a) {
  return "Labels:" + a.labels.ToString() +
         "\nAnnotations:" + a.annotations.ToString();
}

bool FloatEqual(double a, double b, bool fuzzy) {
  if (a == b) return true;
  return fuzzy && (std::nextafter(a, -INFINITY) == b ||
                   std::nextafter(a, INFINITY) == b);
}
}  // namespace

std::string AlertsString(const std::vector<LabelsAndAnnotations>& v) {
  if (v.empty()) return "[]";
  std::string s = "[\n0:" + IndentLines("\n" + AlertString(v[0]), "  ");
  for (size_t i = 1; i < v.size(); ++i) {
    s += ",\n" + std::to_string(i) + ":" +
         IndentLines("\n" + AlertString(v[i]), "  ");
  }
  return s + "\n]";
}

std::string FormatFloatE(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto r =
      std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string s(buf, r.ptr);
  for (char& c : s) {
    if (c == 'e') c = 'E';
  }
  return s;
}

std::string SamplesString(const std::vector<ParsedSample>& v) {
  if (v.empty()) return "nil";
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s += ", ";
    s += v[i].labels.ToString() + " " + FormatFloatE(v[i].value);
  }
  return s;
}

bool AlertsEqual(const std::vector<LabelsAndAnnotations>& a,
                 const std::vector<LabelsAndAnnotations>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i].labels == b[i].labels) ||
        !(a[i].annotations == b[i].annotations))
      return false;
  }
  return true;
}

bool SamplesEqual(const std::vector<ParsedSample>& a,
                  const std::vector<ParsedSample>& b, bool fuzzy) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i].labels == b[i].labels) ||
        !FloatEqual(a[i].value, b[i].value, fuzzy)) {
      return false;
    }
  }
  return true;
}

}  // namespace vigil::cli
