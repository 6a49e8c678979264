// go-yaml v3 decoding semantics over yaml-cpp nodes; see rule_file_yaml.h.
#include "core/goyaml/decoder.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <regex>
#include <set>

#include "absl/strings/match.h"
#include "core/go/strconv.h"
#include "core/time.h"
#include "fmt/format.h"

namespace vigil::goyaml {
namespace {

constexpr std::string_view kLongTagPrefix = "tag:yaml.org,2002:";

bool IsNullText(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// Go's strconv.ParseInt(s, 0, 64) after go-yaml dropped the underscores.
std::optional<int64_t> ParseGoInt(std::string s, bool* overflow_positive) {
  std::string_view v = s;
  bool neg = false;
  if (!v.empty() && (v[0] == '+' || v[0] == '-')) {
    neg = v[0] == '-';
    v.remove_prefix(1);
  }
  int base = 10;
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    base = 16, v.remove_prefix(2);
  } else if (v.size() > 2 && v[0] == '0' && (v[1] == 'o' || v[1] == 'O')) {
    base = 8, v.remove_prefix(2);
  } else if (v.size() > 2 && v[0] == '0' && (v[1] == 'b' || v[1] == 'B')) {
    base = 2, v.remove_prefix(2);
  } else if (v.size() > 1 && v[0] == '0') {
    base = 8, v.remove_prefix(1);
  }
  if (v.empty()) return std::nullopt;
  unsigned __int128 acc = 0;
  for (char c : v) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : 99;
    if (d >= base) return std::nullopt;
    acc = acc * base + d;
    if (acc > (static_cast<unsigned __int128>(1) << 64)) break;
  }
  const unsigned __int128 max = std::numeric_limits<int64_t>::max();
  if (!neg && acc > max) {
    // Fits a uint64: go-yaml still calls it an !!int (else a !!float).
    const unsigned __int128 umax = std::numeric_limits<uint64_t>::max();
    if (overflow_positive && acc <= umax) *overflow_positive = true;
    return std::nullopt;
  }
  if (neg && acc > max + 1) return std::nullopt;
  return neg ? static_cast<int64_t>(-static_cast<__int128>(acc))
             : static_cast<int64_t>(acc);
}

bool IsYamlFloat(const std::string& s) {
  static const std::regex re(
      R"(^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$)");
  return std::regex_match(s, re);
}

bool IsYamlTimestamp(const std::string& s) {
  static const std::regex re(
      R"(^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2})"
      R"((\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$)");
  return std::regex_match(s, re);
}

std::string StripUnderscores(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '_') out.push_back(c);
  }
  return out;
}

// go-yaml's resolve() for an untagged plain scalar: the short tag only.
std::string ResolvePlain(const std::string& in) {
  if (IsNullText(in)) return "!!null";
  if (in == "true" || in == "True" || in == "TRUE" || in == "false" ||
      in == "False" || in == "FALSE") {
    return "!!bool";
  }
  static const char* const kSpecialFloats[] = {
      ".nan",  ".NaN",  ".NAN",  ".inf",  ".Inf",  ".INF",
      "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"};
  for (const char* f : kSpecialFloats) {
    if (in == f) return "!!float";
  }
  const char c = in[0];
  if (c == '.') return IsYamlFloat(in) ? "!!float" : "!!str";
  if (!(c == '+' || c == '-' || (c >= '0' && c <= '9'))) return "!!str";
  if (IsYamlTimestamp(in)) return "!!timestamp";
  const std::string plain = StripUnderscores(in);
  bool big = false;
  if (ParseGoInt(plain, &big) || big) return "!!int";
  if (IsYamlFloat(plain)) return "!!float";
  return "!!str";
}

}  // namespace

SourcePos PosOf(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  if (m.line < 0) return {};
  return {m.line + 1, m.column + 1};
}

std::string GoYamlDecoder::ShortTag(const YAML::Node& n) const {
  std::string tag = n.Tag();
  if (tag.rfind(kLongTagPrefix, 0) == 0) {
    return "!!" + tag.substr(kLongTagPrefix.size());
  }
  if (!tag.empty() && tag != "?" && tag != "!") return tag;
  if (n.IsSequence()) return "!!seq";
  if (n.IsMap()) return "!!map";
  if (n.IsNull()) return "!!null";
  if (tag == "!") return "!!str";  // quoted
  return ResolvePlain(n.Scalar());
}

void GoYamlDecoder::TypeMismatch(const YAML::Node& n, std::string_view type) {
  const std::string tag = ShortTag(n);
  std::string value;
  if (tag != "!!seq" && tag != "!!map") {
    std::string v = n.IsScalar() ? n.Scalar() : "";
    value = v.size() > 10 ? fmt::format(" `{}...`", v.substr(0, 7))
                          : fmt::format(" `{}`", v);
  }
  const SourcePos pos = PosOf(n);
  type_errors_.push_back(
      {pos, fmt::format("line {}: cannot unmarshal {}{} into {}", pos.line, tag,
                        value, type)});
}

bool GoYamlDecoder::CheckDuplicateKeys(const YAML::Node& n) {
  std::vector<std::pair<YAML::Node, YAML::Node>> pairs;
  for (auto it = n.begin(); it != n.end(); ++it)
    pairs.emplace_back(it->first, it->second);
  bool dup = false;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const YAML::Node& ki = pairs[i].first;
    for (size_t j = i + 1; j < pairs.size(); ++j) {
      const YAML::Node& kj = pairs[j].first;
      if (ki.Type() != kj.Type() || !ki.IsScalar() ||
          ki.Scalar() != kj.Scalar()) {
        continue;
      }
      const SourcePos pj = PosOf(kj);
      type_errors_.push_back(
          {pj, fmt::format("line {}: mapping key {} already defined at line {}",
                           pj.line, go::Quote(kj.Scalar()), PosOf(ki).line)});
      dup = true;
    }
  }
  return !dup;
}

std::optional<std::vector<Field>> GoYamlDecoder::Struct(
    const YAML::Node& n, std::string_view type,
    std::initializer_list<std::string_view> known) {
  std::vector<Field> fields;
  if (!n || n.IsNull()) return fields;
  if (!n.IsMap()) {
    TypeMismatch(n, type);
    return std::nullopt;
  }
  if (!yaml_v2_ && !CheckDuplicateKeys(n)) return std::nullopt;
  std::vector<YAML::Node> merges;
  AddFields(n, type, known, &fields, &merges);
  // "<<: *anchor" (or a list of them) adds the keys the mapping lacks.
  for (const YAML::Node& m : merges) {
    std::vector<YAML::Node> sources;
    if (m.IsSequence()) {
      for (auto it = m.begin(); it != m.end(); ++it) sources.push_back(*it);
    } else {
      sources.push_back(m);
    }
    for (const YAML::Node& src : sources) {
      if (!src.IsMap()) {
        Fail(PosOf(src),
             "map merge requires map or sequence of maps as the value");
        continue;
      }
      std::vector<YAML::Node> nested;  // merges inside merges are ignored
      std::vector<Field> extra;
      AddFields(src, type, known, &extra, &nested);
      for (Field& f : extra) {
        bool present = false;
        for (const Field& have : fields) present = present || have.key == f.key;
        if (!present) fields.push_back(std::move(f));
      }
    }
  }
  return fields;
}

void GoYamlDecoder::AddFields(const YAML::Node& n, std::string_view type,
                              std::initializer_list<std::string_view> known,
                              std::vector<Field>* fields,
                              std::vector<YAML::Node>* merges) {
  for (auto it = n.begin(); it != n.end(); ++it) {
    const YAML::Node k = it->first;  // a copy: `it->` is a temporary
    if (k.IsNull()) continue;  // go-yaml skips keys that decode to nothing
    if (!k.IsScalar()) {
      TypeMismatch(k, "string");
      continue;
    }
    const std::string& name = k.Scalar();
    if (name == "<<" && k.Tag() == "?") {
      merges->push_back(it->second);
      continue;
    }
    bool is_known = false;
    for (std::string_view f : known) is_known = is_known || f == name;
    bool repeated = false;
    for (const Field& f : *fields) repeated = repeated || f.key == name;
    if (is_known && repeated && yaml_v2_) {
      const SourcePos pos = PosOf(k);
      type_errors_.push_back(
          {pos, fmt::format("line {}: field {} already set in type {}",
                            pos.line, name, type)});
    } else if (is_known) {
      fields->push_back({name, k, it->second});
    } else if (known_fields_) {
      const SourcePos pos = PosOf(k);
      type_errors_.push_back(
          {pos, fmt::format("line {}: field {} not found in type {}", pos.line,
                            name, type)});
    }
  }
}

std::optional<std::vector<YAML::Node>> GoYamlDecoder::Sequence(
    const YAML::Node& n, std::string_view type) {
  std::vector<YAML::Node> items;
  if (!n || n.IsNull()) return items;
  if (!n.IsSequence()) {
    TypeMismatch(n, type);
    return std::nullopt;
  }
  for (auto it = n.begin(); it != n.end(); ++it) items.push_back(*it);
  return items;
}

bool GoYamlDecoder::String(const YAML::Node& n, std::string* out) {
  out->clear();
  if (!n || n.IsNull()) return true;
  if (!n.IsScalar()) {
    TypeMismatch(n, "string");
    return false;
  }
  *out = n.Scalar();
  return true;
}

bool GoYamlDecoder::StringMap(const YAML::Node& n, StringMapEntries* out) {
  out->clear();
  if (!n || n.IsNull()) return true;
  if (!n.IsMap()) {
    TypeMismatch(n, "map[string]string");
    return false;
  }
  if (!yaml_v2_ && !CheckDuplicateKeys(n)) return false;
  bool ok = true;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const YAML::Node k = it->first;  // a copy: `it->` is a temporary
    if (k.IsNull()) continue;
    if (!k.IsScalar()) {
      TypeMismatch(k, "string");
      ok = false;
      continue;
    }
    bool repeated = false;
    for (const auto& [f, v] : *out) repeated = repeated || f.key == k.Scalar();
    if (repeated) {  // only reachable in yaml.v2 mode
      const SourcePos pos = PosOf(k);
      type_errors_.push_back(
          {pos, fmt::format("line {}: key {} already set in map", pos.line,
                            go::Quote(k.Scalar()))});
      ok = false;
      continue;
    }
    std::string value;
    if (!String(it->second, &value)) {
      ok = false;
      continue;
    }
    out->push_back({Field{k.Scalar(), k, it->second}, std::move(value)});
  }
  return ok;
}

bool GoYamlDecoder::Int(const YAML::Node& n, int* out) {
  *out = 0;
  if (!n || n.IsNull()) return true;
  const std::string tag = n.IsScalar() ? ShortTag(n) : "";
  if (tag == "!!int") {
    if (auto v = ParseGoInt(StripUnderscores(n.Scalar()), nullptr)) {
      *out = static_cast<int>(*v);  // Go's int is 64-bit; ours 32 (limits)
      return true;
    }
  } else if (tag == "!!float") {
    const std::string s = n.Scalar();
    double d = std::strtod(StripUnderscores(s).c_str(), nullptr);
    if (s.find_first_of("nN") != std::string::npos) d = std::nan("");
    if (s.find_first_of("iI") != std::string::npos) {
      d = s[0] == '-' ? -HUGE_VAL : HUGE_VAL;
    }
    if (d <= 9.2233720368547758e18 && d >= -9.2233720368547758e18) {
      *out = static_cast<int>(static_cast<int64_t>(d));  // truncates as Go
      return true;
    }
  }
  TypeMismatch(n, "int");
  return false;
}

bool GoYamlDecoder::Duration(const YAML::Node& n, int64_t* out_ms) {
  *out_ms = 0;
  if (!n || n.IsNull()) return true;
  std::string s;
  if (!String(n, &s)) return false;
  auto d = ParsePromDuration(s);
  if (!d.ok()) {
    if (!fatal_)
      fatal_ = TypeError{PosOf(n), std::string(d.status().message())};
    return false;
  }
  *out_ms = *d;
  return true;
}

SourcePos GoYamlDecoder::ValuePos(const Field& f) const {
  const YAML::Mark vm = f.value.Mark();
  if (!f.value.IsNull() || vm.pos < 0) return PosOf(f.value);
  const size_t vpos = static_cast<size_t>(vm.pos);
  for (std::string_view lit : {"~", "null", "Null", "NULL"}) {
    if (source_.substr(vpos, lit.size()) == lit) return PosOf(f.value);
  }
  // Empty value: just after the key's colon.
  const YAML::Mark km = f.key_node.Mark();
  size_t i = static_cast<size_t>(km.pos);
  if (i < source_.size() && (source_[i] == '"' || source_[i] == '\'')) {
    const char q = source_[i];
    for (++i; i < source_.size() && source_[i] != q; ++i) {
      if (q == '"' && source_[i] == '\\') ++i;
    }
  }
  while (i < source_.size() && source_[i] != ':' && source_[i] != '\n') ++i;
  return {km.line + 1, km.column + static_cast<int>(i - km.pos) + 2};
}

namespace {

// Whether the quoted scalar opening at source[pos] is closed.
bool QuoteClosed(std::string_view source, size_t pos) {
  const char q = source[pos];
  for (size_t i = pos + 1; i < source.size(); ++i) {
    if (q == '"' && source[i] == '\\') {
      ++i;
    } else if (source[i] == q) {
      if (q == '\'' && i + 1 < source.size() && source[i + 1] == '\'') {
        ++i;  // '' is an escaped quote
        continue;
      }
      return true;
    }
  }
  return false;
}

void FindOpenQuote(std::string_view source, const YAML::Node& n,
                   std::set<int>* seen, std::optional<SourcePos>* found) {
  if (found->has_value() || !n.IsDefined()) return;
  const YAML::Mark m = n.Mark();
  if (m.pos >= 0 && !seen->insert(m.pos).second && !n.IsScalar()) return;
  if (n.IsScalar()) {
    const size_t pos = static_cast<size_t>(m.pos);
    if (n.Tag() == "!" && pos < source.size() &&
        (source[pos] == '"' || source[pos] == '\'') &&
        !QuoteClosed(source, pos)) {
      *found = PosOf(n);
    }
    return;
  }
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (n.IsMap()) {
      FindOpenQuote(source, it->first, seen, found);
      FindOpenQuote(source, it->second, seen, found);
    } else {
      FindOpenQuote(source, *it, seen, found);
    }
  }
}

}  // namespace

std::optional<SourcePos> FindUnterminatedQuote(std::string_view source,
                                               const YAML::Node& root) {
  std::set<int> seen;  // aliases share their anchor's mark: visit once
  std::optional<SourcePos> found;
  FindOpenQuote(source, root, &seen, &found);
  return found;
}

std::string UnmarshalErrorsText(std::vector<TypeError> errors) {
  // go-yaml reports in document order; we collect a mapping's unknown keys
  // before descending into its values, so restore that order.
  std::stable_sort(errors.begin(), errors.end(),
                   [](const TypeError& a, const TypeError& b) {
                     return std::pair(a.pos.line, a.pos.column) <
                            std::pair(b.pos.line, b.pos.column);
                   });
  std::string out = "yaml: unmarshal errors:";
  for (const auto& e : errors) out += "\n  " + e.text;
  return out;
}

SourcePos FirstPos(const std::vector<TypeError>& errors) {
  SourcePos best = errors.front().pos;
  for (const auto& e : errors) {
    if (std::pair(e.pos.line, e.pos.column) <
        std::pair(best.line, best.column)) {
      best = e.pos;
    }
  }
  return best;
}

absl::StatusOr<int64_t> ParsePromDuration(std::string_view s) {
  if (s.empty()) return absl::InvalidArgumentError("empty duration string");
  auto d = ParseDuration(s);
  if (!d.ok()) {
    if (d.status().code() == absl::StatusCode::kOutOfRange) {
      return absl::InvalidArgumentError("duration out of range");
    }
    return absl::InvalidArgumentError("not a valid duration string: " +
                                      go::Quote(s));
  }
  // model.Duration is a time.Duration: int64 nanoseconds.
  if (*d > std::numeric_limits<int64_t>::max() / 1000000) {
    return absl::InvalidArgumentError("duration out of range");
  }
  return *d;
}

}  // namespace vigil::goyaml
