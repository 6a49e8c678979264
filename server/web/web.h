// -----------------------------------------------------------------------------
// File: web/web.h
// -----------------------------------------------------------------------------
//
// The server's HTTP face: one listener (server/net) serving the Prometheus
// API (web/api/v1), the lifecycle endpoints (/-/healthy, /-/ready,
// /-/reload, /-/quit) and Vigil's own metrics at /metrics, under
// --web.route-prefix.
#ifndef VIGIL_SERVER_WEB_WEB_H_
#define VIGIL_SERVER_WEB_WEB_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/logger.h"
#include "core/matcher.h"
#include "core/metrics.h"
#include "server/flags.h"
#include "server/net/http_server.h"
#include "server/web/api/v1/alert_quality.h"
#include "server/web/api/v1/api.h"

namespace vigil::remote {
class Receiver;
}  // namespace vigil::remote

namespace vigil::web {

class WebSecurity;

namespace api::v2 {
class Api;
}

struct WebOptions {
  const server::ServerFlags* flags = nullptr;  // REQUIRES: set; must outlive
  metrics::Registry* registry = nullptr;       // REQUIRES: set; must outlive
  Logger* logger = nullptr;
  // POST/PUT /-/reload (with --web.enable-lifecycle): runs a reload and
  // returns its outcome; the response waits for it, as Prometheus's does.
  std::function<absl::Status()> reload;
  // POST/PUT /-/quit (with --web.enable-lifecycle).
  std::function<void()> quit;
  // POST/PUT /api/v1/admin/tsdb/snapshot (with --web.enable-admin-api):
  // writes a snapshot and returns its name (a folder under
  // <storage>/snapshots/).
  std::function<absl::StatusOr<std::string>()> snapshot;
  // POST/PUT /api/v1/admin/tsdb/delete_series (with --web.enable-admin-api):
  // marks the samples in [mint, maxt] of the series matching `matchers`
  // deleted (storage::DB::DeleteSeries).
  std::function<absl::Status(const std::vector<Matcher>& matchers,
                             Timestamp mint, Timestamp maxt)>
      delete_series;
  // POST/PUT /api/v1/admin/tsdb/clean_tombstones: storage::DB's
  // CleanTombstones.
  std::function<absl::Status()> clean_tombstones;
  // Alertmanager's v2 API (with --alertmanager.config.file): every method
  // on /api/v2/* goes to it. Null: /api/v2/* is not served (404). Must
  // outlive Stop().
  api::v2::Api* alerting_api = nullptr;
  // --web.config.file applied to every endpoint (TLS, basic auth,
  // headers). Null: plain HTTP, open. Must outlive Stop().
  WebSecurity* security = nullptr;
  // POST /api/v1/alerts/feedback and GET /api/v1/alerts/report (alert
  // quality). Null: not served. Must outlive Stop().
  api::AlertQualityApi* alert_quality = nullptr;
  // blackbox_exporter's /probe (with --probe.config.file): GET and POST
  // /probe go to it, on `probe_workers` listener workers added for it.
  // Null: /probe is not served (404).
  net::HttpHandler probe;
  int probe_workers = 0;
  // GET /-/ready: a reason the server is not ready though it is running
  // (e.g. "storage is not writable: ..."), answered with 503 and that
  // text; "" (or unset): ready.
  std::function<std::string()> not_ready;
};

class Web {
 public:
  explicit Web(WebOptions opts);
  ~Web();  // Stop()s

  // Binds --web.listen-address and serves. Until SetApi() the API answers
  // 503 and /-/ready "Service Unavailable", so a client can tell a starting
  // server (replaying its storage) from a dead one. Returns the bound port.
  [[nodiscard]] absl::StatusOr<int> Start();
  // Makes the API live (the storage is open). `api` must outlive Stop().
  void SetApi(api::Api* api);
  // Makes POST /api/v1/write live (with --web.enable-remote-write-receiver;
  // 503 until then). `r` must outlive Stop().
  void SetRemoteWriteReceiver(remote::Receiver* r);
  void Stop();

  // The route prefix in use: --web.route-prefix, else the path of
  // --web.external-url, else "/".
  static std::string RoutePrefix(const server::ServerFlags& flags);

 private:
  void Route(const std::string& method, const std::string& pattern,
             net::HttpHandler h);

  WebOptions opts_;
  std::unique_ptr<net::HttpServer> http_;
  std::atomic<api::Api*> api_{nullptr};
  std::atomic<remote::Receiver*> remote_write_{nullptr};
  std::shared_ptr<metrics::Counter> requests_;
  std::shared_ptr<metrics::Histogram> durations_;
};

}  // namespace vigil::web

#endif  // VIGIL_SERVER_WEB_WEB_H_
