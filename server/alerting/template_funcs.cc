// Alertmanager's notification template functions (template.DefaultFuncs):
// 0.25's toUpper, toLower, title, join, match, reReplaceAll, safeHtml,
// stringSlice, and the later trimSpace (0.26), date, tz, since and
// humanizeDuration (0.28).
#include <string>
#include <vector>

#include "core/go/utf8.h"
#include "rules/template/text/unicode.h"
#include "rules/template/time_zone.h"
#include "server/alerting/template_data.h"

namespace vigil::alerting {

namespace {

namespace tmpl = rules::tmpl;
using tmpl::FuncDef;
using tmpl::FuncEnv;
using tmpl::Value;
using P = tmpl::ParamType;

FuncDef Def(std::vector<P> params, tmpl::FuncImpl impl, bool variadic = false) {
  return FuncDef{std::move(params), variadic, std::move(impl)};
}

// unicode.IsSpace.
bool IsSpaceRune(uint32_t r) {
  switch (r) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return r >= 0x2000 && r <= 0x200A;
  }
}

// strings.TrimSpace.
std::string TrimSpace(std::string_view s) {
  size_t begin = 0;
  while (begin < s.size()) {
    uint32_t r;
    size_t w = go::DecodeRune(s, begin, &r);
    if (!IsSpaceRune(r) || go::IsRuneError(r, w)) break;
    begin += w;
  }
  size_t end = s.size();
  while (end > begin) {
    size_t start = end - 1;  // back up to the rune's first byte
    while (start > begin &&
           (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80)
      --start;
    uint32_t r;
    size_t w = go::DecodeRune(s, start, &r);
    if (start + w != end || !IsSpaceRune(r)) break;
    end = start;
  }
  return std::string(s.substr(begin, end - begin));
}

// cases.Title(language.AmericanEnglish).String: in each word the first
// letter is title-cased and the others lower-cased ("1st" becomes "1St", as
// there). Words are runs of letters, digits and '_'; '.', ':' and
// apostrophes between two letters or digits stay inside the word ("a.b" is
// one word, "x-y" two). An approximation of the Unicode word breaking
// x/text uses.
std::string Title(std::string_view s) {
  std::string out;
  bool in_word = false, titled = false;
  uint32_t prev = 0;
  for (size_t i = 0; i < s.size();) {
    uint32_t r;
    i += go::DecodeRune(s, i, &r);
    bool word = tmpl::IsAlphaNumericRune(static_cast<int>(r));
    if (!word && in_word && i < s.size() &&
        (r == '.' || r == ':' || r == '\'' || r == 0x2019)) {
      uint32_t next;
      go::DecodeRune(s, i, &next);
      word = tmpl::IsAlphaNumericRune(static_cast<int>(next)) &&
             tmpl::IsAlphaNumericRune(static_cast<int>(prev));
    }
    if (!word) {
      in_word = titled = false;
      go::AppendRune(&out, r);
    } else {
      in_word = true;
      if (!titled && tmpl::IsLetterRune(static_cast<int>(r))) {
        go::AppendRune(&out, tmpl::ToTitleRune(r));
        titled = true;
      } else {
        go::AppendRune(&out, tmpl::ToLowerRune(r));
      }
    }
    prev = r;
  }
  return out;
}

FuncDef Reuse(std::string_view prometheus_name) {
  return *tmpl::LookupFunction(prometheus_name);
}

tmpl::FuncTable* Build() {
  auto* t = new tmpl::FuncTable;
  auto& f = t->funcs;
  // Same Go functions as Prometheus's of the same name.
  for (const char* name :
       {"toUpper", "toLower", "match", "reReplaceAll", "safeHtml"}) {
    f[name] = Reuse(name);
  }
  f["title"] =
      Def({P::kString},
          [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
            return Value::String(Title(a[0].s));
          });
  f["trimSpace"] =
      Def({P::kString},
          [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
            return Value::String(TrimSpace(a[0].s));
          });
  f["join"] =
      Def({P::kString, P::kStringSlice},
          [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
            std::string out;
            for (size_t i = 0; i < a[1].list->elems.size(); ++i) {
              if (i > 0) out += a[0].s;
              out += a[1].list->elems[i].s;
            }
            return Value::String(std::move(out));
          });
  f["stringSlice"] = Def(
      {P::kString},
      [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        std::vector<std::string> elems;
        for (Value& v : a) elems.push_back(std::move(v.s));
        return tmpl::StringList(std::move(elems));
      },
      /*variadic=*/true);
  f["date"] =
      Def({P::kString, P::kTime},
          [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
            return Value::String(tmpl::FormatTimeValue(a[1], a[0].s));
          });
  f["tz"] =
      Def({P::kString, P::kTime},
          [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
            return tmpl::TimeIn(a[1], a[0].s);
          });
  // time.Since, as of the notification's time rather than the wall clock.
  f["since"] = Def(
      {P::kTime},
      [](const FuncEnv& env, std::vector<Value>& a) -> absl::StatusOr<Value> {
        int64_t now_sec = env.now_ms / 1000;
        int64_t now_nsec = (env.now_ms % 1000) * 1000000;
        Value d = Value::Duration((now_sec - a[0].i) * 1000000000 +
                                  (now_nsec - a[0].nsec));
        d.not_ptr = true;
        return d;
      });
  // prometheus/common's HumanizeDuration: seconds as a number, a string or
  // a time.Duration ({{ since .StartsAt | humanizeDuration }}).
  f["humanizeDuration"] = Reuse("humanizeDuration");
  return t;
}

}  // namespace

const tmpl::FuncTable& AlertmanagerFuncs() {
  static const tmpl::FuncTable* table = Build();
  return *table;
}

}  // namespace vigil::alerting
