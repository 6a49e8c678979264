// -----------------------------------------------------------------------------
// File: web/api/v1/api.h
// -----------------------------------------------------------------------------
//
// Prometheus's HTTP API (/api/v1/* and /federate) over Vigil's storage,
// PromQL engine and the server's components, answering with Prometheus's
// JSON byte for byte where clients parse it (Grafana, promtool query).
// The only place a Status becomes an HTTP status code:
//   InvalidArgument      400 bad_data
//   evaluation failures  422 execution
//   Cancelled            499 canceled   (the client went away)
//   DeadlineExceeded     503 timeout
//   Internal, DataLoss   500 internal
//   NotFound             404 not_found
//
// Handlers are plain net::HttpHandler functions; Register() hooks them into
// any router, Serve() dispatches by itself (tests, routers without
// patterns). A query runs under a promql::QueryContext cancelled when
// HttpRequest::client_gone turns true and bounded by the `timeout`
// parameter (the engine's own timeout still applies). At most
// `max_concurrency` queries evaluate at once; the others wait in a queue
// (their wait counts towards their timeout).
//
// Example:
//   ApiOptions o;  o.queryable = db.get();  o.db = db.get();  o.engine = &eng;
//   Api api(o);
//   api.Register([&](std::string m, std::string p, net::HttpHandler h) {
//     server.Handle(m, p, std::move(h));
//   });
//
// Thread-safe: handlers may run concurrently on any threads. The Api must
// outlive every handler call and every streamed body it produced.
#ifndef VIGIL_SERVER_WEB_API_V1_API_H_
#define VIGIL_SERVER_WEB_API_V1_API_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "promql/engine.h"
#include "server/diagnose/thresholds.h"
#include "server/net/http.h"
#include "server/web/api/v1/sources.h"
#include "storage/db.h"
#include "storage/querier.h"

namespace vigil::web::api {

struct ApiOptions {
  // What queries, series and label lookups read. REQUIRES: set; not owned;
  // must outlive the Api.
  storage::Queryable* queryable = nullptr;
  // The database behind `queryable`, for /api/v1/status/tsdb, /metadata and
  // walreplay. May be null (then tsdb status is empty, metadata is empty).
  storage::DB* db = nullptr;
  // REQUIRES: set; not owned; must outlive the Api.
  const promql::Engine* engine = nullptr;
  // The server's components; each may be null (see sources.h). Not owned.
  const RulesSource* rules = nullptr;
  const TargetsSource* targets = nullptr;
  const AlertmanagersSource* alertmanagers = nullptr;
  const StatusSource* status = nullptr;
  // Queries evaluating at once; the rest wait.
  // Default: 20 (Prometheus's --query.max-concurrency)
  int max_concurrency = 20;
  // Query results with more points than this are streamed to the client in
  // pieces (HttpResponse::stream) instead of one body. Default: 20000
  size_t stream_min_points = 20000;
  // Wall clock in ms (default time of instant queries). Default: real time.
  std::function<Timestamp()> now;
  // Self-monitoring hooks; each may be empty. Called with +1 when a query
  // starts (waiting for admission or evaluating) and -1 when it is done
  // (prometheus_engine_queries)...
  std::function<void(int)> queries_delta;
  // ...and with the seconds an admitted query spent in Engine::Exec
  // (prometheus_engine_query_duration_seconds{slice="inner_eval"}).
  std::function<void(double)> observe_inner_eval;
  // The thresholds of /api/v1/diagnose (docs/diagnose.md). Not owned; must
  // outlive the Api. Default: null (the built-in defaults)
  const diagnose::Thresholds* diagnose_thresholds = nullptr;
};

// The error types of the API's JSON, and their HTTP codes.
enum class ApiErrorType {
  kBadData,      // 400
  kExecution,    // 422
  kCanceled,     // 499
  kTimeout,      // 503
  kInternal,     // 500
  kNotFound,     // 404
  kUnavailable,  // 503
};
std::string_view ApiErrorTypeName(ApiErrorType t);  // "bad_data", ...
int ApiErrorHttpStatus(ApiErrorType t);
// The type of a failed Status (promql::ClassifyError, plus NotFound).
ApiErrorType ApiErrorTypeFor(const absl::Status& s);

class Api {
 public:
  explicit Api(ApiOptions options);
  ~Api();
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  using RouteAdder = std::function<void(std::string method, std::string pattern,
                                        net::HttpHandler handler)>;
  // Calls `add` once per (method, route): "GET"/"POST" and patterns such as
  // "/api/v1/query" and "/api/v1/label/:name/values" (":name" is one path
  // segment, handed over in HttpRequest::path_params). Handlers refer to
  // this Api.
  void Register(const RouteAdder& add) const;

  // Dispatches `req` by method and path to the registered handlers, filling
  // path_params itself; unknown paths get NotFound, a known path with
  // another method 405.
  void Serve(const net::HttpRequest& req, net::HttpResponse* resp) const;

  // Prometheus's answer to an unknown path: 404 "404 page not found".
  static void NotFound(const net::HttpRequest& req, net::HttpResponse* resp);

  // Queries evaluating now, and waiting for a slot.
  int running_queries() const;
  int queued_queries() const;

 private:
  struct Route;
  class QueryGate;
  using Method = void (Api::*)(const net::HttpRequest&,
                               net::HttpResponse*) const;
  const std::vector<Route>& Routes() const;
  Timestamp Now() const;

  // api_query.cc
  void Query(const net::HttpRequest& req, net::HttpResponse* resp) const;
  void QueryRange(const net::HttpRequest& req, net::HttpResponse* resp) const;
  void QueryExemplars(const net::HttpRequest& req,
                      net::HttpResponse* resp) const;
  void FormatQuery(const net::HttpRequest& req, net::HttpResponse* resp) const;
  void ParseQuery(const net::HttpRequest& req, net::HttpResponse* resp) const;
  struct QueryParams;
  void RunQuery(const net::HttpRequest& req, const QueryParams& p,
                net::HttpResponse* resp) const;
  // api_series.cc
  void Series(const net::HttpRequest& req, net::HttpResponse* resp) const;
  void LabelNames(const net::HttpRequest& req, net::HttpResponse* resp) const;
  void LabelValues(const net::HttpRequest& req, net::HttpResponse* resp) const;
  void Metadata(const net::HttpRequest& req, net::HttpResponse* resp) const;
  void Federate(const net::HttpRequest& req, net::HttpResponse* resp) const;
  // api_rules.cc
  void Rules(const net::HttpRequest& req, net::HttpResponse* resp) const;
  void Alerts(const net::HttpRequest& req, net::HttpResponse* resp) const;
  void Alertmanagers(const net::HttpRequest& req,
                     net::HttpResponse* resp) const;
  void Targets(const net::HttpRequest& req, net::HttpResponse* resp) const;
  void TargetsMetadata(const net::HttpRequest& req,
                       net::HttpResponse* resp) const;
  // api_status.cc
  void StatusConfig(const net::HttpRequest& req, net::HttpResponse* resp) const;
  void StatusFlags(const net::HttpRequest& req, net::HttpResponse* resp) const;
  void StatusBuildInfo(const net::HttpRequest& req,
                       net::HttpResponse* resp) const;
  void StatusRuntimeInfo(const net::HttpRequest& req,
                         net::HttpResponse* resp) const;
  void StatusTsdb(const net::HttpRequest& req, net::HttpResponse* resp) const;
  void StatusWalReplay(const net::HttpRequest& req,
                       net::HttpResponse* resp) const;
  // api_diagnose.cc
  void Diagnose(const net::HttpRequest& req, net::HttpResponse* resp) const;

  ApiOptions opts_;
  std::unique_ptr<QueryGate> gate_;
};

}  // namespace vigil::web::api

#endif  // VIGIL_SERVER_WEB_API_V1_API_H_
