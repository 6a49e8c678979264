#include "server/web/api/v2/requests.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <cctype>

#include "core/go/strconv.h"
#include "core/go/utf8.h"
#include "fmt/format.h"
#include "server/web/api/v2/datetime.h"

namespace vigil::web::api::v2 {
namespace {

using Value = rapidjson::Value;

// A decoding failure of Go's encoding/json (or of strfmt.DateTime), before
// go-openapi wraps it.
struct JsonFailure {
  std::string message;
};

std::string_view GoKind(const Value& v) {
  if (v.IsObject()) return "object";
  if (v.IsArray()) return "array";
  if (v.IsString()) return "string";
  if (v.IsBool()) return "bool";
  return "number";
}

// `json: cannot unmarshal number into Go struct field Alert.labels of type
// string`.
JsonFailure TypeError(const Value& v, std::string_view field,
                      std::string_view type) {
  return {
      fmt::format("json: cannot unmarshal {} into Go struct field {} of "
                  "type {}",
                  GoKind(v), field, type)};
}

// Go decodes invalid UTF-8 in strings as U+FFFD.
std::string Str(const Value& v) {
  std::string_view s(v.GetString(), v.GetStringLength());
  if (go::ValidString(s)) return std::string(s);
  std::string out;
  for (size_t i = 0; i < s.size();) {
    uint32_t r = 0;
    size_t w = go::DecodeRune(s, i, &r);
    go::AppendRune(&out, r);
    i += w == 0 ? 1 : w;
  }
  return out;
}

bool KeyIs(const Value& key, std::string_view name) {
  std::string_view k(key.GetString(), key.GetStringLength());
  return k.size() == name.size() &&
         std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) ==
                  std::tolower(static_cast<unsigned char>(b));
         });
}

// The last member matching `name` (Go: the last duplicate wins), null
// counted as absent.
const Value* Field(const Value& obj, std::string_view name) {
  const Value* found = nullptr;
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
    if (KeyIs(it->name, name)) found = &it->value;
  }
  return found != nullptr && found->IsNull() ? nullptr : found;
}

// A LabelSet (map[string]string); *present says whether it was given.
std::optional<JsonFailure> LabelSet(
    const Value& obj, std::string_view key, std::string_view field,
    std::vector<std::pair<std::string, std::string>>* out, bool* present) {
  const Value* v = Field(obj, key);
  *present = v != nullptr;
  if (v == nullptr) return std::nullopt;
  if (!v->IsObject()) return TypeError(*v, field, "models.LabelSet");
  for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
    if (it->value.IsNull()) continue;
    if (!it->value.IsString()) return TypeError(it->value, field, "string");
    std::string name = Str(it->name);
    std::string value = Str(it->value);
    auto same = std::find_if(out->begin(), out->end(),
                             [&](const auto& p) { return p.first == name; });
    if (same != out->end()) {
      same->second = std::move(value);
    } else {
      out->emplace_back(std::move(name), std::move(value));
    }
  }
  return std::nullopt;
}

std::optional<JsonFailure> String(const Value& obj, std::string_view key,
                                  std::string_view field, std::string* out,
                                  bool* present = nullptr) {
  const Value* v = Field(obj, key);
  if (present != nullptr) *present = v != nullptr;
  if (v == nullptr) return std::nullopt;
  if (!v->IsString()) return TypeError(*v, field, "string");
  *out = Str(*v);
  return std::nullopt;
}

std::optional<JsonFailure> Bool(const Value& obj, std::string_view key,
                                std::string_view field, bool* out,
                                bool* present) {
  const Value* v = Field(obj, key);
  *present = v != nullptr;
  if (v == nullptr) return std::nullopt;
  if (!v->IsBool()) return TypeError(*v, field, "bool");
  *out = v->GetBool();
  return std::nullopt;
}

std::optional<JsonFailure> Time(const Value& obj, std::string_view key,
                                std::string_view field, Timestamp* out,
                                bool* present) {
  const Value* v = Field(obj, key);
  *present = v != nullptr;
  if (v == nullptr) return std::nullopt;
  if (!v->IsString()) return TypeError(*v, field, "string");
  std::string s = Str(*v);
  if (s.empty()) return std::nullopt;  // strfmt: "" is the zero time
  auto t = ParseDateTime(s);
  if (!t.ok()) return JsonFailure{std::string(t.status().message())};
  *out = *t;
  return std::nullopt;
}

// Go's quoteChar for a syntax error's character.
std::string QuoteChar(char c) {
  if (c == '\'') return "'\\''";
  if (c == '"') return "'\"'";
  std::string q = go::Quote(std::string_view(&c, 1));
  return "'" + q.substr(1, q.size() - 2) + "'";
}

// The JSON syntax error in Go's words: "unexpected EOF", "invalid
// character 'b' looking for beginning of object key string".
std::string SyntaxError(const rapidjson::Document& d, std::string_view body) {
  const size_t at = d.GetErrorOffset();
  if (at >= body.size()) return "unexpected EOF";
  std::string_view where;
  switch (d.GetParseError()) {
    case rapidjson::kParseErrorObjectMissName:
      where = "looking for beginning of object key string";
      break;
    case rapidjson::kParseErrorObjectMissColon:
      where = "after object key";
      break;
    case rapidjson::kParseErrorObjectMissCommaOrCurlyBracket:
      where = "after object key:value pair";
      break;
    case rapidjson::kParseErrorArrayMissCommaOrSquareBracket:
      where = "after array element";
      break;
    case rapidjson::kParseErrorStringEscapeInvalid:
    case rapidjson::kParseErrorStringUnicodeEscapeInvalidHex:
    case rapidjson::kParseErrorStringUnicodeSurrogateInvalid:
      where = "in string escape code";
      break;
    case rapidjson::kParseErrorStringInvalidEncoding:
    case rapidjson::kParseErrorStringMissQuotationMark:
      where = "in string literal";
      break;
    case rapidjson::kParseErrorNumberMissFraction:
    case rapidjson::kParseErrorNumberMissExponent:
      where = "in numeric literal";
      break;
    default:
      where = "looking for beginning of value";
  }
  return fmt::format("invalid character {} {}", QuoteChar(body[at]), where);
}

bool Blank(std::string_view body) {
  return std::all_of(body.begin(), body.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  });
}

// Parses `body`; on failure stores go-openapi's 400 for `what` in *err.
bool Parse(std::string_view body, std::string_view what, rapidjson::Document* d,
           std::optional<ApiError>* err) {
  if (Blank(body)) {
    *err = ApiError::OpenApi(422, 602,
                             fmt::format("{} in body is required", what));
    return false;
  }
  d->Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseStopWhenDoneFlag>(
      body.data(), body.size());
  if (d->HasParseError()) {
    *err = ApiError::OpenApi(
        400, 400,
        fmt::format("parsing {} body from \"\" failed, because {}", what,
                    SyntaxError(*d, body)));
    return false;
  }
  return true;
}

ApiError Wrap(std::string_view what, const JsonFailure& f) {
  return ApiError::OpenApi(
      400, 400,
      fmt::format("parsing {} body from \"\" failed, because {}", what,
                  f.message));
}

ApiError Required(std::string_view field) {
  return ApiError::OpenApi(422, 602,
                           fmt::format("{} in body is required", field));
}

// Go's type text for the anonymous struct go-openapi's PostableAlert
// unmarshals its own fields into.
constexpr std::string_view kPostableAlertType =
    "struct { Annotations models.LabelSet \"json:\\\"annotations,omitempty"
    "\\\"\"; EndsAt strfmt.DateTime \"json:\\\"endsAt,omitempty\\\"\"; "
    "StartsAt strfmt.DateTime \"json:\\\"startsAt,omitempty\\\"\" }";
constexpr std::string_view kPostableSilenceType =
    "struct { ID string \"json:\\\"id,omitempty\\\"\" }";

std::optional<JsonFailure> DecodeAlert(const Value& v, PostableAlert* a,
                                       bool* has_labels) {
  if (!v.IsObject()) {
    return JsonFailure{
        fmt::format("json: cannot unmarshal {} into Go value "
                    "of type {}",
                    GoKind(v), kPostableAlertType)};
  }
  bool present = false;
  if (auto f = LabelSet(v, "annotations", ".annotations", &a->annotations,
                        &present)) {
    return f;
  }
  if (auto f = Time(v, "endsAt", ".endsAt", &a->ends_at, &present)) return f;
  if (auto f = Time(v, "startsAt", ".startsAt", &a->starts_at, &present)) {
    return f;
  }
  if (auto f =
          String(v, "generatorURL", "Alert.generatorURL", &a->generator_url)) {
    return f;
  }
  return LabelSet(v, "labels", "Alert.labels", &a->labels, has_labels);
}

}  // namespace

std::optional<ApiError> CheckJsonContentType(
    std::optional<std::string_view> content_type) {
  std::string media(content_type.value_or(""));
  if (size_t semi = media.find(';'); semi != std::string::npos) {
    media.resize(semi);
  }
  while (!media.empty() && media.back() == ' ') media.pop_back();
  while (!media.empty() && media.front() == ' ') media.erase(0, 1);
  std::transform(media.begin(), media.end(), media.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (media.empty()) media = "application/octet-stream";
  if (media == "application/json") return std::nullopt;
  return ApiError::OpenApi(
      415, 415,
      fmt::format("unsupported media type {}, only [application/json] are "
                  "allowed",
                  go::Quote(media)));
}

Decoded<std::vector<PostableAlert>> DecodePostableAlerts(
    std::string_view body) {
  rapidjson::Document d;
  std::optional<ApiError> err;
  if (!Parse(body, "alerts", &d, &err)) return *err;
  std::vector<PostableAlert> out;
  if (d.IsNull()) return out;
  if (!d.IsArray()) {
    return Wrap("alerts", {fmt::format("json: cannot unmarshal {} into Go "
                                       "value of type models.PostableAlerts",
                                       GoKind(d))});
  }
  // Decoding goes through every element before validation starts.
  std::vector<bool> has_labels(d.Size(), false);
  out.resize(d.Size());
  for (rapidjson::SizeType i = 0; i < d.Size(); ++i) {
    if (d[i].IsNull()) continue;
    bool labels = false;
    if (auto f = DecodeAlert(d[i], &out[i], &labels)) return Wrap("alerts", *f);
    has_labels[i] = labels;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].generator_url.empty() && !IsUri(out[i].generator_url)) {
      return ApiError::OpenApi(
          422, 601,
          fmt::format("{}.generatorURL in body must be of type uri: {}", i,
                      go::Quote(out[i].generator_url)));
    }
    if (!has_labels[i]) return Required(fmt::format("{}.labels", i));
  }
  return out;
}

Decoded<PostableSilence> DecodePostableSilence(std::string_view body) {
  rapidjson::Document d;
  std::optional<ApiError> err;
  if (!Parse(body, "silence", &d, &err)) return *err;
  if (d.IsNull()) return Required("silence");
  if (!d.IsObject()) {
    return Wrap("silence", {fmt::format("json: cannot unmarshal {} into Go "
                                        "value of type {}",
                                        GoKind(d), kPostableSilenceType)});
  }
  PostableSilence s;
  bool has_comment = false, has_created_by = false, has_ends = false,
       has_starts = false;
  if (auto f = String(d, "id", ".id", &s.id)) return Wrap("silence", *f);
  if (auto f =
          String(d, "comment", "Silence.comment", &s.comment, &has_comment)) {
    return Wrap("silence", *f);
  }
  if (auto f = String(d, "createdBy", "Silence.createdBy", &s.created_by,
                      &has_created_by)) {
    return Wrap("silence", *f);
  }
  if (auto f = Time(d, "endsAt", "Silence.endsAt", &s.ends_at, &has_ends)) {
    return Wrap("silence", *f);
  }
  if (auto f =
          Time(d, "startsAt", "Silence.startsAt", &s.starts_at, &has_starts)) {
    return Wrap("silence", *f);
  }
  const Value* ms = Field(d, "matchers");
  struct Seen {
    bool name = false, value = false, is_regex = false;
  };
  std::vector<Seen> seen;
  if (ms != nullptr) {
    if (!ms->IsArray()) {
      return Wrap("silence",
                  TypeError(*ms, "Silence.matchers", "models.Matchers"));
    }
    for (const Value& m : ms->GetArray()) {
      if (m.IsNull()) continue;
      if (!m.IsObject()) {
        return Wrap("silence",
                    TypeError(m, "Silence.matchers", "models.Matcher"));
      }
      PostableMatcher pm;
      Seen sn;
      bool has_equal = false;
      if (auto f = Bool(m, "isEqual", "Matcher.matchers.isEqual", &pm.is_equal,
                        &has_equal)) {
        return Wrap("silence", *f);
      }
      if (auto f = Bool(m, "isRegex", "Matcher.matchers.isRegex", &pm.is_regex,
                        &sn.is_regex)) {
        return Wrap("silence", *f);
      }
      if (auto f =
              String(m, "name", "Matcher.matchers.name", &pm.name, &sn.name)) {
        return Wrap("silence", *f);
      }
      if (auto f = String(m, "value", "Matcher.matchers.value", &pm.value,
                          &sn.value)) {
        return Wrap("silence", *f);
      }
      s.matchers.push_back(std::move(pm));
      seen.push_back(sn);
    }
  }
  // The spec's validation, field by field in go-openapi's order.
  if (!has_comment) return Required("comment");
  if (!has_created_by) return Required("createdBy");
  if (!has_ends) return Required("endsAt");
  if (ms == nullptr) return Required("matchers");
  if (s.matchers.empty()) {
    return ApiError::OpenApi(422, 612,
                             "matchers in body should have at least 1 items");
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    if (!seen[i].is_regex) {
      return Required(fmt::format("matchers.{}.isRegex", i));
    }
    if (!seen[i].name) return Required(fmt::format("matchers.{}.name", i));
    if (!seen[i].value) return Required(fmt::format("matchers.{}.value", i));
  }
  if (!has_starts) return Required("startsAt");
  return s;
}

bool IsUri(std::string_view s) {
  // Go's url.Parse refuses control bytes, bad %-escapes, and a first
  // segment with a colon when there is no valid scheme ("::x").
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c == '%') {
      if (i + 2 >= s.size() ||
          !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
          !std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
        return false;
      }
    }
  }
  size_t colon = s.find(':');
  if (colon == std::string_view::npos) return true;
  size_t end = s.find_first_of("/?#");
  if (end != std::string_view::npos && end < colon) return true;  // a path
  if (colon == 0) return false;  // "missing protocol scheme"
  if (!std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (size_t i = 1; i < colon; ++i) {
    char c = s[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' &&
        c != '.') {
      return false;  // not a scheme: a first segment with a colon
    }
  }
  return true;
}

}  // namespace vigil::web::api::v2
