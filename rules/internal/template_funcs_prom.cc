// Prometheus's template functions (prometheus/template/template.go) and the
// methods of the time values they return.
#include <algorithm>
#include <arpa/inet.h>
#include <cmath>
#include <memory>

#include "absl/status/status.h"
#include "core/strutil.h"
#include "fmt/format.h"
#include "re2/re2.h"
#include "rules/internal/go_fmt.h"
#include "rules/internal/humanize.h"
#include "rules/internal/template_funcs.h"
#include "rules/internal/template_text.h"

namespace vigil::rules::internal {

namespace {

using absl::InvalidArgumentError;
using P = ParamType;

FuncDef Def(std::vector<P> params, FuncImpl impl) {
  return FuncDef{std::move(params), false, std::move(impl)};
}

// Go's regexp quote(): backquoted when possible.
std::string RegexpQuote(std::string_view s) {
  bool can_backquote = s.find('`') == std::string_view::npos;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) < ' ' && c != '\t') || c == 0x7f) can_backquote = false;
  }
  return can_backquote ? "`" + std::string(s) + "`" : GoQuote(s);
}

// Compiles with Go regexp syntax; errors read like Go's regexp/syntax.
absl::StatusOr<std::unique_ptr<RE2>> CompileRegexp(std::string_view pattern) {
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_unique<RE2>(std::string(pattern), opts);
  if (re->ok()) return re;
  const char* code = "invalid regexp";
  switch (re->error_code()) {
    case RE2::ErrorBadEscape: code = "invalid escape sequence"; break;
    case RE2::ErrorBadCharClass: code = "invalid character class"; break;
    case RE2::ErrorBadCharRange: code = "invalid character class range"; break;
    case RE2::ErrorMissingBracket: code = "missing closing ]"; break;
    case RE2::ErrorMissingParen: code = "missing closing )"; break;
    case RE2::ErrorUnexpectedParen: code = "unexpected )"; break;
    case RE2::ErrorTrailingBackslash: code = "trailing backslash at end of expression"; break;
    case RE2::ErrorRepeatArgument: code = "missing argument to repetition operator"; break;
    case RE2::ErrorRepeatSize: code = "invalid repeat count"; break;
    case RE2::ErrorRepeatOp: code = "invalid nested repetition operator"; break;
    case RE2::ErrorBadPerlOp: code = "invalid or unsupported Perl syntax"; break;
    case RE2::ErrorBadUTF8: code = "invalid UTF-8"; break;
    case RE2::ErrorBadNamedCapture: code = "invalid named capture"; break;
    case RE2::ErrorPatternTooLarge: code = "expression too large"; break;
    default: break;
  }
  return InvalidArgumentError(
      fmt::format("error parsing regexp: {}: `{}`", code, re->error_arg()));
}

// Go's Regexp.expand: $1, ${1}, $name, ${name}, $$.
void Expand(const RE2& re, std::string_view tmpl, const std::vector<re2::StringPiece>& groups,
            std::string* dst) {
  while (!tmpl.empty()) {
    size_t dollar = tmpl.find('$');
    if (dollar == std::string_view::npos) break;
    dst->append(tmpl.substr(0, dollar));
    tmpl = tmpl.substr(dollar + 1);
    if (!tmpl.empty() && tmpl[0] == '$') {
      dst->push_back('$');
      tmpl = tmpl.substr(1);
      continue;
    }
    std::string_view str = tmpl;
    bool brace = !str.empty() && str[0] == '{';
    if (brace) str = str.substr(1);
    size_t i = 0;
    while (i < str.size()) {
      uint32_t r;
      size_t n = DecodeRuneLenient(str, i, &r);
      if (!IsAlphaNumericRune(static_cast<int>(r))) break;
      i += n;
    }
    bool ok = i > 0 && (!brace || (i < str.size() && str[i] == '}'));
    if (!ok) {
      dst->push_back('$');
      continue;
    }
    std::string name(str.substr(0, i));
    tmpl = str.substr(i + (brace ? 1 : 0));
    int num = 0;
    for (char c : name) {
      if (c < '0' || c > '9' || num >= 100000000) {
        num = -1;
        break;
      }
      num = num * 10 + (c - '0');
    }
    if (name[0] == '0' && name.size() > 1) num = -1;
    if (num < 0) {
      auto it = re.NamedCapturingGroups().find(name);
      num = it == re.NamedCapturingGroups().end() ? -1 : it->second;
      if (num < 0) continue;
    }
    if (static_cast<size_t>(num) < groups.size() && groups[num].data() != nullptr) {
      dst->append(groups[num].data(), groups[num].size());
    }
  }
  dst->append(tmpl);
}

// Regexp.ReplaceAllString.
std::string ReplaceAll(const RE2& re, std::string_view src, std::string_view repl) {
  std::string out;
  size_t ngroups = static_cast<size_t>(re.NumberOfCapturingGroups()) + 1;
  std::vector<re2::StringPiece> groups(ngroups);
  re2::StringPiece text(src.data(), src.size());
  size_t last_match_end = 0;
  size_t search_pos = 0;
  bool have_prev = false;
  while (search_pos <= src.size()) {
    if (!re.Match(text, search_pos, src.size(), RE2::UNANCHORED, groups.data(),
                  static_cast<int>(ngroups))) {
      break;
    }
    size_t a = static_cast<size_t>(groups[0].data() - src.data());
    size_t b = a + groups[0].size();
    out.append(src.substr(last_match_end, a - last_match_end));
    // Empty matches abutting a preceding match are ignored.
    if (b > a || a == 0 || !have_prev || a != last_match_end) {
      Expand(re, repl, groups, &out);
    }
    have_prev = true;
    last_match_end = b;
    if (b > search_pos) {
      search_pos = b;
    } else {
      uint32_t r;
      search_pos += search_pos < src.size() ? DecodeRuneLenient(src, search_pos, &r) : 1;
    }
  }
  if (last_match_end < src.size()) out.append(src.substr(last_match_end));
  return out;
}

std::string MapRunes(std::string_view s, uint32_t (*f)(uint32_t)) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    uint32_t r;
    i += DecodeRuneLenient(s, i, &r);
    AppendRune(&out, f(r));
  }
  return out;
}

// cases.Title(language.AmericanEnglish, cases.NoLower): the first letter of
// each word upper-cased, the rest untouched.
std::string Title(std::string_view s) {
  std::string out;
  bool in_word = false;
  for (size_t i = 0; i < s.size();) {
    uint32_t r;
    i += DecodeRuneLenient(s, i, &r);
    bool word = IsAlphaNumericRune(static_cast<int>(r));
    if (word && !in_word) {
      AppendRune(&out, ToUpperRune(r));
      in_word = true;
      continue;
    }
    in_word = word;
    AppendRune(&out, r);
  }
  return out;
}

// net.SplitHostPort; false on error.
bool SplitHostPort(std::string_view hp, std::string* host, std::string* port) {
  size_t i = hp.rfind(':');
  if (i == std::string_view::npos) return false;
  size_t j = 0, k = 0;
  if (!hp.empty() && hp[0] == '[') {
    size_t end = hp.find(']');
    if (end == std::string_view::npos) return false;
    if (end + 1 == hp.size() || end + 1 != i) return false;
    *host = std::string(hp.substr(1, end - 1));
    j = 1;
    k = end + 1;
  } else {
    *host = std::string(hp.substr(0, i));
    if (host->find(':') != std::string::npos) return false;
  }
  if (hp.substr(j).find('[') != std::string_view::npos) return false;
  if (hp.substr(k).find(']') != std::string_view::npos) return false;
  *port = std::string(hp.substr(i + 1));
  return true;
}

bool IsIP(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

std::string StripDomain(std::string_view hp) {
  std::string host, port;
  if (!SplitHostPort(hp, &host, &port)) {
    host = std::string(hp);
    port.clear();
  }
  if (IsIP(host)) return std::string(hp);
  host = host.substr(0, host.find('.'));
  if (port.empty()) return host;
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + port;
  return host + ":" + port;
}

std::string PathPrefix(std::string_view url) {
  size_t scheme = url.find("://");
  std::string_view rest = scheme == std::string_view::npos ? url : url.substr(scheme + 3);
  if (scheme != std::string_view::npos) {
    size_t slash = rest.find_first_of("/?#");
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  }
  return std::string(rest.substr(0, rest.find_first_of("?#")));
}

absl::StatusOr<Value> RuntimeNilError() {
  return InvalidArgumentError("runtime error: invalid memory address or nil pointer dereference");
}

using Fn = absl::StatusOr<Value> (*)(const FuncEnv&, std::vector<Value>&);

template <typename F>
FuncImpl Float1(F f) {  // (i interface{}) (string, error) over ConvertToFloat
  return [f](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    absl::StatusOr<double> v = ConvertToFloat(a[0]);
    if (!v.ok()) return v.status();
    return f(*v);
  };
}

absl::StatusOr<Value> Query(const FuncEnv& env, std::vector<Value>& a) {
  if (env.query == nullptr || !*env.query) return InvalidArgumentError("no query function");
  absl::StatusOr<std::vector<QueryResultSample>> res = (*env.query)(a[0].s);
  if (!res.ok()) return InvalidArgumentError(std::string(res.status().message()));
  auto list = std::make_shared<SampleList>();
  for (const QueryResultSample& s : *res) {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const Label& l : s.labels) pairs.emplace_back(l.name, l.value);
    auto sample = std::make_shared<SampleData>();
    sample->labels = StringMap(std::move(pairs)).map;
    sample->value = s.value;
    list->push_back(std::move(sample));
  }
  return Value::Slice(std::move(list));
}

std::string LabelOf(const SampleData& s, const std::string& name) {
  const Value* v = s.labels ? s.labels->Find(name) : nullptr;
  return v != nullptr ? v->s : "";
}

}  // namespace

absl::StatusOr<double> ConvertToFloat(const Value& v) {
  switch (v.kind) {
    case Kind::kFloat: return v.f;
    case Kind::kInt: return static_cast<double>(v.i);
    case Kind::kString:
      if (!v.html) return GoParseFloat(v.s);
      break;
    case Kind::kDuration:
      if (v.not_ptr) return static_cast<double>(v.i) / 1e9;
      break;
    default: break;
  }
  return InvalidArgumentError(fmt::format("can't convert {} to float", TypeName(v)));
}

void AddPrometheusFuncs(std::vector<std::pair<std::string, FuncDef>>* out) {
  auto add = [out](const char* name, std::vector<P> params, FuncImpl impl) {
    out->emplace_back(name, Def(std::move(params), std::move(impl)));
  };
  add("query", {P::kString}, Query);
  add("first", {P::kQueryResult}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    if (a[0].slice && !a[0].slice->empty()) return Value::Sample((*a[0].slice)[0]);
    return InvalidArgumentError("first() called on vector with no elements");
  });
  add("label", {P::kString, P::kSamplePtr}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    if (a[1].nil_ptr) return RuntimeNilError();
    return Value::String(LabelOf(*a[1].sample, a[0].s));
  });
  add("value", {P::kSamplePtr}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    if (a[0].nil_ptr) return RuntimeNilError();
    return Value::Float(a[0].sample->value);
  });
  add("strvalue", {P::kSamplePtr}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    if (a[0].nil_ptr) return RuntimeNilError();
    return Value::String(LabelOf(*a[0].sample, "__value__"));
  });
  add("sortByLabel", {P::kString, P::kQueryResult}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    auto list = std::make_shared<SampleList>(a[1].slice ? *a[1].slice : SampleList());
    const std::string& by = a[0].s;
    std::stable_sort(list->begin(), list->end(), [&](const auto& x, const auto& y) {
      return LabelOf(*x, by) < LabelOf(*y, by);
    });
    return Value::Slice(std::move(list));
  });
  out->emplace_back("args", FuncDef{{P::kAny}, true, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    auto m = std::make_shared<MapData>();
    m->string_elems = false;
    for (size_t i = 0; i < a.size(); ++i) m->entries.emplace_back(fmt::format("arg{}", i), a[i]);
    std::sort(m->entries.begin(), m->entries.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    return Value::Map(std::move(m));
  }});
  add("reReplaceAll", {P::kString, P::kString, P::kString}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    absl::StatusOr<std::unique_ptr<RE2>> re = CompileRegexp(a[0].s);
    if (!re.ok()) {
      return InvalidArgumentError(fmt::format("regexp: Compile({}): {}", RegexpQuote(a[0].s),
                                              std::string(re.status().message())));
    }
    return Value::String(ReplaceAll(**re, a[2].s, a[1].s));
  });
  add("match", {P::kString, P::kString}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    absl::StatusOr<std::unique_ptr<RE2>> re = CompileRegexp(a[0].s);
    if (!re.ok()) return re.status();
    return Value::Bool(RE2::PartialMatch(a[1].s, **re));
  });
  add("safeHtml", {P::kString}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    return Value::Html(a[0].s);
  });
  add("title", {P::kString}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    return Value::String(Title(a[0].s));
  });
  add("toUpper", {P::kString}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    return Value::String(MapRunes(a[0].s, ToUpperRune));
  });
  add("toLower", {P::kString}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    return Value::String(MapRunes(a[0].s, ToLowerRune));
  });
  add("graphLink", {P::kString}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    return Value::String("/graph?g0.expr=" + UrlQueryEscape(a[0].s) + "&g0.tab=0");
  });
  add("tableLink", {P::kString}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    return Value::String("/graph?g0.expr=" + UrlQueryEscape(a[0].s) + "&g0.tab=1");
  });
  add("stripPort", {P::kString}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    std::string host, port;
    return Value::String(SplitHostPort(a[0].s, &host, &port) ? host : a[0].s);
  });
  add("stripDomain", {P::kString}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    return Value::String(StripDomain(a[0].s));
  });
  add("humanize", {P::kAny}, Float1([](double v) -> absl::StatusOr<Value> { return Value::String(Humanize(v)); }));
  add("humanize1024", {P::kAny}, Float1([](double v) -> absl::StatusOr<Value> { return Value::String(Humanize1024(v)); }));
  add("humanizeDuration", {P::kAny}, Float1([](double v) -> absl::StatusOr<Value> { return Value::String(HumanizeDuration(v)); }));
  add("humanizePercentage", {P::kAny}, Float1([](double v) -> absl::StatusOr<Value> { return Value::String(HumanizePercentage(v)); }));
  add("humanizeTimestamp", {P::kAny}, Float1([](double v) -> absl::StatusOr<Value> {
    absl::StatusOr<std::string> s = HumanizeTimestamp(v);
    if (!s.ok()) return s.status();
    return Value::String(*s);
  }));
  add("toTime", {P::kAny}, Float1([](double v) -> absl::StatusOr<Value> {
    int64_t sec;
    int32_t nsec;
    absl::Status st = FloatToTime(v, &sec, &nsec);
    if (!st.ok()) return st;
    return Value::Time(sec, nsec);
  }));
  add("toDuration", {P::kAny}, Float1([](double v) -> absl::StatusOr<Value> {
    double ns = v * 1e9;
    int64_t d = (std::isnan(ns) || ns >= 9223372036854775807.0 || ns < -9223372036854775808.0)
                    ? INT64_MIN
                    : static_cast<int64_t>(ns);
    return Value::Duration(d);
  }));
  add("now", {}, [](const FuncEnv& env, std::vector<Value>&) -> absl::StatusOr<Value> {
    return Value::Float(static_cast<double>(env.now_ms) / 1000.0);
  });
  add("pathPrefix", {}, [](const FuncEnv& env, std::vector<Value>&) -> absl::StatusOr<Value> {
    return Value::String(PathPrefix(env.external_url));
  });
  add("externalURL", {}, [](const FuncEnv& env, std::vector<Value>&) -> absl::StatusOr<Value> {
    return Value::String(std::string(env.external_url));
  });
  add("parseDuration", {P::kString}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    absl::StatusOr<double> d = ParseDurationSeconds(a[0].s);
    if (!d.ok()) return d.status();
    return Value::Float(*d);
  });
  add("urlQueryEscape", {P::kString}, [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    return Value::String(UrlQueryEscape(a[0].s));
  });
}

}  // namespace vigil::rules::internal
