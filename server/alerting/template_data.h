// -----------------------------------------------------------------------------
// File: alerting/template_data.h
// -----------------------------------------------------------------------------
//
// Alertmanager's notification template data and function map, as values of
// the project's Go-template engine (rules/template/text):
//
//   NotificationData(n)  *template.Data: .Receiver .Status .Alerts
//                        .GroupLabels .CommonLabels .CommonAnnotations
//                        .ExternalURL
//   template.Alerts      []template.Alert with .Firing and .Resolved
//   template.Alert       .Status .Labels .Annotations .StartsAt .EndsAt
//                        .GeneratorURL .Fingerprint
//   template.KV          map[string]string in key order, with .SortedPairs
//                        (alertname first), .Names, .Values, .Remove
//   template.Pairs       []template.Pair{Name, Value} with .Names .Values
//
// AlertmanagerFuncs(): toUpper toLower title trimSpace join match
// reReplaceAll safeHtml stringSlice date tz since humanizeDuration.
#ifndef VIGIL_SERVER_ALERTING_TEMPLATE_DATA_H_
#define VIGIL_SERVER_ALERTING_TEMPLATE_DATA_H_

#include <string>
#include <string_view>

#include "core/labels.h"
#include "core/time.h"
#include "rules/template/text/funcs.h"
#include "rules/template/text/value.h"
#include "server/alerting/integration.h"

namespace vigil::alerting {

// Alertmanager's Template.Data(): the receiver name regexp-quoted (as
// Alertmanager does), the status "firing" when any alert is firing at
// n.now, firing alerts' EndsAt the zero time, common labels and
// annotations those every alert carries with the same value.
rules::tmpl::Value NotificationData(const Notification& n);

// A label set as a template.KV value.
rules::tmpl::Value KVValue(const Labels& labels);

// A time.Time value (UTC) from milliseconds; 0 is Go's zero time.
rules::tmpl::Value TimeValue(Timestamp ms);

// Go's regexp.QuoteMeta.
std::string QuoteMeta(std::string_view s);

// Vigil's default templates (default_templates.cc): "vigil.default.title",
// ".message" (markdown-ish for chat), ".text" (plain), ".subject", ".html"
// (an e-mail body), ".<kind>.title" / ".<kind>.message" per receiver kind,
// and Alertmanager's names (__subject, __text_alert_list,
// email.default.subject, slack.default.text, ...) as aliases of these.
std::string_view DefaultTemplates();

// The function map of Alertmanager's notification templates.
const rules::tmpl::FuncTable& AlertmanagerFuncs();

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_TEMPLATE_DATA_H_
