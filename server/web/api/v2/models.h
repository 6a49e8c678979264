// -----------------------------------------------------------------------------
// File: web/api/v2/models.h
// -----------------------------------------------------------------------------
//
// Alertmanager's v2 response bodies (go-openapi's models), written as its
// server writes them: keys in the models' field order (alphabetical, with
// an embedded model's fields after the outer ones), label sets with sorted
// keys, strings escaped as Go's encoding/json, times as strfmt.DateTime
// ("2026-01-01T00:00:00.000Z"). For example a GettableAlert:
//
//   {"annotations":{},"endsAt":"...","fingerprint":"0676c158ee2f9daa",
//    "receivers":[{"name":"default"}],"startsAt":"...",
//    "status":{"inhibitedBy":[],"silencedBy":[],"state":"active"},
//    "updatedAt":"...","generatorURL":"http://...","labels":{...}}
//
// (generatorURL is omitted when empty) and a GettableSilence:
//
//   {"id":"...","status":{"state":"active"},"updatedAt":"...",
//    "comment":"c","createdBy":"a","endsAt":"...",
//    "matchers":[{"isEqual":true,"isRegex":false,"name":"a","value":"b"}],
//    "startsAt":"..."}
#ifndef VIGIL_SERVER_WEB_API_V2_MODELS_H_
#define VIGIL_SERVER_WEB_API_V2_MODELS_H_

#include <functional>
#include <string>
#include <vector>

#include "core/time.h"
#include "server/alerting/router.h"
#include "server/alerting/silence.h"
#include "server/web/api/v1/json.h"

namespace vigil::web::api::v2 {

// models.GettableAlert of `a`, listing `receivers` (the API's own choice:
// the routes' receivers for /alerts, the matching groups' for /groups).
void WriteGettableAlert(JsonWriter& w, const alerting::AlertView& a,
                        const std::vector<std::string>& receivers);

// models.AlertGroup: {"alerts":[...],"labels":{...},"receiver":{"name":...}}
// with each alert's receivers given by `receivers_of(alert)`.
void WriteAlertGroup(JsonWriter& w, const alerting::GroupView& g,
                     const std::function<const std::vector<std::string>&(
                         const alerting::AlertView&)>& receivers_of);

// models.GettableSilence, its state as of `now`.
void WriteGettableSilence(JsonWriter& w, const alerting::Silence& s,
                          Timestamp now);

// What /api/v2/status reports besides the router's config and uptime.
struct VersionInfo {
  std::string branch, build_date, build_user, go_version, revision, version;
};

// models.AlertmanagerStatus without a cluster:
// {"cluster":{"peers":[],"status":"disabled"},"config":{"original":...},
//  "uptime":...,"versionInfo":{...}}.
void WriteStatus(JsonWriter& w, const std::string& original_config,
                 Timestamp uptime, const VersionInfo& version);

// [{"name":"a"},...]
void WriteReceivers(JsonWriter& w, const std::vector<std::string>& names);

}  // namespace vigil::web::api::v2

#endif  // VIGIL_SERVER_WEB_API_V2_MODELS_H_
