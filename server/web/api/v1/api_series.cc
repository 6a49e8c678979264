// /api/v1/series, /labels, /label/:name/values, /metadata and /federate.
#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/go/strconv.h"
#include "core/go/utf8.h"
#include "promql/parser.h"
#include "server/web/api/v1/api.h"
#include "server/web/api/v1/util.h"

namespace vigil::web::api {
namespace {

constexpr std::string_view kTruncated = "results truncated due to limit";

// Prometheus's model.UnescapeName for the "U__" value encoding: "__" is
// "_", "_1f600_" is U+1F600; anything malformed leaves the name as given.
std::string UnescapeName(std::string_view name) {
  if (name.substr(0, 3) != "U__") return std::string(name);
  std::string_view s = name.substr(3);
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '_') {
      out.push_back(s[i]);
      continue;
    }
    if (++i >= s.size()) return std::string(name);
    if (s[i] == '_') {
      out.push_back('_');
      continue;
    }
    uint32_t rune = 0;
    for (int j = 0;; ++j, ++i) {
      if (i >= s.size() || j >= 7) return std::string(name);
      if (s[i] == '_') break;
      const int d = go::HexDigitValue(s[i]);
      if (d < 0 || j == 6) return std::string(name);
      rune = rune * 16 + static_cast<uint32_t>(d);
    }
    if (rune > 0x10FFFF || (rune >= 0xD800 && rune <= 0xDFFF)) {
      return std::string(name);
    }
    go::AppendRune(&out, rune);
  }
  return out;
}

struct Range {
  Timestamp start, end;
};

// start/end with Prometheus's defaults; false after responding.
bool ParseRange(const net::HttpRequest& req, net::HttpResponse* resp,
                Range* r) {
  auto start = ParseTimeParam(req, "start", kApiMinTime);
  if (!start.ok()) {
    RespondInvalidParam(resp, "start", start.status());
    return false;
  }
  auto end = ParseTimeParam(req, "end", kApiMaxTime);
  if (!end.ok()) {
    RespondInvalidParam(resp, "end", end.status());
    return false;
  }
  *r = {*start, *end};
  return true;
}

// Names or values over several match[] sets: the sorted union.
absl::StatusOr<std::vector<std::string>> Union(
    const std::vector<std::vector<Matcher>>& sets,
    const std::function<absl::StatusOr<std::vector<std::string>>(
        const std::vector<Matcher>&)>& f) {
  if (sets.size() <= 1)
    return f(sets.empty() ? std::vector<Matcher>{} : sets[0]);
  std::set<std::string> all;
  for (const auto& ms : sets) {
    auto v = f(ms);
    if (!v.ok()) return v.status();
    all.insert(v->begin(), v->end());
  }
  return std::vector<std::string>(all.begin(), all.end());
}

void RespondStrings(net::HttpResponse* resp, std::vector<std::string> v,
                    int64_t limit) {
  std::vector<std::string> warnings;
  if (limit > 0 && v.size() > static_cast<size_t>(limit)) {
    v.resize(limit);
    warnings.emplace_back(kTruncated);
  }
  RespondData(
      resp, [&v](JsonWriter& w) { w.StringArray(v); }, warnings);
}

}  // namespace

void Api::Series(const net::HttpRequest& req, net::HttpResponse* resp) const {
  std::vector<std::string_view> match = FormValues(req, "match[]");
  if (match.empty()) {
    return RespondError(resp, ApiErrorType::kBadData,
                        "no match[] parameter provided");
  }
  auto limit = ParseLimitParam(FormValue(req, "limit"));
  if (!limit.ok()) return RespondInvalidParam(resp, "limit", limit.status());
  Range r;
  if (!ParseRange(req, resp, &r)) return;
  auto sets = ParseMatchersParam(match);
  if (!sets.ok()) return RespondInvalidParam(resp, "match[]", sets.status());
  auto q = opts_.queryable->NewQuerier(r.start, r.end);
  if (!q.ok()) return RespondStatus(resp, q.status());
  std::vector<Labels> out;
  for (const auto& ms : *sets) {
    auto ss = (*q)->Select(ms);
    if (!ss.ok()) return RespondStatus(resp, ss.status());
    while ((*ss)->Next()) {
      if (req.client_gone != nullptr && req.client_gone->load()) {
        return RespondError(resp, ApiErrorType::kCanceled, "context canceled");
      }
      out.push_back((*ss)->TakeLabels());
    }
    if (auto s = (*ss)->err(); !s.ok()) return RespondStatus(resp, s);
  }
  if (sets->size() > 1) {  // merge: sorted, each series once
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  std::vector<std::string> warnings;
  if (*limit > 0 && out.size() > static_cast<size_t>(*limit)) {
    out.resize(*limit);
    warnings.emplace_back(kTruncated);
  }
  RespondData(
      resp,
      [&out](JsonWriter& w) {
        w.StartArray();
        for (const Labels& l : out) w.LabelSet(l);
        w.EndArray();
      },
      warnings);
}

void Api::LabelNames(const net::HttpRequest& req,
                     net::HttpResponse* resp) const {
  auto limit = ParseLimitParam(FormValue(req, "limit"));
  if (!limit.ok()) return RespondInvalidParam(resp, "limit", limit.status());
  Range r;
  if (!ParseRange(req, resp, &r)) return;
  auto sets = ParseMatchersParam(FormValues(req, "match[]"));
  if (!sets.ok()) return RespondStatus(resp, sets.status());
  auto q = opts_.queryable->NewQuerier(r.start, r.end);
  if (!q.ok()) return RespondStatus(resp, q.status());
  auto names = Union(*sets, [&](const std::vector<Matcher>& ms) {
    return (*q)->LabelNames(ms);
  });
  if (!names.ok()) {
    return RespondError(
        resp,
        ApiErrorTypeFor(names.status()) == ApiErrorType::kBadData
            ? ApiErrorType::kExecution
            : ApiErrorTypeFor(names.status()),
        Sv(names.status().message()));
  }
  RespondStrings(resp, std::move(*names), *limit);
}

void Api::LabelValues(const net::HttpRequest& req,
                      net::HttpResponse* resp) const {
  const std::string name = UnescapeName(PathParam(req, "name"));
  if (name.empty() || !go::ValidString(name)) {
    return RespondError(resp, ApiErrorType::kBadData,
                        Cat("invalid label name: ", go::Quote(name)));
  }
  auto limit = ParseLimitParam(FormValue(req, "limit"));
  if (!limit.ok()) return RespondInvalidParam(resp, "limit", limit.status());
  Range r;
  if (!ParseRange(req, resp, &r)) return;
  auto sets = ParseMatchersParam(FormValues(req, "match[]"));
  if (!sets.ok()) return RespondStatus(resp, sets.status());
  auto q = opts_.queryable->NewQuerier(r.start, r.end);
  if (!q.ok())
    return RespondError(resp, ApiErrorType::kExecution,
                        Sv(q.status().message()));
  auto values = Union(*sets, [&](const std::vector<Matcher>& ms) {
    return (*q)->LabelValues(name, ms);
  });
  if (!values.ok()) {
    return RespondError(resp, ApiErrorType::kExecution,
                        Sv(values.status().message()));
  }
  RespondStrings(resp, std::move(*values), *limit);
}

void Api::Metadata(const net::HttpRequest& req, net::HttpResponse* resp) const {
  int64_t limit = -1, per_metric = -1;
  if (std::string_view s = FormValue(req, "limit"); !s.empty()) {
    auto n = go::ParseInt(s, 10);
    if (!n.ok()) {
      return RespondError(resp, ApiErrorType::kBadData,
                          "limit must be a number");
    }
    limit = *n;
  }
  if (std::string_view s = FormValue(req, "limit_per_metric"); !s.empty()) {
    auto n = go::ParseInt(s, 10);
    if (!n.ok()) {
      return RespondError(resp, ApiErrorType::kBadData,
                          "limit_per_metric must be a number");
    }
    per_metric = *n;
  }
  const std::string_view metric = FormValue(req, "metric");
  // metric -> distinct (type, help, unit), first seen first.
  std::map<std::string, std::vector<storage::Metadata>> all;
  auto add = [&](const std::string& name, const storage::Metadata& md) {
    if (!metric.empty() && name != metric) return;
    auto& v = all[name];
    if (per_metric > 0 && static_cast<int64_t>(v.size()) >= per_metric) return;
    for (const auto& m : v) {
      if (m.type == md.type && m.help == md.help && m.unit == md.unit) return;
    }
    v.push_back(md);
  };
  if (opts_.db != nullptr) {
    for (const auto& [name, md] : opts_.db->GetMetadata()) add(name, md);
  }
  if (opts_.targets != nullptr) {
    for (const TargetInfo& t : opts_.targets->ActiveTargets()) {
      for (const auto& m : opts_.targets->TargetMetadata(t.labels)) {
        add(m.metric, {m.type, m.help, m.unit});
      }
    }
  }
  RespondData(resp, [&](JsonWriter& w) {
    w.StartObject();
    int64_t n = 0;
    for (const auto& [name, mds] : all) {
      if (limit >= 0 && n++ >= limit) break;
      w.Key(name);
      w.StartArray();
      for (const storage::Metadata& md : mds) {
        w.StartObject();
        w.Key("type");
        w.String(md.type.empty() ? "unknown" : md.type);
        w.Key("help");
        w.String(md.help);
        w.Key("unit");
        w.String(md.unit);
        w.EndObject();
      }
      w.EndArray();
    }
    w.EndObject();
  });
}

namespace {

// Text exposition 0.0.4: label values escaped as Prometheus's expfmt does.
void AppendLabelValue(std::string* out, std::string_view v) {
  for (char c : v) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '"':
        out->append("\\\"");
        break;
      case '\n':
        out->append("\\n");
        break;
      default:
        out->push_back(c);
    }
  }
}

void AppendExpositionFloat(std::string* out, double v) {
  if (std::isnan(v)) {
    out->append("NaN");
  } else if (std::isinf(v)) {
    out->append(v > 0 ? "+Inf" : "-Inf");
  } else {
    out->append(go::FormatFloatG(v));
  }
}

}  // namespace

void Api::Federate(const net::HttpRequest& req, net::HttpResponse* resp) const {
  auto sets = ParseMatchersParam(FormValues(req, "match[]"));
  if (!sets.ok()) {
    resp->status = 400;
    SetContentType(resp, "text/plain; charset=utf-8");
    resp->body = Cat(Sv(sets.status().message()), "\n");
    return;
  }
  const Timestamp now = Now();
  const int64_t lookback = opts_.engine->options().lookback_delta_ms;
  auto q = opts_.queryable->NewQuerier(now - lookback, now);
  if (!q.ok()) {
    resp->status = 500;
    SetContentType(resp, "text/plain; charset=utf-8");
    resp->body = Cat(Sv(q.status().message()), "\n");
    return;
  }
  // The latest non-stale sample of every matching series, once each.
  std::map<std::pair<std::string, Labels>, std::pair<Timestamp, double>> latest;
  for (const auto& ms : *sets) {
    auto ss = (*q)->Select(ms);
    if (!ss.ok()) continue;
    while ((*ss)->Next()) {
      const storage::Series& s = (*ss)->At();
      auto it = s.Iterator();
      bool have = false;
      Timestamp t = 0;
      double v = 0;
      while (it->Next()) {
        t = it->t();
        v = it->v();
        have = true;
      }
      if (!have || IsStaleNaN(v)) continue;
      latest[{std::string(s.labels().MetricName()), s.labels()}] = {t, v};
    }
  }
  std::string out;
  std::string_view family;
  bool first = true;
  for (const auto& [key, tv] : latest) {
    if (first || key.first != family) {
      family = key.first;
      first = false;
      out += Cat("# TYPE ", family, " untyped\n");
    }
    out.append(family);
    bool any = false;
    for (const Label& l : key.second) {
      if (l.name == kMetricName) continue;
      out.push_back(any ? ',' : '{');
      any = true;
      out += Cat(l.name, "=\"");
      AppendLabelValue(&out, l.value);
      out.push_back('"');
    }
    if (any) out.push_back('}');
    out.push_back(' ');
    AppendExpositionFloat(&out, tv.second);
    out += Cat(" ", std::to_string(tv.first), "\n");
  }
  resp->status = 200;
  SetContentType(resp, "text/plain; version=0.0.4; charset=utf-8");
  resp->body = std::move(out);
}

}  // namespace vigil::web::api
