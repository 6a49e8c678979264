#include "server/web/api/v2/api.h"

#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "server/web/api/v2/respond.h"
#include "server/web/api/v2/secrets.h"

namespace vigil::web::api::v2 {
namespace {

struct Route {
  std::string_view path;  // "/api/v2/silence/" ends with the id
  bool has_id;
  // Methods as the Allow header lists them (Alertmanager's order varies
  // from run to run: it comes from a Go map).
  std::vector<std::pair<std::string_view, int>> methods;  // method -> index
};

enum Op {
  kGetAlerts,
  kPostAlerts,
  kGetGroups,
  kGetSilences,
  kPostSilences,
  kGetSilence,
  kDeleteSilence,
  kGetStatus,
  kGetReceivers,
};

const std::vector<Route>& Routes() {
  static const std::vector<Route> kRoutes = {
      {"/api/v2/alerts", false, {{"GET", kGetAlerts}, {"POST", kPostAlerts}}},
      {"/api/v2/alerts/groups", false, {{"GET", kGetGroups}}},
      {"/api/v2/silences",
       false,
       {{"GET", kGetSilences}, {"POST", kPostSilences}}},
      {"/api/v2/silence/",
       true,
       {{"GET", kGetSilence}, {"DELETE", kDeleteSilence}}},
      {"/api/v2/status", false, {{"GET", kGetStatus}}},
      {"/api/v2/receivers", false, {{"GET", kGetReceivers}}},
  };
  return kRoutes;
}

const Route* FindRoute(std::string_view path, std::string* id) {
  for (const Route& r : Routes()) {
    if (!r.has_id) {
      // go-openapi's router takes "/api/v2/alerts/" for "/api/v2/alerts".
      if (path == r.path ||
          (path.size() == r.path.size() + 1 && path.back() == '/' &&
           path.substr(0, r.path.size()) == r.path)) {
        return &r;
      }
      continue;
    }
    if (path.size() > r.path.size() &&
        path.substr(0, r.path.size()) == r.path &&
        path.find('/', r.path.size()) == std::string_view::npos) {
      *id = std::string(path.substr(r.path.size()));
      return &r;
    }
  }
  return nullptr;
}

// rs/cors's default: any origin, simple methods.
bool Preflight(const net::HttpRequest& req, net::HttpResponse* resp) {
  auto method = req.Header("access-control-request-method");
  if (req.method != "OPTIONS" || !req.Header("origin") || !method) {
    return false;
  }
  resp->status = 200;
  if (*method == "GET" || *method == "POST" || *method == "HEAD") {
    resp->SetHeader("Access-Control-Allow-Methods", std::string(*method));
    resp->SetHeader("Access-Control-Allow-Origin", "*");
  }
  resp->SetHeader("Vary", "Origin");
  resp->SetHeader("Vary", "Access-Control-Request-Method");
  resp->SetHeader("Vary", "Access-Control-Request-Headers");
  return true;
}

}  // namespace

Api::Api(ApiOptions opts)
    : opts_(std::move(opts)),
      clock_(opts_.clock != nullptr ? opts_.clock : Clock::Real()) {
  received_ = std::make_shared<metrics::Counter>(
      metrics::Opts{"alertmanager_alerts_received_total",
                    "The total number of received alerts.",
                    {"status", "version"},
                    {}});
  invalid_ = std::make_shared<metrics::Counter>(
      metrics::Opts{"alertmanager_alerts_invalid_total",
                    "The total number of received alerts that were invalid.",
                    {"version"},
                    {}});
  // Alertmanager shows the series from the start.
  received_->WithLabelValues({"firing", "v2"});
  received_->WithLabelValues({"resolved", "v2"});
  invalid_->WithLabelValues({"v2"});
  if (opts_.registry != nullptr) {
    (void)opts_.registry->Register(received_);
    (void)opts_.registry->Register(invalid_);
  }
}

void Api::Serve(const net::HttpRequest& req, net::HttpResponse* resp) const {
  if (Preflight(req, resp)) return;
  resp->SetHeader("Vary", "Origin");
  if (req.Header("origin")) resp->SetHeader("Access-Control-Allow-Origin", "*");

  std::string id;
  const Route* route = FindRoute(req.path, &id);
  if (route == nullptr) {
    return RespondError(
        resp, ApiError::OpenApi(
                  404, 404, fmt::format("path {} was not found", req.path)));
  }
  int op = -1;
  std::string allowed;
  for (const auto& [m, o] : route->methods) {
    if (m == req.method) op = o;
    if (!allowed.empty()) allowed += ",";
    allowed += m;
  }
  if (op < 0) {
    resp->SetHeader("Allow", allowed);
    return RespondError(
        resp,
        ApiError::OpenApi(405, 405,
                          fmt::format("method {} is not allowed, but [{}] are",
                                      req.method, allowed)));
  }
  alerting::Router* router = router_.load();
  if (router == nullptr) {
    return RespondError(
        resp, ApiError::OpenApi(503, 503,
                                "the alert router is not running yet (the "
                                "storage is opening)"));
  }
  static constexpr Handler kHandlers[] = {
      &Api::GetAlerts,     &Api::PostAlerts,   &Api::GetGroups,
      &Api::GetSilences,   &Api::PostSilences, &Api::GetSilence,
      &Api::DeleteSilence, &Api::GetStatus,    &Api::GetReceivers,
  };
  if (route->has_id) {
    net::HttpRequest copy = req;
    copy.path_params = {{"silenceID", id}};
    return (this->*kHandlers[op])(*router, copy, resp);
  }
  (this->*kHandlers[op])(*router, req, resp);
}

void Api::GetStatus(alerting::Router& r, const net::HttpRequest&,
                    net::HttpResponse* resp) const {
  const std::string original = MaskSecrets(r.OriginalConfig());
  const Timestamp uptime = r.start_time();
  RespondJson(resp, [&](JsonWriter& w) {
    WriteStatus(w, original, uptime, opts_.version);
  });
}

void Api::GetReceivers(alerting::Router& r, const net::HttpRequest&,
                       net::HttpResponse* resp) const {
  const std::vector<std::string> names = r.Receivers();
  RespondJson(resp, [&](JsonWriter& w) { WriteReceivers(w, names); });
}

}  // namespace vigil::web::api::v2
