#include "server/web/web.h"

#include "fmt/format.h"
#include "promql/parser.h"
#include "server/remote/receiver.h"
#include "server/web/api/v1/util.h"
#include "server/web/api/v2/api.h"
#include "server/web/ui/assets.h"
#include "server/web/web_security.h"

namespace vigil::web {
namespace {

void Text(net::HttpResponse* r, int status, std::string body) {
  r->status = status;
  r->SetHeader("Content-Type", "text/plain; charset=utf-8");
  r->body = std::move(body);
}

}  // namespace

std::string Web::RoutePrefix(const server::ServerFlags& flags) {
  std::string p = flags.route_prefix;
  if (p.empty() && !flags.external_url.empty()) {
    // The path of the external URL: after "scheme://host".
    size_t scheme = flags.external_url.find("://");
    size_t start = scheme == std::string::npos ? 0 : scheme + 3;
    size_t slash = flags.external_url.find('/', start);
    if (slash != std::string::npos) p = flags.external_url.substr(slash);
  }
  if (p.empty() || p[0] != '/') p = "/" + p;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

Web::Web(WebOptions opts) : opts_(std::move(opts)) {
  requests_ = std::make_shared<metrics::Counter>(
      metrics::Opts{"prometheus_http_requests_total",
                    "Counter of HTTP requests.",
                    {"code", "handler"},
                    {}});
  durations_ = std::make_shared<metrics::Histogram>(
      metrics::Opts{"prometheus_http_request_duration_seconds",
                    "Histogram of latencies for HTTP requests.",
                    {"handler"},
                    {}},
      std::vector<double>{.1, .2, .4, 1, 3, 8, 20, 60, 120});
  (void)opts_.registry->Register(requests_);
  (void)opts_.registry->Register(durations_);

  net::HttpServerOptions ho;
  ho.route_prefix = RoutePrefix(*opts_.flags);
  ho.logger = opts_.logger;
  // Probes wait on the network up to their timeout: they get workers of
  // their own, so the API keeps its 8 whatever the probes do.
  if (opts_.probe) ho.worker_threads += opts_.probe_workers;
  ho.max_connections = opts_.flags->web_max_connections;
  ho.on_request = [this](const net::RequestInfo& info) {
    std::string handler(info.handler);
    requests_->WithLabelValues({std::to_string(info.status), handler})->Inc();
    durations_->WithLabelValues({handler})->Observe(info.duration_seconds);
  };
  if (opts_.security != nullptr) opts_.security->Apply(&ho);
  http_ = std::make_unique<net::HttpServer>(ho);
  // --web.max-connections and how close the listener is to it.
  (void)opts_.registry->Register(std::make_shared<metrics::FuncMetric>(
      metrics::MetricType::kGauge,
      metrics::Opts{"vigil_web_connections_open",
                    "Connections of the web listener accepted and not yet "
                    "closed (queued or being served).",
                    {},
                    {}},
      [this] { return static_cast<double>(http_->open_connections()); }));
  (void)opts_.registry->Register(std::make_shared<metrics::FuncMetric>(
      metrics::MetricType::kCounter,
      metrics::Opts{"vigil_web_connections_closed_slow_headers_total",
                    "Connections closed because their request headers were "
                    "not in within the header grace (500 ms) while other "
                    "connections waited for a worker (slowloris defence).",
                    {},
                    {}},
      [this] { return static_cast<double>(http_->slow_header_closes()); }));
  (void)opts_.registry->Register(std::make_shared<metrics::FuncMetric>(
      metrics::MetricType::kGauge,
      metrics::Opts{"vigil_web_connections_limit",
                    "The most connections open at once (--web.max-connections; "
                    "0: no limit).",
                    {},
                    {}},
      [limit = ho.max_connections] { return static_cast<double>(limit); }));

  Route("GET", "/-/healthy", [](const net::HttpRequest&, net::HttpResponse* r) {
    Text(r, 200, "Vigil Server is Healthy.\n");
  });
  Route("GET", "/-/ready",
        [this](const net::HttpRequest&, net::HttpResponse* r) {
          std::string why;
          if (api_.load() == nullptr) {
            Text(r, 503, "Service Unavailable");
          } else if (opts_.not_ready && !(why = opts_.not_ready()).empty()) {
            Text(r, 503, "Service Unavailable: " + why + "\n");
          } else {
            Text(r, 200, "Vigil Server is Ready.\n");
          }
        });
  auto lifecycle = [this](bool reload) {
    return [this, reload](const net::HttpRequest&, net::HttpResponse* r) {
      if (!opts_.flags->enable_lifecycle) {
        Text(r, 403, "Lifecycle API is not enabled.");
        return;
      }
      if (!reload) {
        Text(r, 200, "Requesting termination... Goodbye!");
        if (opts_.quit) opts_.quit();
        return;
      }
      absl::Status st = opts_.reload ? opts_.reload() : absl::OkStatus();
      if (st.ok()) {
        Text(r, 200, "");
      } else {
        Text(r, 500,
             fmt::format("failed to reload config: {}\n",
                         std::string(st.message())));
      }
    };
  };
  for (const char* m : {"POST", "PUT"}) {
    Route(m, "/-/reload", lifecycle(true));
    Route(m, "/-/quit", lifecycle(false));
  }
  Route("GET", "/metrics",
        [this](const net::HttpRequest&, net::HttpResponse* r) {
          r->status = 200;
          r->SetHeader("Content-Type", std::string(metrics::kTextContentType));
          opts_.registry->WriteText(&r->body);
        });
  // The admin API (--web.enable-admin-api), answered as Prometheus does.
  auto admin_json = [](net::HttpResponse* r, int status, std::string body) {
    r->status = status;
    r->SetHeader("Content-Type", "application/json");
    r->body = std::move(body);
  };
  auto snapshot = [this, admin_json](const net::HttpRequest&,
                                     net::HttpResponse* r) {
    if (!opts_.flags->enable_admin_api) {
      return admin_json(r, 503,
                        "{\"status\":\"error\",\"errorType\":"
                        "\"unavailable\",\"error\":\"admin APIs disabled\"}");
    }
    auto name = opts_.snapshot ? opts_.snapshot()
                               : absl::UnavailableError("no storage");
    if (!name.ok()) {
      return admin_json(
          r, 500,
          fmt::format("{{\"status\":\"error\",\"errorType\":\"internal\","
                      "\"error\":\"create snapshot: {}\"}}",
                      std::string(name.status().message())));
    }
    admin_json(r, 200,
               fmt::format("{{\"status\":\"success\",\"data\":{{\"name\":"
                           "\"{}\"}}}}",
                           *name));
  };
  // delete_series and clean_tombstones answer 204 without a body on
  // success, and the API's error JSON otherwise, as Prometheus does.
  auto admin_enabled = [this, admin_json](net::HttpResponse* r) {
    if (opts_.flags->enable_admin_api) return true;
    admin_json(r, 503,
               "{\"status\":\"error\",\"errorType\":"
               "\"unavailable\",\"error\":\"admin APIs disabled\"}");
    return false;
  };
  auto no_content = [](net::HttpResponse* r) {
    r->status = 204;
    r->headers.clear();
    r->body.clear();
  };
  auto delete_series = [this, admin_enabled, no_content](
                           const net::HttpRequest& req, net::HttpResponse* r) {
    if (!admin_enabled(r)) return;
    if (!req.params_error.empty()) {
      return api::RespondError(
          r, api::ApiErrorType::kBadData,
          "error parsing form values: " + req.params_error);
    }
    std::vector<std::string_view> match = api::FormValues(req, "match[]");
    if (match.empty()) {
      return api::RespondError(r, api::ApiErrorType::kBadData,
                               "no match[] parameter provided");
    }
    auto start = api::ParseTimeParam(req, "start", api::kApiMinTime);
    if (!start.ok()) {
      return api::RespondInvalidParam(r, "start", start.status());
    }
    auto end = api::ParseTimeParam(req, "end", api::kApiMaxTime);
    if (!end.ok()) return api::RespondInvalidParam(r, "end", end.status());
    // Every selector is parsed before anything is deleted (Prometheus
    // deletes selector by selector, so a bad second one leaves the first
    // deleted; the answer is the same).
    std::vector<std::vector<Matcher>> sets;
    for (std::string_view m : match) {
      auto ms = promql::ParseMetricSelector(m);
      if (!ms.ok()) return api::RespondInvalidParam(r, "match[]", ms.status());
      sets.push_back(std::move(*ms));
    }
    for (const auto& ms : sets) {
      absl::Status st = opts_.delete_series
                            ? opts_.delete_series(ms, *start, *end)
                            : absl::UnavailableError("no storage");
      if (!st.ok()) {
        return api::RespondError(r, api::ApiErrorType::kInternal,
                                 api::Sv(st.message()));
      }
    }
    no_content(r);
  };
  auto clean_tombstones = [this, admin_enabled, no_content](
                              const net::HttpRequest&, net::HttpResponse* r) {
    if (!admin_enabled(r)) return;
    absl::Status st = opts_.clean_tombstones
                          ? opts_.clean_tombstones()
                          : absl::UnavailableError("no storage");
    if (!st.ok()) {
      return api::RespondError(r, api::ApiErrorType::kInternal,
                               api::Sv(st.message()));
    }
    no_content(r);
  };
  for (const char* m : {"POST", "PUT"}) {
    Route(m, "/api/v1/admin/tsdb/snapshot", snapshot);
    Route(m, "/api/v1/admin/tsdb/delete_series", delete_series);
    Route(m, "/api/v1/admin/tsdb/clean_tombstones", clean_tombstones);
  }
  // Other methods would fall to /api/v1/*rest (404); Prometheus's router
  // answers 405 naming the methods it takes.
  auto not_allowed = [](const net::HttpRequest&, net::HttpResponse* r) {
    Text(r, 405, "Method Not Allowed\n");
    r->SetHeader("Allow", "OPTIONS, POST, PUT");
  };
  for (const char* m : {"GET", "DELETE"}) {
    Route(m, "/api/v1/admin/tsdb/delete_series", not_allowed);
    Route(m, "/api/v1/admin/tsdb/clean_tombstones", not_allowed);
  }

  // The remote-write receiver (server/remote/receiver.h), answered as
  // Prometheus does when it is off.
  Route("POST", "/api/v1/write",
        [this](const net::HttpRequest& req, net::HttpResponse* r) {
          if (!opts_.flags->enable_remote_write_receiver) {
            return Text(r, 404,
                        "remote write receiver needs to be enabled with "
                        "--web.enable-remote-write-receiver\n");
          }
          remote::Receiver* rw = remote_write_.load();
          if (rw == nullptr) return Text(r, 503, "Service Unavailable");
          rw->Serve(req, r);
        });
  for (const char* m : {"GET", "PUT", "DELETE"}) {
    Route(m, "/api/v1/write",
          [](const net::HttpRequest&, net::HttpResponse* r) {
            Text(r, 405, "Method Not Allowed\n");
            r->SetHeader("Allow", "OPTIONS, POST");
          });
  }

  // The API, live once SetApi() is called: every method on /api/v1/* and
  // /federate goes to Api::Serve, which routes (404/405) itself.
  auto api = [this](const net::HttpRequest& req, net::HttpResponse* r) {
    api::Api* a = api_.load();
    if (a == nullptr) {
      r->status = 503;
      r->SetHeader("Content-Type", "application/json");
      r->body =
          "{\"status\":\"error\",\"errorType\":\"unavailable\","
          "\"error\":\"the storage is not open yet\"}";
      return;
    }
    net::HttpRequest inner = req;
    auto rest = req.PathParam("rest");
    // "*rest" keeps its leading slash: "/api/v1/query" -> "/query".
    inner.path = rest ? "/api/v1" + std::string(*rest) : "/federate";
    inner.path_params.clear();
    a->Serve(inner, r);
  };
  for (const char* m : {"GET", "POST", "PUT", "DELETE"}) {
    Route(m, "/api/v1/*rest", api);
    Route(m, "/federate", api);
  }

  // Alert quality, beside the API (static routes win over /api/v1/*rest).
  if (api::AlertQualityApi* aq = opts_.alert_quality; aq != nullptr) {
    Route("POST", "/api/v1/alerts/feedback",
          [aq](const net::HttpRequest& req, net::HttpResponse* r) {
            aq->Feedback(req, r);
          });
    Route("GET", "/api/v1/alerts/feedback",
          [](const net::HttpRequest&, net::HttpResponse* r) {
            Text(r, 405, "Method Not Allowed\n");
            r->SetHeader("Allow", "POST");
          });
    Route("GET", "/api/v1/alerts/report",
          [aq](const net::HttpRequest& req, net::HttpResponse* r) {
            aq->Report(req, r);
          });
  }

  // Alertmanager's API, which answers its own 404s, 405s and CORS
  // preflights.
  if (api::v2::Api* am = opts_.alerting_api; am != nullptr) {
    auto v2 = [am](const net::HttpRequest& req, net::HttpResponse* r) {
      net::HttpRequest inner = req;
      inner.path = "/api/v2" + std::string(req.PathParam("rest").value_or(""));
      inner.path_params.clear();
      am->Serve(inner, r);
    };
    for (const char* m :
         {"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"}) {
      Route(m, "/api/v2/*rest", v2);
    }
  }
  if (opts_.probe) {
    for (const char* m : {"GET", "POST"}) Route(m, "/probe", opts_.probe);
  }

  // The web UI (server/web/ui), from memory, registered last.
  std::shared_ptr<const ui::Assets> assets = ui::Assets::Embedded(
      ui::Assets::BrowserPrefix(ho.route_prefix, opts_.flags->external_url));
  for (const char* m : {"GET", "HEAD"}) {
    for (std::string_view page : ui::Assets::PagePaths()) {
      Route(m, std::string(page),
            [assets](const net::HttpRequest& req, net::HttpResponse* r) {
              assets->ServePage(req, r);
            });
    }
    Route(m, "/assets/*file",
          [assets](const net::HttpRequest& req, net::HttpResponse* r) {
            std::string_view f = req.PathParam("file").value_or("");
            if (!f.empty() && f[0] == '/') f.remove_prefix(1);
            assets->ServeAsset(f, req, r);
          });
  }
}

Web::~Web() { Stop(); }

void Web::Route(const std::string& method, const std::string& pattern,
                net::HttpHandler h) {
  http_->Handle(method, pattern, std::move(h));
}

absl::StatusOr<int> Web::Start() {
  return http_->Start(opts_.flags->listen_address);
}

void Web::SetApi(api::Api* api) { api_.store(api); }

void Web::SetRemoteWriteReceiver(remote::Receiver* r) {
  remote_write_.store(r);
}

void Web::Stop() {
  if (http_) http_->Stop();
}

}  // namespace vigil::web
