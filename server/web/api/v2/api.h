// -----------------------------------------------------------------------------
// File: web/api/v2/api.h
// -----------------------------------------------------------------------------
//
// Alertmanager's v2 API (0.25's api/v2/openapi.yaml) over the built-in
// router, so that amtool, Grafana's Alertmanager data source and other
// Prometheus servers (which POST their alerts to /api/v2/alerts) work
// against Vigil's port unchanged:
//
//   GET  /api/v2/alerts          filter=, receiver=, silenced=, inhibited=,
//                                active= (see filter.h)
//   POST /api/v2/alerts          PostableAlerts; 200, or 400 with the
//                                validation errors (valid alerts still taken)
//   GET  /api/v2/alerts/groups   the same filters
//   GET  /api/v2/silences        filter=
//   POST /api/v2/silences        create, or update with "id"; {"silenceID"}
//   GET|DELETE /api/v2/silence/{id}
//   GET  /api/v2/status          cluster "disabled", config, uptime, version
//   GET  /api/v2/receivers
//
// Status codes, bodies and shapes are Alertmanager's: go-openapi's
// {"code":..,"message":..} for bodies that do not decode or validate
// (400/422), unknown paths (404) and methods (405 with Allow); a JSON
// string payload for the handlers' own errors (400 bad filter, 404/500
// unknown silence as Alertmanager answers them). Responses carry
// "Vary: Origin", and "Access-Control-Allow-Origin: *" for requests with an
// Origin (rs/cors's default, which Alertmanager uses).
//
// Thread-safety: Serve runs concurrently on the server's workers;
// SetRouter may be called at any time.
#ifndef VIGIL_SERVER_WEB_API_V2_API_H_
#define VIGIL_SERVER_WEB_API_V2_API_H_

#include <atomic>
#include <memory>
#include <string>

#include "core/clock.h"
#include "core/logger.h"
#include "core/metrics.h"
#include "server/alerting/router.h"
#include "server/net/http.h"
#include "server/web/api/v2/models.h"

namespace vigil::web::api::v2 {

struct ApiOptions {
  // alertmanager_alerts_received_total{status,version="v2"} and
  // alertmanager_alerts_invalid_total{version="v2"} go here. May be null.
  metrics::Registry* registry = nullptr;
  Logger* logger = nullptr;      // may be null
  const Clock* clock = nullptr;  // Default: the real clock
  VersionInfo version;           // /api/v2/status's versionInfo
};

class Api {
 public:
  explicit Api(ApiOptions opts);
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  // The router answering the API; until set (the storage is still
  // opening) every endpoint answers 503. `router` must outlive its use:
  // set it back to null before destroying it.
  void SetRouter(alerting::Router* router) { router_.store(router); }

  // Serves a request whose path is the API's ("/api/v2/alerts", without
  // the route prefix).
  void Serve(const net::HttpRequest& req, net::HttpResponse* resp) const;

 private:
  using Handler = void (Api::*)(alerting::Router&, const net::HttpRequest&,
                                net::HttpResponse*) const;
  void GetAlerts(alerting::Router& r, const net::HttpRequest& req,
                 net::HttpResponse* resp) const;
  void PostAlerts(alerting::Router& r, const net::HttpRequest& req,
                  net::HttpResponse* resp) const;
  void GetGroups(alerting::Router& r, const net::HttpRequest& req,
                 net::HttpResponse* resp) const;
  void GetSilences(alerting::Router& r, const net::HttpRequest& req,
                   net::HttpResponse* resp) const;
  void PostSilences(alerting::Router& r, const net::HttpRequest& req,
                    net::HttpResponse* resp) const;
  void GetSilence(alerting::Router& r, const net::HttpRequest& req,
                  net::HttpResponse* resp) const;
  void DeleteSilence(alerting::Router& r, const net::HttpRequest& req,
                     net::HttpResponse* resp) const;
  void GetStatus(alerting::Router& r, const net::HttpRequest& req,
                 net::HttpResponse* resp) const;
  void GetReceivers(alerting::Router& r, const net::HttpRequest& req,
                    net::HttpResponse* resp) const;

  Timestamp Now() const { return clock_->NowMs(); }

  ApiOptions opts_;
  const Clock* clock_;
  std::atomic<alerting::Router*> router_{nullptr};
  std::shared_ptr<metrics::Counter> received_;
  std::shared_ptr<metrics::Counter> invalid_;
};

}  // namespace vigil::web::api::v2

#endif  // VIGIL_SERVER_WEB_API_V2_API_H_
