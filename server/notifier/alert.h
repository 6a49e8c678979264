// -----------------------------------------------------------------------------
// File: notifier/alert.h
// -----------------------------------------------------------------------------
//
// The alert the notifier queues (Prometheus's notifier.Alert) and its
// Alertmanager API v2 encoding, byte for byte what Prometheus's
// json.Marshal of models.PostableAlerts produces:
//
//   [{"annotations":{"summary":"x"},"endsAt":"2026-01-01T00:04:00.000Z",
//     "startsAt":"2026-01-01T00:00:00.000Z",
//     "generatorURL":"http://p:9090/graph?g0.expr=up+%3D%3D+0&g0.tab=1",
//     "labels":{"alertname":"Down","job":"node"}}]
//
// Field order is go-openapi's (the PostableAlert part, then the embedded
// Alert part); map keys sorted; "annotations" and "generatorURL" omitted
// when empty; "labels" always present. Strings are escaped as Go's
// encoding/json does (HTML-safe <>&, U+2028/9, invalid UTF-8 as U+FFFD).
// Times are RFC 3339 with milliseconds in UTC.
#ifndef VIGIL_SERVER_NOTIFIER_ALERT_H_
#define VIGIL_SERVER_NOTIFIER_ALERT_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "core/time.h"

namespace vigil::notifier {

// Go's zero time.Time: an unset startsAt/endsAt, encoded as
// "0001-01-01T00:00:00.000Z" (Alertmanager treats it as unset).
inline constexpr Timestamp kZeroTime = kMinTimestamp;

struct Alert {
  Labels labels;  // must include alertname
  Labels annotations;
  Timestamp starts_at = kZeroTime;  // ms
  Timestamp ends_at = kZeroTime;    // ms
  std::string generator_url;
};

// Appends the JSON array of `alerts` to *out.
void AppendAlertsJson(const std::vector<Alert>& alerts, std::string* out);
std::string EncodeAlertsJson(const std::vector<Alert>& alerts);

// Appends `s` as a JSON string literal (quotes included) escaped as Go's
// encoding/json.Marshal does.
void AppendGoJsonString(std::string_view s, std::string* out);

// strfmt.DateTime's text: "2026-01-01T00:00:00.000Z"; kZeroTime is
// "0001-01-01T00:00:00.000Z".
std::string FormatAlertTime(Timestamp ms);

// Go's url.QueryEscape: space as '+', [A-Za-z0-9-_.~] kept, the rest %XX.
std::string QueryEscape(std::string_view s);

// Prometheus's strutil.TableLinkForExpression appended to `external_url`:
// "<external_url>/graph?g0.expr=<QueryEscape(expr)>&g0.tab=1".
std::string GeneratorUrl(std::string_view external_url, std::string_view expr);

}  // namespace vigil::notifier

#endif  // VIGIL_SERVER_NOTIFIER_ALERT_H_
