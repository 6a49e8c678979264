// Prometheus's template functions (prometheus/template/template.go) and the
// methods of the time values they return.
#include <arpa/inet.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/status/status.h"
#include "core/go/strconv.h"
#include "core/go/utf8.h"
#include "core/time.h"
#include "fmt/format.h"
#include "rules/template/humanize.h"
#include "rules/template/text/fmt_print.h"
#include "rules/template/text/funcs.h"
#include "rules/template/text/unicode.h"

namespace vigil::rules::tmpl {

namespace {

using absl::InvalidArgumentError;
using P = ParamType;

FuncDef Def(std::vector<P> params, FuncImpl impl) {
  return FuncDef{std::move(params), false, std::move(impl)};
}

std::string MapRunes(std::string_view s, uint32_t (*f)(uint32_t)) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    uint32_t r;
    i += go::DecodeRune(s, i, &r);
    go::AppendRune(&out, f(r));
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
    i += go::DecodeRune(s, i, &r);
    bool word = IsAlphaNumericRune(static_cast<int>(r));
    if (word && !in_word) {
      go::AppendRune(&out, ToTitleRune(r));
      in_word = true;
      continue;
    }
    in_word = word;
    go::AppendRune(&out, r);
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
  return inet_pton(AF_INET, s.c_str(), buf) == 1 ||
         inet_pton(AF_INET6, s.c_str(), buf) == 1;
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
  std::string_view rest =
      scheme == std::string_view::npos ? url : url.substr(scheme + 3);
  if (scheme != std::string_view::npos) {
    size_t slash = rest.find_first_of("/?#");
    rest = slash == std::string_view::npos ? std::string_view()
                                           : rest.substr(slash);
  }
  return std::string(rest.substr(0, rest.find_first_of("?#")));
}

absl::StatusOr<Value> RuntimeNilError() {
  return InvalidArgumentError(
      "runtime error: invalid memory address or nil pointer dereference");
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
  if (env.query == nullptr || !*env.query)
    return InvalidArgumentError("no query function");
  absl::StatusOr<std::vector<QueryResultSample>> res = (*env.query)(a[0].s);
  if (!res.ok())
    return InvalidArgumentError(std::string(res.status().message()));
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
    case Kind::kFloat:
      return v.f;
    case Kind::kInt:
      return static_cast<double>(v.i);
    case Kind::kString:
      if (!v.html) return go::ParseFloat(v.s);
      break;
    case Kind::kDuration:
      if (v.not_ptr) return static_cast<double>(v.i) / 1e9;
      break;
    default:
      break;
  }
  return InvalidArgumentError(
      fmt::format("can't convert {} to float", TypeName(v)));
}

namespace {

void AddQueryFuncs(std::vector<std::pair<std::string, FuncDef>>* out) {
  auto add = [out](const char* name, std::vector<P> params, FuncImpl impl) {
    out->emplace_back(name, Def(std::move(params), std::move(impl)));
  };
  add("query", {P::kString}, Query);
  add("first", {P::kQueryResult},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        if (a[0].slice && !a[0].slice->empty())
          return Value::Sample((*a[0].slice)[0]);
        return InvalidArgumentError(
            "first() called on vector with no elements");
      });
  add("label", {P::kString, P::kSamplePtr},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        if (a[1].nil_ptr) return RuntimeNilError();
        return Value::String(LabelOf(*a[1].sample, a[0].s));
      });
  add("value", {P::kSamplePtr},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        if (a[0].nil_ptr) return RuntimeNilError();
        return Value::Float(a[0].sample->value);
      });
  add("strvalue", {P::kSamplePtr},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        if (a[0].nil_ptr) return RuntimeNilError();
        return Value::String(LabelOf(*a[0].sample, "__value__"));
      });
  add("sortByLabel", {P::kString, P::kQueryResult},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        auto list = std::make_shared<SampleList>(a[1].slice ? *a[1].slice
                                                            : SampleList());
        const std::string& by = a[0].s;
        std::stable_sort(list->begin(), list->end(),
                         [&](const auto& x, const auto& y) {
                           return LabelOf(*x, by) < LabelOf(*y, by);
                         });
        return Value::Slice(std::move(list));
      });
  out->emplace_back(
      "args",
      FuncDef{
          {P::kAny},
          true,
          [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
            auto m = std::make_shared<MapData>();
            m->string_elems = false;
            for (size_t i = 0; i < a.size(); ++i)
              m->entries.emplace_back(fmt::format("arg{}", i), a[i]);
            std::sort(
                m->entries.begin(), m->entries.end(),
                [](const auto& x, const auto& y) { return x.first < y.first; });
            return Value::Map(std::move(m));
          }});
}

void AddStringFuncs(std::vector<std::pair<std::string, FuncDef>>* out) {
  auto add = [out](const char* name, std::vector<P> params, FuncImpl impl) {
    out->emplace_back(name, Def(std::move(params), std::move(impl)));
  };
  add("reReplaceAll", {P::kString, P::kString, P::kString},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        absl::StatusOr<std::string> r =
            GoRegexpReplaceAll(a[0].s, a[1].s, a[2].s);
        if (!r.ok()) return r.status();
        return Value::String(std::move(*r));
      });
  add("match", {P::kString, P::kString},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        absl::StatusOr<bool> r = GoRegexpMatch(a[0].s, a[1].s);
        if (!r.ok()) return r.status();
        return Value::Bool(*r);
      });
  add("safeHtml", {P::kString},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        return Value::Html(a[0].s);
      });
  add("title", {P::kString},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        return Value::String(Title(a[0].s));
      });
  add("toUpper", {P::kString},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        return Value::String(MapRunes(a[0].s, ToUpperRune));
      });
  add("toLower", {P::kString},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        return Value::String(MapRunes(a[0].s, ToLowerRune));
      });
  add("graphLink", {P::kString},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        return Value::String("/graph?g0.expr=" + UrlQueryEscape(a[0].s) +
                             "&g0.tab=0");
      });
  add("tableLink", {P::kString},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        return Value::String("/graph?g0.expr=" + UrlQueryEscape(a[0].s) +
                             "&g0.tab=1");
      });
  add("stripPort", {P::kString},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        std::string host, port;
        return Value::String(SplitHostPort(a[0].s, &host, &port) ? host
                                                                 : a[0].s);
      });
  add("stripDomain", {P::kString},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        return Value::String(StripDomain(a[0].s));
      });
}

void AddNumberAndTimeFuncs(std::vector<std::pair<std::string, FuncDef>>* out) {
  auto add = [out](const char* name, std::vector<P> params, FuncImpl impl) {
    out->emplace_back(name, Def(std::move(params), std::move(impl)));
  };
  add("humanize", {P::kAny}, Float1([](double v) -> absl::StatusOr<Value> {
        return Value::String(Humanize(v));
      }));
  add("humanize1024", {P::kAny}, Float1([](double v) -> absl::StatusOr<Value> {
        return Value::String(Humanize1024(v));
      }));
  add("humanizeDuration", {P::kAny},
      Float1([](double v) -> absl::StatusOr<Value> {
        return Value::String(HumanizeDuration(v));
      }));
  add("humanizePercentage", {P::kAny},
      Float1([](double v) -> absl::StatusOr<Value> {
        return Value::String(HumanizePercentage(v));
      }));
  add("humanizeTimestamp", {P::kAny},
      Float1([](double v) -> absl::StatusOr<Value> {
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
        int64_t d = (std::isnan(ns) || ns >= 9223372036854775807.0 ||
                     ns < -9223372036854775808.0)
                        ? INT64_MIN
                        : static_cast<int64_t>(ns);
        return Value::Duration(d);
      }));
  add("now", {},
      [](const FuncEnv& env, std::vector<Value>&) -> absl::StatusOr<Value> {
        return Value::Float(static_cast<double>(env.now_ms) / 1000.0);
      });
  add("pathPrefix", {},
      [](const FuncEnv& env, std::vector<Value>&) -> absl::StatusOr<Value> {
        return Value::String(PathPrefix(env.external_url));
      });
  add("externalURL", {},
      [](const FuncEnv& env, std::vector<Value>&) -> absl::StatusOr<Value> {
        return Value::String(std::string(env.external_url));
      });
  add("parseDuration", {P::kString},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        absl::StatusOr<int64_t> ms = ParseDurationAllowNegative(a[0].s);
        if (!ms.ok()) return ms.status();
        // As Prometheus: float64 nanoseconds over 1e9 (not ms / 1e3, which
        // can round differently beyond 2^53 ns).
        return Value::Float(static_cast<double>(*ms * 1000000) / 1e9);
      });
  add("urlQueryEscape", {P::kString},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        return Value::String(UrlQueryEscape(a[0].s));
      });
}

}  // namespace

void AddPrometheusFuncs(std::vector<std::pair<std::string, FuncDef>>* out) {
  AddQueryFuncs(out);
  AddStringFuncs(out);
  AddNumberAndTimeFuncs(out);
}

}  // namespace vigil::rules::tmpl
