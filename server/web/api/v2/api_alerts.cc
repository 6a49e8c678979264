// GET/POST /api/v2/alerts and GET /api/v2/alerts/groups.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "core/go/strconv.h"
#include "core/labels.h"
#include "fmt/format.h"
#include "server/alerting/alert.h"
#include "server/web/api/v2/api.h"
#include "server/web/api/v2/filter.h"
#include "server/web/api/v2/requests.h"
#include "server/web/api/v2/respond.h"
#include "server/web/api/v2/sort.h"

namespace vigil::web::api::v2 {
namespace {

// model.LabelSet.Validate's first complaint, names in sorted order (Go
// reports whichever its map iteration meets first).
std::optional<std::string> InvalidName(const Labels& ls) {
  for (const Label& l : ls) {
    if (!IsValidLabelName(l.name)) {
      return fmt::format("invalid name {}", go::Quote(l.name));
    }
  }
  return std::nullopt;
}

Labels ToLabels(const std::vector<std::pair<std::string, std::string>>& kv,
                bool drop_empty) {
  std::vector<Label> v;
  v.reserve(kv.size());
  for (const auto& [k, val] : kv) {
    if (drop_empty && val.empty()) continue;
    v.push_back(Label{k, val});
  }
  return Labels::FromUnsorted(std::move(v));
}

// types.Alert.Validate after the API's defaults, in Alertmanager's words.
std::optional<std::string> Validate(const alerting::Alert& a) {
  if (a.ends_at != 0 && a.ends_at < a.starts_at) {
    return "start time must be before end time";
  }
  if (auto bad = InvalidName(a.labels)) return "invalid label set: " + *bad;
  if (a.labels.empty()) return "at least one label pair required";
  if (auto bad = InvalidName(a.annotations)) {
    return "invalid annotations: " + *bad;
  }
  return std::nullopt;
}

}  // namespace

void Api::GetAlerts(alerting::Router& r, const net::HttpRequest& req,
                    net::HttpResponse* resp) const {
  auto filter = ParseAlertFilter(req);
  if (!filter.ok()) {
    return RespondError(resp, ApiError::Payload(400, filter.status()));
  }
  const Timestamp now = Now();
  std::vector<alerting::AlertView> views = r.ListAlerts();
  std::vector<const alerting::AlertView*> out;
  for (const alerting::AlertView& v : views) {
    if (v.alert.Resolved(now)) continue;
    if (filter->receiver && std::none_of(v.receivers.begin(), v.receivers.end(),
                                         [&](const std::string& rc) {
                                           return filter->ReceiverMatches(rc);
                                         })) {
      continue;
    }
    if (!filter->Matches(v)) continue;
    out.push_back(&v);
  }
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) {
    return a->fingerprint < b->fingerprint;
  });
  RespondJson(resp, [&](JsonWriter& w) {
    w.StartArray();
    for (const alerting::AlertView* v : out) {
      WriteGettableAlert(w, *v, v->receivers);
    }
    w.EndArray();
  });
}

void Api::GetGroups(alerting::Router& r, const net::HttpRequest& req,
                    net::HttpResponse* resp) const {
  auto filter = ParseAlertFilter(req);
  if (!filter.ok()) {
    return RespondError(resp, ApiError::Payload(400, filter.status()));
  }
  const Timestamp now = Now();
  std::vector<alerting::GroupView> groups = r.ListGroups();
  std::vector<alerting::GroupView> kept;
  // An alert's receivers here are those of the groups listed with it.
  std::map<uint64_t, std::vector<std::string>> receivers;
  for (alerting::GroupView& g : groups) {
    if (!filter->ReceiverMatches(g.receiver)) continue;
    std::vector<alerting::AlertView> alerts;
    for (alerting::AlertView& a : g.alerts) {
      if (a.alert.Resolved(now) || !filter->Matches(a)) continue;
      receivers[a.fingerprint].push_back(g.receiver);
      alerts.push_back(std::move(a));
    }
    if (alerts.empty()) continue;
    SortGroupAlerts(&alerts);
    g.alerts = std::move(alerts);
    kept.push_back(std::move(g));
  }
  SortGroups(&kept);
  RespondJson(resp, [&](JsonWriter& w) {
    w.StartArray();
    for (const alerting::GroupView& g : kept) {
      WriteAlertGroup(
          w, g,
          [&](const alerting::AlertView& a) -> const std::vector<std::string>& {
            return receivers[a.fingerprint];
          });
    }
    w.EndArray();
  });
}

void Api::PostAlerts(alerting::Router& r, const net::HttpRequest& req,
                     net::HttpResponse* resp) const {
  if (auto e = CheckJsonContentType(req.Header("content-type"))) {
    return RespondError(resp, *e);
  }
  auto decoded = DecodePostableAlerts(req.body);
  if (auto* e = std::get_if<ApiError>(&decoded)) return RespondError(resp, *e);
  auto& posted = std::get<std::vector<PostableAlert>>(decoded);

  const Timestamp now = Now();
  std::vector<alerting::Alert> valid;
  std::vector<std::string> errors;
  for (PostableAlert& p : posted) {
    alerting::Alert a;
    a.labels = ToLabels(p.labels, /*drop_empty=*/true);
    a.annotations = ToLabels(p.annotations, /*drop_empty=*/false);
    a.generator_url = std::move(p.generator_url);
    a.updated_at = now;
    // Alertmanager's defaults: no start is the end (or now); no end is
    // left to the router, which adds resolve_timeout.
    const bool has_end = p.ends_at != kMinTimestamp;
    a.ends_at = has_end ? p.ends_at : 0;
    if (p.starts_at != kMinTimestamp) {
      a.starts_at = p.starts_at;
    } else {
      a.starts_at = has_end ? p.ends_at : now;
    }
    received_
        ->WithLabelValues(
            {!has_end || a.ends_at > now ? "firing" : "resolved", "v2"})
        ->Inc();
    if (auto err = Validate(a)) {
      invalid_->WithLabelValues({"v2"})->Inc();
      errors.push_back(*std::move(err));
      continue;
    }
    valid.push_back(std::move(a));
  }
  if (!valid.empty()) {
    absl::Status st = r.PutAlerts(std::move(valid), now);
    if (!st.ok() && !absl::IsInvalidArgument(st)) {
      if (opts_.logger != nullptr) {
        opts_.logger->Error("Failed to create alerts",
                            {{"err", std::string(st.message())}});
      }
      return RespondError(resp, ApiError::Payload(500, st));
    }
    if (!st.ok()) errors.emplace_back(std::string(st.message()));
  }
  if (!errors.empty()) {
    if (opts_.logger != nullptr) {
      opts_.logger->Debug("Failed to validate alerts",
                          {{"err", absl::StrJoin(errors, "; ")}});
    }
    return RespondError(resp,
                        ApiError::Payload(400, absl::StrJoin(errors, "; ")));
  }
  RespondEmpty(resp);
}

}  // namespace vigil::web::api::v2
