#include "server/notifier/alert.h"

#include <cstdint>

#include "core/go/json.h"
#include "core/go/time.h"

namespace vigil::notifier {

namespace {

// models.LabelSet is a Go map: encoding/json writes its keys sorted, which
// is the order Labels keeps.
void AppendLabelSet(const Labels& ls, std::string* out) {
  out->push_back('{');
  bool first = true;
  for (const Label& l : ls) {
    if (!first) out->push_back(',');
    first = false;
    AppendGoJsonString(l.name, out);
    out->push_back(':');
    AppendGoJsonString(l.value, out);
  }
  out->push_back('}');
}

void AppendAlert(const Alert& a, std::string* out) {
  // PostableAlert's own fields first (annotations omitempty; the times are
  // structs, so never omitted), then the embedded models.Alert.
  out->push_back('{');
  if (!a.annotations.empty()) {
    out->append("\"annotations\":");
    AppendLabelSet(a.annotations, out);
    out->push_back(',');
  }
  out->append("\"endsAt\":\"");
  out->append(FormatAlertTime(a.ends_at));
  out->append("\",\"startsAt\":\"");
  out->append(FormatAlertTime(a.starts_at));
  out->append("\",");
  if (!a.generator_url.empty()) {
    out->append("\"generatorURL\":");
    AppendGoJsonString(a.generator_url, out);
    out->push_back(',');
  }
  out->append("\"labels\":");
  AppendLabelSet(a.labels, out);
  out->push_back('}');
}

}  // namespace

void AppendGoJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  go::AppendJsonEscaped(out, s, go::JsonDialect::kGo122);
  out->push_back('"');
}

std::string FormatAlertTime(Timestamp ms) {
  if (ms == kZeroTime) return "0001-01-01T00:00:00.000Z";
  int64_t sec = ms / 1000;
  int64_t rem = ms % 1000;
  if (rem < 0) {
    rem += 1000;
    --sec;
  }
  return go::TimeFormat(sec, static_cast<int32_t>(rem * 1000000),
                        "2006-01-02T15:04:05.000Z07:00");
}

void AppendAlertsJson(const std::vector<Alert>& alerts, std::string* out) {
  out->push_back('[');
  for (size_t i = 0; i < alerts.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendAlert(alerts[i], out);
  }
  out->push_back(']');
}

std::string EncodeAlertsJson(const std::vector<Alert>& alerts) {
  std::string out;
  out.reserve(alerts.size() * 256 + 2);
  AppendAlertsJson(alerts, &out);
  return out;
}

std::string QueryEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() * 3 / 2);
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                      c == '.' || c == '~';
    if (unreserved) {
      out.push_back(ch);
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      static constexpr char kUpper[] = "0123456789ABCDEF";
      out.push_back('%');
      out.push_back(kUpper[c >> 4]);
      out.push_back(kUpper[c & 0xF]);
    }
  }
  return out;
}

std::string GeneratorUrl(std::string_view external_url, std::string_view expr) {
  std::string out(external_url);
  out.append("/graph?g0.expr=");
  out.append(QueryEscape(expr));
  out.append("&g0.tab=1");
  return out;
}

}  // namespace vigil::notifier
