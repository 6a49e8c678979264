// -----------------------------------------------------------------------------
// File: web/api/v2/filter.h
// -----------------------------------------------------------------------------
//
// The query parameters of GET /api/v2/alerts, /alerts/groups and /silences,
// read as go-openapi reads them, and the filtering Alertmanager applies:
//
//   filter=     repeatable; one matcher each in Alertmanager's syntax
//               (alertname="X", severity=~"crit.*"); all must match
//   receiver=   a regex (anchored) one of the alert's receivers must match
//   silenced= inhibited= active=   booleans, Default: true; false hides
//               the alerts in that state. `unprocessed=` is accepted and,
//               as in Alertmanager 0.25, has no effect.
//
// A parameter given twice takes its last value; an empty value is the
// default (so `receiver=` filters nothing). Booleans are go-openapi's
// swag.ConvertBool: "true", "1", "yes", "y", "t", "on", "ok", "checked",
// "selected", "enabled" (any case) are true, everything else false.
#ifndef VIGIL_SERVER_WEB_API_V2_FILTER_H_
#define VIGIL_SERVER_WEB_API_V2_FILTER_H_

#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/matcher.h"
#include "server/alerting/router.h"
#include "server/alerting/silence.h"
#include "server/net/http.h"

namespace vigil::web::api::v2 {

struct AlertFilter {
  std::vector<Matcher> matchers;
  std::optional<Matcher> receiver;  // a kRegexMatch matcher on the name
  bool silenced = true;
  bool inhibited = true;
  bool active = true;

  // Whether `a` passes the state flags and the label matchers (not the
  // receiver: that depends on the listing).
  bool Matches(const alerting::AlertView& a) const;
  bool ReceiverMatches(std::string_view receiver_name) const;
};

// InvalidArgument with the text Alertmanager answers 400 with:
// "bad matcher format: foo", "failed to parse receiver param: ...".
absl::StatusOr<AlertFilter> ParseAlertFilter(const net::HttpRequest& req);
// The filter= matchers of GET /api/v2/silences.
absl::StatusOr<std::vector<Matcher>> ParseSilenceFilter(
    const net::HttpRequest& req);

// Alertmanager's CheckSilenceMatchesFilterLabels: every filter matcher has
// an identical matcher (name, type and value) in the silence.
bool SilenceMatchesFilter(const alerting::Silence& s,
                          const std::vector<Matcher>& filter);

// swag.ConvertBool.
bool ParseOpenApiBool(std::string_view s);

}  // namespace vigil::web::api::v2

#endif  // VIGIL_SERVER_WEB_API_V2_FILTER_H_
