// libFuzzer target: the HTTP API's parameter parsing (server/web/api/v1),
// without sockets. The input reads like a request:
//   METHOD SP PATH [ "?" QUERY ] [ "\n" FORM-BODY ]
// The query string and form body are decoded as the server decodes them
// (net::ParseQuery, Go's url.ParseQuery) and the request is dispatched by
// Api::Serve over a small in-memory database, so time, duration, step,
// limit, match[], timeout, lookback_delta and the query itself are parsed
// by the handlers; every parameter value also goes through the parsers
// directly. Queries run with small limits. Besides not crashing: the
// status is one the API documents, never 500 (bad input is the client's
// fault), and an error body is Prometheus's error JSON.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/labels.h"
#include "promql/engine.h"
#include "promql/promqltest/storage.h"
#include "server/net/http.h"
#include "server/net/router.h"
#include "server/web/api/v1/api.h"
#include "server/web/api/v1/util.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace api = vigil::web::api;
namespace net = vigil::net;
namespace promql = vigil::promql;
using vigil::Labels;

struct World {
  promql::promqltest::MemStorage db;
  promql::Engine engine{[] {
    promql::EngineOptions o;
    o.max_samples = 20000;
    o.timeout_ms = 2000;
    return o;
  }()};
  std::unique_ptr<api::Api> a;

  World() {
    for (int64_t t = 0; t <= 600000; t += 15000) {
      db.Append(Labels{{"__name__", "up"}, {"job", "a"}}, t, 1);
      db.Append(Labels{{"__name__", "up"}, {"job", "b"}}, t, 0);
      db.Append(
          Labels{{"__name__", "req_total"}, {"code", "200"}, {"job", "a"}}, t,
          t / 1000.0);
    }
    api::ApiOptions o;
    o.queryable = &db;
    o.engine = &engine;
    o.max_concurrency = 2;
    o.stream_min_points = 100;  // exercise the streamed bodies too
    o.now = [] { return vigil::Timestamp{600000}; };
    a = std::make_unique<api::Api>(o);
  }
};

bool DocumentedStatus(int s) {
  switch (s) {
    case 200:
    case 204:
    case 400:
    case 404:
    case 405:
    case 406:
    case 422:
    case 499:
    case 503:
      return true;
    default:
      return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  static World* w = new World();
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t sp = in.find(' ');
  if (sp == std::string_view::npos) return 0;
  net::HttpRequest req;
  req.method = std::string(in.substr(0, sp));
  std::string_view rest = in.substr(sp + 1);
  std::string_view body;
  if (size_t nl = rest.find('\n'); nl != std::string_view::npos) {
    body = rest.substr(nl + 1);
    rest = rest.substr(0, nl);
  }
  std::string_view query;
  if (size_t q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  req.path = std::string(rest);
  req.params_error = net::ParseQuery(query, &req.params);
  if (!body.empty()) {
    req.body = std::string(body);
    req.headers.push_back(
        {"content-type", "application/x-www-form-urlencoded"});
    std::string e = net::ParseQuery(body, &req.params);
    if (req.params_error.empty()) req.params_error = e;
  }

  for (const auto& [k, v] : req.params) {
    (void)api::ParseApiTime(v);
    (void)api::ParseApiDurationNs(v);
    (void)api::ParseLimitParam(v);
  }
  (void)api::ParseMatchersParam(req.Params("match[]"));

  net::HttpResponse resp;
  w->a->Serve(req, &resp);
  if (resp.stream) {
    resp.stream([&resp](std::string_view chunk) {
      resp.body.append(chunk);
      return true;
    });
  }
  FUZZ_CHECK(DocumentedStatus(resp.status),
             std::to_string(resp.status) + " for " + req.method + " " +
                 req.path + ": " + resp.body.substr(0, 500));
  // The API answers errors in its JSON envelope; /federate, like
  // Prometheus's (http.Error), in plain text.
  if (resp.status >= 400 && resp.status != 404 && resp.status != 405 &&
      req.path.rfind("/api/", 0) == 0) {
    FUZZ_CHECK(resp.body.rfind("{\"status\":\"error\"", 0) == 0,
               "error body is not Prometheus's error JSON: " +
                   resp.body.substr(0, 500));
  }
  return 0;
}
