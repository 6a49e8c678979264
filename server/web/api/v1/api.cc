#include "server/web/api/v1/api.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_split.h"
#include "server/web/api/v1/util.h"

namespace vigil::web::api {

std::string_view ApiErrorTypeName(ApiErrorType t) {
  switch (t) {
    case ApiErrorType::kBadData:
      return "bad_data";
    case ApiErrorType::kExecution:
      return "execution";
    case ApiErrorType::kCanceled:
      return "canceled";
    case ApiErrorType::kTimeout:
      return "timeout";
    case ApiErrorType::kInternal:
      return "internal";
    case ApiErrorType::kNotFound:
      return "not_found";
    case ApiErrorType::kUnavailable:
      return "unavailable";
  }
  return "internal";
}

int ApiErrorHttpStatus(ApiErrorType t) {
  switch (t) {
    case ApiErrorType::kBadData:
      return 400;
    case ApiErrorType::kExecution:
      return 422;
    case ApiErrorType::kCanceled:
      return 499;  // Prometheus's statusClientClosedConnection
    case ApiErrorType::kTimeout:
    case ApiErrorType::kUnavailable:
      return 503;
    case ApiErrorType::kNotFound:
      return 404;
    case ApiErrorType::kInternal:
      return 500;
  }
  return 500;
}

ApiErrorType ApiErrorTypeFor(const absl::Status& s) {
  if (s.code() == absl::StatusCode::kNotFound) return ApiErrorType::kNotFound;
  switch (promql::ClassifyError(s)) {
    case promql::ErrorType::kBadData:
      return ApiErrorType::kBadData;
    case promql::ErrorType::kTimeout:
      return ApiErrorType::kTimeout;
    case promql::ErrorType::kCanceled:
      return ApiErrorType::kCanceled;
    case promql::ErrorType::kInternal:
      return ApiErrorType::kInternal;
    case promql::ErrorType::kNone:
    case promql::ErrorType::kExecution:
      break;
  }
  return ApiErrorType::kExecution;
}

struct Api::Route {
  std::string method;
  std::string pattern;
  Method fn;
};

Api::Api(ApiOptions options)
    : opts_(std::move(options)),
      gate_(std::make_unique<QueryGate>(opts_.max_concurrency)) {}

Api::~Api() = default;

Timestamp Api::Now() const {
  if (opts_.now) return opts_.now();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int Api::running_queries() const { return gate_->running(); }
int Api::queued_queries() const { return gate_->queued(); }

const std::vector<Api::Route>& Api::Routes() const {
  // GET and POST where Prometheus accepts both (form POST), GET otherwise.
  static const std::vector<Route>* routes = [] {
    auto* r = new std::vector<Route>;
    auto both = [r](const char* p, Method fn) {
      r->push_back({"GET", p, fn});
      r->push_back({"POST", p, fn});
    };
    auto get = [r](const char* p, Method fn) { r->push_back({"GET", p, fn}); };
    both("/api/v1/query", &Api::Query);
    both("/api/v1/query_range", &Api::QueryRange);
    both("/api/v1/query_exemplars", &Api::QueryExemplars);
    both("/api/v1/format_query", &Api::FormatQuery);
    both("/api/v1/parse_query", &Api::ParseQuery);
    both("/api/v1/labels", &Api::LabelNames);
    get("/api/v1/label/:name/values", &Api::LabelValues);
    both("/api/v1/series", &Api::Series);
    get("/api/v1/targets", &Api::Targets);
    get("/api/v1/targets/metadata", &Api::TargetsMetadata);
    get("/api/v1/alertmanagers", &Api::Alertmanagers);
    get("/api/v1/metadata", &Api::Metadata);
    get("/api/v1/status/config", &Api::StatusConfig);
    get("/api/v1/status/runtimeinfo", &Api::StatusRuntimeInfo);
    get("/api/v1/status/buildinfo", &Api::StatusBuildInfo);
    get("/api/v1/status/flags", &Api::StatusFlags);
    get("/api/v1/status/tsdb", &Api::StatusTsdb);
    get("/api/v1/status/walreplay", &Api::StatusWalReplay);
    get("/api/v1/alerts", &Api::Alerts);
    get("/api/v1/rules", &Api::Rules);
    get("/federate", &Api::Federate);
    both("/api/v1/diagnose", &Api::Diagnose);
    return r;
  }();
  return *routes;
}

void Api::Register(const RouteAdder& add) const {
  for (const Route& r : Routes()) {
    Method fn = r.fn;
    add(r.method, r.pattern,
        [this, fn](const net::HttpRequest& req, net::HttpResponse* resp) {
          (this->*fn)(req, resp);
        });
  }
}

namespace {

// Matches `path` against a pattern with ":name" segments.
bool MatchPattern(std::string_view pattern, std::string_view path,
                  std::vector<std::pair<std::string, std::string>>* params) {
  std::vector<std::string> ps = absl::StrSplit(Av(pattern), '/');
  std::vector<std::string> xs = absl::StrSplit(Av(path), '/');
  if (ps.size() != xs.size()) return false;
  std::vector<std::pair<std::string, std::string>> got;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (!ps[i].empty() && ps[i][0] == ':') {
      if (xs[i].empty()) return false;
      got.emplace_back(std::string(ps[i].substr(1)), std::string(xs[i]));
    } else if (ps[i] != xs[i]) {
      return false;
    }
  }
  *params = std::move(got);
  return true;
}

}  // namespace

void Api::Serve(const net::HttpRequest& req, net::HttpResponse* resp) const {
  bool path_known = false;
  for (const Route& r : Routes()) {
    std::vector<std::pair<std::string, std::string>> params;
    if (!MatchPattern(r.pattern, req.path, &params)) continue;
    path_known = true;
    if (r.method != req.method) continue;
    if (params.empty()) {
      (this->*r.fn)(req, resp);
    } else {
      net::HttpRequest copy = req;
      copy.path_params = std::move(params);
      (this->*r.fn)(copy, resp);
    }
    return;
  }
  if (path_known) {
    resp->status = 405;
    SetContentType(resp, "text/plain; charset=utf-8");
    resp->body = "Method Not Allowed\n";
    return;
  }
  NotFound(req, resp);
}

void Api::NotFound(const net::HttpRequest&, net::HttpResponse* resp) {
  resp->status = 404;
  SetContentType(resp, "text/plain; charset=utf-8");
  resp->body = "404 page not found\n";
}

}  // namespace vigil::web::api
