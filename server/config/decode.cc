// yaml.v2 scalars, label sets and relabel rules for prometheus.yml.
#include "server/config/internal/decode.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>

#include "absl/strings/match.h"
#include "core/go/strconv.h"
#include "core/go/utf8.h"
#include "fmt/format.h"

namespace vigil::config::internal {
namespace {

using goyaml::PosOf;

// alecthomas/units ParseUnit with a unit map.
absl::StatusOr<int64_t> ParseUnit(std::string_view orig,
                                  const std::map<std::string, double>& units) {
  std::string_view s = orig;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  auto invalid = [&] {
    return absl::InvalidArgumentError(fmt::format("units: invalid {}", orig));
  };
  if (s == "0") return 0;
  if (s.empty()) return invalid();
  double f = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || (s[0] >= '0' && s[0] <= '9'))) return invalid();
    double g = 0;
    size_t i = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9')
      g = g * 10 + (s[i++] - '0');
    bool digits = i > 0;
    if (i < s.size() && s[i] == '.') {
      ++i;
      double scale = 1;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        scale /= 10;
        g += (s[i++] - '0') * scale;
        digits = true;
      }
    }
    if (!digits) return invalid();
    size_t j = i;
    while (j < s.size() && s[j] != '.' && !(s[j] >= '0' && s[j] <= '9')) ++j;
    const std::string unit(s.substr(i, j - i));
    auto it = units.find(unit);
    if (it == units.end()) {
      return absl::InvalidArgumentError(
          fmt::format("units: unknown unit {} in {}", unit, orig));
    }
    f += g * it->second;
    s.remove_prefix(j);
  }
  if (neg) f = -f;
  if (f < -9.2233720368547758e18 || f >= 9.2233720368547758e18) {
    return absl::InvalidArgumentError("units: overflow parsing unit");
  }
  return static_cast<int64_t>(f);
}

std::map<std::string, double> UnitMap(std::string_view suffix) {
  std::map<std::string, double> m{{"B", 1}};
  double scale = 1;
  for (char p : std::string_view("KMGTPE")) {
    scale *= 1024;
    m[std::string(1, p) + std::string(suffix)] = scale;
  }
  return m;
}

}  // namespace

bool Bool(GoYamlDecoder& d, const YAML::Node& n, bool* out) {
  if (IsNullNode(n)) return true;  // yaml.v2 leaves the field as it was
  if (n.IsScalar() && n.Tag() != "!") {
    static const char* const kTrue[] = {"y",  "Y",  "yes",  "Yes",  "YES", "on",
                                        "On", "ON", "true", "True", "TRUE"};
    static const char* const kFalse[] = {"n",     "N",     "no",   "No",
                                         "NO",    "off",   "Off",  "OFF",
                                         "false", "False", "FALSE"};
    for (const char* t : kTrue) {
      if (n.Scalar() == t) return *out = true, true;
    }
    for (const char* f : kFalse) {
      if (n.Scalar() == f) return *out = false, true;
    }
  }
  d.TypeMismatch(n, "bool");
  return false;
}

bool Uint(GoYamlDecoder& d, const YAML::Node& n, std::string_view type,
          uint64_t* out) {
  if (IsNullNode(n)) return *out = 0, true;
  const std::string tag = n.IsScalar() ? d.ShortTag(n) : "";
  std::string s = n.IsScalar() ? n.Scalar() : "";
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  if (tag == "!!int" && !s.empty() && s[0] != '-') {
    auto v = go::ParseInt(s[0] == '+' ? s.substr(1) : s, 0);
    if (v.ok()) return *out = static_cast<uint64_t>(*v), true;
    char* end = nullptr;
    errno = 0;
    const unsigned long long u = std::strtoull(s.c_str(), &end, 0);
    if (errno == 0 && end && *end == '\0') return *out = u, true;
  } else if (tag == "!!float") {
    const double f = std::strtod(s.c_str(), nullptr);
    if (f >= 0 && f <= 1.8446744073709552e19) {
      return *out = static_cast<uint64_t>(f), true;
    }
  }
  d.TypeMismatch(n, type);
  return false;
}

bool Int(GoYamlDecoder& d, const YAML::Node& n, int* out) {
  return d.Int(n, out);
}

bool Bytes(GoYamlDecoder& d, const YAML::Node& n, int64_t* out) {
  if (IsNullNode(n)) return *out = 0, true;
  std::string s;
  if (!d.String(n, &s)) return false;
  static const auto kNew = UnitMap("iB");
  static const auto kOld = UnitMap("B");
  auto v = ParseUnit(s, kNew);
  if (!v.ok()) v = ParseUnit(s, kOld);
  if (!v.ok()) {
    d.Fail(PosOf(n), std::string(v.status().message()));
    return false;
  }
  *out = *v;
  return true;
}

bool StringList(GoYamlDecoder& d, const YAML::Node& n, std::string_view type,
                std::vector<std::string>* out) {
  out->clear();
  auto items = d.Sequence(n, type);
  if (!items) return false;
  bool ok = true;
  for (const YAML::Node& item : *items) {
    std::string s;
    if (d.String(item, &s)) {
      out->push_back(std::move(s));
    } else {
      ok = false;
    }
  }
  return ok;
}

bool LabelSet(GoYamlDecoder& d, const YAML::Node& n, Labels* out) {
  if (!IsNullNode(n) && !n.IsMap()) {
    d.TypeMismatch(n, "model.LabelSet");
    return false;
  }
  goyaml::StringMapEntries entries;
  if (!d.StringMap(n, &entries)) return false;
  std::vector<Label> labels;
  for (auto& [f, v] : entries) {
    if (!IsValidLabelName(f.key)) {
      d.Fail(PosOf(f.key_node),
             go::Quote(f.key) + " is not a valid label name");
      return false;
    }
    labels.push_back({f.key, std::move(v)});
  }
  *out = Labels::FromUnsorted(std::move(labels));
  return true;
}

void Unsupported(GoYamlDecoder& d, const Field& f) {
  const auto pos = PosOf(f.key_node);
  d.Fail(pos,
         fmt::format("line {}: {} is not supported by vigil", pos.line, f.key));
}

void RejectOtherSD(GoYamlDecoder& d, const YAML::Node& mapping) {
  if (!mapping.IsMap()) return;
  for (auto it = mapping.begin(); it != mapping.end(); ++it) {
    if (!it->first.IsScalar()) continue;
    const std::string& k = it->first.Scalar();
    if (absl::EndsWith(k, "_sd_configs") && k != "file_sd_configs" &&
        k != "dns_sd_configs") {
      Unsupported(d, Field{k, it->first, it->second});
    }
  }
}

namespace {

void DecodeRelabel(GoYamlDecoder& d, const YAML::Node& n, RelabelConfig* r) {
  auto fields = d.Struct(n, "relabel.plain",
                         {"source_labels", "separator", "regex", "modulus",
                          "target_label", "replacement", "action"});
  if (!fields) return;
  for (const Field& f : *fields) {
    if (f.key == "source_labels") {
      r->source_labels_set = !IsNullNode(f.value);
      auto items = d.Sequence(f.value, "model.LabelNames");
      if (!items) continue;
      r->source_labels.clear();
      for (const YAML::Node& item : *items) {
        std::string s;
        if (!d.String(item, &s)) continue;
        if (!IsValidLabelName(s)) {
          d.Fail(PosOf(item), go::Quote(s) + " is not a valid label name");
        }
        r->source_labels.push_back(s);
      }
    } else if (f.key == "separator") {
      d.String(f.value, &r->separator);
    } else if (f.key == "regex") {
      std::string s;
      if (!d.String(f.value, &s)) continue;
      auto re = RelabelRegex::Compile(s);
      if (!re.ok()) {
        d.Fail(PosOf(f.value), std::string(re.status().message()));
        continue;
      }
      r->regex = *re;
    } else if (f.key == "modulus") {
      Uint(d, f.value, "uint64", &r->modulus);
    } else if (f.key == "target_label") {
      d.String(f.value, &r->target_label);
    } else if (f.key == "replacement") {
      d.String(f.value, &r->replacement);
    } else if (f.key == "action") {
      std::string s;
      if (!d.String(f.value, &s)) continue;
      auto a = ParseRelabelAction(s);
      if (!a.ok()) {
        d.Fail(PosOf(f.value), std::string(a.status().message()));
        continue;
      }
      r->action = *a;
    }
  }
}

}  // namespace

void RelabelList(GoYamlDecoder& d, const YAML::Node& n,
                 std::vector<RelabelConfig>* out, bool* nulls) {
  auto items = d.Sequence(n, "[]*relabel.Config");
  if (!items) return;
  for (const YAML::Node& item : *items) {
    if (IsNullNode(item)) {
      *nulls = true;
      continue;
    }
    RelabelConfig r;
    DecodeRelabel(d, item, &r);
    out->push_back(std::move(r));
  }
}

absl::Status ValidateRelabelList(const std::vector<RelabelConfig>& rules) {
  for (const RelabelConfig& r : rules) {
    if (auto s = ValidateRelabelConfig(r); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace vigil::config::internal
