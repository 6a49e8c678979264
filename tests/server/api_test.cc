// The /api/v1 handlers called directly over a real DB and Engine.
#include "server/web/api/v1/api.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "catch2/catch.hpp"
#include "server/web/api/v1/json.h"
#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::web::api {
namespace {

using net::HttpRequest;
using net::HttpResponse;

// A DB with up{job="a"|"b"} and req_total{job="a"} every 15 s from 0 to
// 600 s, and an Api over it (the clock says 600 s).
struct Fixture {
  vigil::testutil::TempDir dir;
  std::unique_ptr<storage::DB> db;
  promql::Engine engine;
  std::unique_ptr<Api> api;

  explicit Fixture(int max_concurrency = 20) {
    auto d = storage::DB::Open({}, dir.path());
    REQUIRE(d.ok());
    db = std::move(*d);
    auto app = db->NewAppender();
    for (Timestamp t = 0; t <= 600000; t += 15000) {
      REQUIRE(app->Append(0, {{"__name__", "up"}, {"job", "a"}}, t, 1).ok());
      REQUIRE(app->Append(0, {{"__name__", "up"}, {"job", "b"}}, t, 0).ok());
      REQUIRE(app->Append(0, {{"__name__", "req_total"}, {"job", "a"}}, t,
                          t / 1000.0)
                  .ok());
    }
    REQUIRE(app->Commit().ok());
    REQUIRE(db->SetMetadata("req_total", {"counter", "Requests.", ""}).ok());
    ApiOptions o;
    o.queryable = db.get();
    o.db = db.get();
    o.engine = &engine;
    o.max_concurrency = max_concurrency;
    o.now = [] { return Timestamp{600000}; };
    api = std::make_unique<Api>(o);
  }

  HttpResponse Call(std::string method, std::string path,
                    std::vector<std::pair<std::string, std::string>> params,
                    const std::atomic<bool>* gone = nullptr) {
    HttpRequest req;
    req.method = std::move(method);
    req.path = std::move(path);
    req.params = std::move(params);
    req.client_gone = gone;
    HttpResponse resp;
    api->Serve(req, &resp);
    if (resp.stream) {
      resp.stream([&resp](std::string_view chunk) {
        resp.body.append(chunk);
        return true;
      });
    }
    return resp;
  }
  HttpResponse Get(
      std::string path,
      std::vector<std::pair<std::string, std::string>> params = {}) {
    return Call("GET", std::move(path), std::move(params));
  }
};

std::string ApiErr(std::string_view type, std::string_view msg) {
  return std::string(R"({"status":"error","errorType":")") + std::string(type) +
         R"(","error":")" + std::string(msg) + R"("})";
}

}  // namespace

TEST_CASE("JSON codec formats values, times and strings as Prometheus",
          "[api][json]") {
  std::string s;
  AppendSampleValue(&s, 1e6);
  CHECK(s == "1000000");
  s.clear();
  AppendSampleValue(&s, 1e-7);
  CHECK(s == "1e-07");
  s.clear();
  AppendSampleValue(&s, 1e21);
  CHECK(s == "1e+21");
  s.clear();
  AppendSampleValue(&s, std::numeric_limits<double>::infinity());
  CHECK(s == "+Inf");
  s.clear();
  AppendSampleValue(&s, std::nan(""));
  CHECK(s == "NaN");
  s.clear();
  AppendSampleTimestamp(&s, 1435781451781);
  CHECK(s == "1435781451.781");
  s.clear();
  AppendSampleTimestamp(&s, 1435781451780);
  CHECK(s == "1435781451.780");
  s.clear();
  AppendSampleTimestamp(&s, 1435781451000);
  CHECK(s == "1435781451");
  s.clear();
  AppendSampleTimestamp(&s, -1500);
  CHECK(s == "-1.500");
  s.clear();
  AppendGoJsonFloat(&s, 1e-7);
  CHECK(s == "1e-7");
  s.clear();
  AppendGoJsonFloat(&s, 60);
  CHECK(s == "60");
  s.clear();
  AppendGoTime(&s, 1672628645120);
  CHECK(s == "2023-01-02T03:04:05.12Z");
  s.clear();
  AppendGoTime(&s, kNoTime);
  CHECK(s == "0001-01-01T00:00:00Z");
  s.clear();
  AppendJsonEscaped(&s, "a<b>&\"\\\n\x01\xff\u2028é");
  CHECK(s == "a\\u003cb\\u003e\\u0026\\\"\\\\\\n\\u0001\\ufffd\\u2028é");
}

TEST_CASE("Streaming writer hands out pieces and stops when the client goes",
          "[api][json]") {
  promql::Value v;
  v.type = promql::ValueType::kMatrix;
  promql::Series s;
  for (int i = 0; i < 100000; ++i) {
    s.ts.push_back(i * 1000);
    s.vs.push_back(i);
  }
  v.matrix.push_back(s);
  std::string all;
  int pieces = 0;
  net::BodySink sink = [&](std::string_view c) {
    all.append(c);
    ++pieces;
    return true;
  };
  {
    JsonWriter w(&sink, 4096);
    w.Value(v);
    w.Flush();
  }
  CHECK(pieces > 10);
  CHECK(all.substr(0, 30) == R"([{"metric":{},"values":[[0,"0")");
  CHECK(all.substr(all.size() - 4) == "]]}]");
  int calls = 0;
  net::BodySink gone = [&](std::string_view) { return ++calls < 2; };
  JsonWriter w(&gone, 4096);
  w.Value(v);
  CHECK(calls == 2);
}

TEST_CASE("query returns Prometheus's vector, scalar and string JSON",
          "[api]") {
  Fixture f;
  auto r = f.Get("/api/v1/query", {{"query", "up"}, {"time", "600"}});
  CHECK(r.status == 200);
  CHECK(r.body ==
        R"({"status":"success","data":{"resultType":"vector","result":[)"
        R"({"metric":{"__name__":"up","job":"a"},"value":[600,"1"]},)"
        R"({"metric":{"__name__":"up","job":"b"},"value":[600,"0"]}]}})");
  r = f.Get("/api/v1/query", {{"query", "1.5"}, {"time", "1.5"}});
  CHECK(
      r.body ==
      R"({"status":"success","data":{"resultType":"scalar","result":[1.500,"1.5"]}})");
  r = f.Get("/api/v1/query", {{"query", "\"x<\""}, {"time", "2"}});
  CHECK(
      r.body ==
      R"({"status":"success","data":{"resultType":"string","result":[2,"x\u003c"]}})");
  // Default time: the API's clock.
  r = f.Get("/api/v1/query", {{"query", "time()"}});
  CHECK(
      r.body ==
      R"({"status":"success","data":{"resultType":"scalar","result":[600,"600"]}})");
  // RFC 3339 time.
  r = f.Get("/api/v1/query",
            {{"query", "time()"}, {"time", "1970-01-01T00:10:00Z"}});
  CHECK(
      r.body ==
      R"({"status":"success","data":{"resultType":"scalar","result":[600,"600"]}})");
  // A top-level range vector is a matrix.
  r = f.Get("/api/v1/query",
            {{"query", "up{job=\"a\"}[20s]"}, {"time", "600"}});
  CHECK(
      r.body ==
      R"({"status":"success","data":{"resultType":"matrix","result":[)"
      R"({"metric":{"__name__":"up","job":"a"},"values":[[585,"1"],[600,"1"]]}]}})");
}

TEST_CASE("query limit truncates with a warning, stats adds timings", "[api]") {
  Fixture f;
  auto r = f.Get("/api/v1/query",
                 {{"query", "up"}, {"time", "600"}, {"limit", "1"}});
  CHECK(r.body ==
        R"({"status":"success","data":{"resultType":"vector","result":[)"
        R"({"metric":{"__name__":"up","job":"a"},"value":[600,"1"]}]},)"
        R"("warnings":["results truncated due to limit"]})");
  r = f.Get("/api/v1/query",
            {{"query", "up"}, {"time", "600"}, {"stats", "true"}});
  CHECK(r.body.find(R"("stats":{"timings":{"evalTotalTime":)") !=
        std::string::npos);
  // As Prometheus counts them: a point per series and step for an instant
  // selector (Prometheus 2.42 answers 2 and 2 here too).
  CHECK(r.body.find(
            R"("samples":{"totalQueryableSamples":2,"peakSamples":2}})") !=
        std::string::npos);
}

// totalQueryableSamples counts every sample of every step's window for a
// range selector, (t - range, t] as Prometheus 3 selects them (Prometheus
// 2.42's windows also include t - range: 10 and 15 there).
TEST_CASE("query stats count the samples the selectors read", "[api]") {
  Fixture f;
  auto samples = [](const std::string& body) {
    size_t at = body.find(R"("samples":)");
    return at == std::string::npos ? std::string() : body.substr(at);
  };
  auto r = f.Get(
      "/api/v1/query",
      {{"query", "count_over_time(up[1m])"}, {"time", "600"}, {"stats", "1"}});
  CHECK(samples(r.body).find(R"("totalQueryableSamples":8,)") !=
        std::string::npos);
  r = f.Get("/api/v1/query_range", {{"query", "rate(req_total[1m])"},
                                    {"start", "540"},
                                    {"end", "600"},
                                    {"step", "30"},
                                    {"stats", "1"}});
  CHECK(samples(r.body).find(R"("totalQueryableSamples":12,)") !=
        std::string::npos);
  r = f.Get("/api/v1/query_range", {{"query", "sum(up)"},
                                    {"start", "540"},
                                    {"end", "600"},
                                    {"step", "30"},
                                    {"stats", "1"}});
  // Six points read; the peak holds at least the six loaded at once.
  CHECK(samples(r.body).find(R"("totalQueryableSamples":6,"peakSamples":)") !=
        std::string::npos);
  CHECK(samples(r.body).find(R"("peakSamples":0)") == std::string::npos);
}

TEST_CASE("query_range returns a sorted matrix, by GET and form POST",
          "[api]") {
  Fixture f;
  const std::string want =
      R"({"status":"success","data":{"resultType":"matrix","result":[)"
      R"({"metric":{"job":"a"},"values":[[540,"1"],[570,"1"],[600,"1"]]}]}})";
  std::vector<std::pair<std::string, std::string>> p = {
      {"query", "sum by (job) (up{job=\"a\"})"},
      {"start", "540"},
      {"end", "600"},
      {"step", "30s"},
      {"timeout", "60s"}};
  CHECK(f.Get("/api/v1/query_range", p).body == want);
  CHECK(f.Call("POST", "/api/v1/query_range", p).body == want);
  p[3].second = "30";
  CHECK(f.Get("/api/v1/query_range", p).body == want);
}

TEST_CASE("large range results are streamed and equal the buffered JSON",
          "[api]") {
  Fixture f;
  HttpRequest req;
  req.method = "GET";
  req.path = "/api/v1/query_range";
  req.params = {{"query", "{__name__=~\".+\"}"},
                {"start", "0"},
                {"end", "1000"},
                {"step", "0.1"}};
  HttpResponse resp;
  f.api->Serve(req, &resp);
  INFO(resp.body.substr(0, 300));
  REQUIRE(resp.stream);
  CHECK(resp.body.empty());
  std::string body;
  resp.stream([&](std::string_view c) {
    body.append(c);
    return true;
  });
  CHECK(
      body.rfind(
          R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"req_total","job":"a"},"values":[[0,"0"],[0.100,"0"])",
          0) == 0);
  CHECK(body.substr(body.size() - 7) == "\"]]}]}}");
}

TEST_CASE("query parameter errors have Prometheus's text and code", "[api]") {
  Fixture f;
  struct Case {
    std::string path;
    std::vector<std::pair<std::string, std::string>> params;
    int status;
    std::string body;
  };
  const std::vector<Case> cases = {
      {"/api/v1/query",
       {{"query", "up"}, {"time", "x"}},
       400,
       ApiErr(
           "bad_data",
           R"(invalid parameter \"time\": invalid time value for 'time': cannot parse \"x\" to a valid timestamp)")},
      {"/api/v1/query",
       {},
       400,
       ApiErr(
           "bad_data",
           R"(invalid parameter \"query\": unknown position: parse error: no expression found in input)")},
      {"/api/v1/query", {{"query", "sum("}}, 400, ""},
      {"/api/v1/query",
       {{"query", "up"}, {"limit", "-1"}},
       400,
       ApiErr("bad_data",
              R"(invalid parameter \"limit\": limit must be non-negative)")},
      {"/api/v1/query",
       {{"query", "up"}, {"limit", "x"}},
       400,
       ApiErr(
           "bad_data",
           R"(invalid parameter \"limit\": strconv.Atoi: parsing \"x\": invalid syntax)")},
      {"/api/v1/query",
       {{"query", "up"}, {"timeout", "x"}},
       400,
       ApiErr(
           "bad_data",
           R"(invalid parameter \"timeout\": cannot parse \"x\" to a valid duration)")},
      {"/api/v1/query",
       {{"query", "up"}, {"lookback_delta", "x"}},
       400,
       ApiErr(
           "bad_data",
           R"(error parsing lookback delta duration: cannot parse \"x\" to a valid duration)")},
      {"/api/v1/query_range",
       {{"query", "up"}, {"start", "x"}},
       400,
       ApiErr(
           "bad_data",
           R"(invalid parameter \"start\": cannot parse \"x\" to a valid timestamp)")},
      {"/api/v1/query_range",
       {{"query", "up"}, {"start", "10"}},
       400,
       ApiErr(
           "bad_data",
           R"(invalid parameter \"end\": cannot parse \"\" to a valid timestamp)")},
      {"/api/v1/query_range",
       {{"query", "up"}, {"start", "10"}, {"end", "5"}},
       400,
       ApiErr(
           "bad_data",
           R"(invalid parameter \"end\": end timestamp must not be before start time)")},
      {"/api/v1/query_range",
       {{"query", "up"}, {"start", "0"}, {"end", "5"}, {"step", "0"}},
       400,
       ApiErr(
           "bad_data",
           R"(invalid parameter \"step\": zero or negative query resolution step widths are not accepted. Try a positive integer)")},
      {"/api/v1/query_range",
       {{"query", "up"}, {"start", "0"}, {"end", "5"}, {"step", "-1s"}},
       400,
       ApiErr(
           "bad_data",
           R"(invalid parameter \"step\": cannot parse \"-1s\" to a valid duration)")},
      {"/api/v1/query_range",
       {{"query", "up"}, {"start", "0"}, {"end", "11001"}, {"step", "1"}},
       400,
       ApiErr(
           "bad_data",
           "exceeded maximum resolution of 11,000 points per timeseries. Try "
           "decreasing the query resolution (?step=XX)")},
      {"/api/v1/query_range",
       {{"query", "up"}, {"start", "0"}, {"end", "1e15"}, {"step", "1e-300"}},
       400,
       ""},
      {"/api/v1/query_range",
       {{"query", "up[5m]"}, {"start", "0"}, {"end", "5"}, {"step", "1"}},
       400,
       ApiErr(
           "bad_data",
           R"(invalid parameter \"query\": invalid expression type \"range vector\" for range query, must be Scalar or instant Vector)")},
      {"/api/v1/query",
       {{"query", "{__name__=~\"up|req_total\"} * 2"}, {"time", "600"}},
       422,
       ApiErr("execution",
              "vector cannot contain metrics with the same labelset")},
  };
  for (const Case& c : cases) {
    INFO(c.path << " " << (c.params.empty() ? "" : c.params[0].second));
    auto r = f.Get(c.path, c.params);
    CHECK(r.status == c.status);
    if (!c.body.empty()) CHECK(r.body == c.body);
    CHECK(r.body.rfind(R"({"status":"error","errorType":")", 0) == 0);
  }
}

// A query that runs for minutes unless stopped: an hour of 1 s steps, each
// the maximum over a 10-minute window of 1 ms steps of vector(1) (~2*10^9
// values, within the default sample limit: 4.2 M at once).
constexpr char kSlowQuery[] =
    "max_over_time(max_over_time(vector(1)[10m:1ms])[1h:1s])";

TEST_CASE("a query stops when its client goes away (499) or times out (503)",
          "[api]") {
  Fixture f;
  const std::string slow = kSlowQuery;
  std::atomic<bool> gone{false};
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gone = true;
  });
  auto start = std::chrono::steady_clock::now();
  auto r =
      f.Call("GET", "/api/v1/query", {{"query", slow}, {"time", "600"}}, &gone);
  t.join();
  CHECK(r.status == 499);
  CHECK(r.body ==
        ApiErr("canceled", "query was canceled in expression evaluation"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  r = f.Get("/api/v1/query",
            {{"query", slow}, {"time", "600"}, {"timeout", "0.05"}});
  CHECK(r.status == 503);
  CHECK(r.body ==
        ApiErr("timeout", "query timed out in expression evaluation"));
}

TEST_CASE("max concurrency queues queries, the queue honours timeouts",
          "[api]") {
  Fixture f(1);
  const std::string slow = kSlowQuery;
  std::atomic<bool> gone{false};
  std::thread t([&] {
    f.Call("GET", "/api/v1/query", {{"query", slow}, {"time", "600"}}, &gone);
  });
  while (f.api->running_queries() == 0) std::this_thread::yield();
  auto r = f.Get("/api/v1/query", {{"query", "up"}, {"timeout", "0.02"}});
  CHECK(r.status == 503);
  CHECK(r.body == ApiErr("timeout", "query timed out in query queue"));
  gone = true;
  t.join();
  CHECK(f.api->running_queries() == 0);
  CHECK(f.Get("/api/v1/query", {{"query", "up"}}).status == 200);
}

TEST_CASE("series, labels and label values", "[api]") {
  Fixture f;
  auto r = f.Get("/api/v1/series", {{"match[]", "up"}});
  CHECK(
      r.body ==
      R"({"status":"success","data":[{"__name__":"up","job":"a"},{"__name__":"up","job":"b"}]})");
  r = f.Call("POST", "/api/v1/series",
             {{"match[]", "up{job=\"a\"}"},
              {"match[]", "{job=\"a\"}"},
              {"start", "0"},
              {"end", "600"}});
  CHECK(
      r.body ==
      R"({"status":"success","data":[{"__name__":"req_total","job":"a"},{"__name__":"up","job":"a"}]})");
  r = f.Get("/api/v1/series", {{"match[]", "up"}, {"limit", "1"}});
  CHECK(
      r.body ==
      R"({"status":"success","data":[{"__name__":"up","job":"a"}],"warnings":["results truncated due to limit"]})");
  CHECK(f.Get("/api/v1/series").body ==
        ApiErr("bad_data", "no match[] parameter provided"));
  CHECK(
      f.Get("/api/v1/series", {{"match[]", "{job=\"\"}"}}).body ==
      ApiErr(
          "bad_data",
          R"(invalid parameter \"match[]\": match[] must contain at least one non-empty matcher)"));
  CHECK(f.Get("/api/v1/series", {{"match[]", "up{"}}).status == 400);
  CHECK(
      f.Get("/api/v1/series", {{"match[]", "up"}, {"start", "x"}}).body ==
      ApiErr(
          "bad_data",
          R"(invalid parameter \"start\": invalid time value for 'start': cannot parse \"x\" to a valid timestamp)"));

  r = f.Get("/api/v1/labels");
  CHECK(r.body == R"({"status":"success","data":["__name__","job"]})");
  r = f.Get("/api/v1/label/__name__/values");
  CHECK(r.body == R"({"status":"success","data":["req_total","up"]})");
  r = f.Get("/api/v1/label/job/values", {{"match[]", "req_total"}});
  CHECK(r.body == R"({"status":"success","data":["a"]})");
  r = f.Get("/api/v1/label/job/values", {{"limit", "1"}});
  CHECK(
      r.body ==
      R"({"status":"success","data":["a"],"warnings":["results truncated due to limit"]})");
  // U__ escaping: U__jo_62_ is "job".
  r = f.Get("/api/v1/label/U__jo_62_/values");
  CHECK(r.body == R"({"status":"success","data":["a","b"]})");
  r = f.Get("/api/v1/label/U__x_zz_/values");  // malformed: kept as written
  CHECK(r.body == R"({"status":"success","data":[]})");
}

TEST_CASE("exemplars, format_query, parse_query", "[api]") {
  Fixture f;
  CHECK(f.Get("/api/v1/query_exemplars", {{"query", "up"}}).body ==
        R"({"status":"success","data":[]})");
  CHECK(f.Get("/api/v1/format_query", {{"query", "sum by(job)(rate(x[5m]))"}})
            .body ==
        "{\"status\":\"success\",\"data\":\"sum by (job) (rate(x[5m]))\"}");
  CHECK(
      f.Get("/api/v1/parse_query", {{"query", "-x{a=\"b\"} offset 1m"}}).body ==
      R"({"status":"success","data":{"expr":{"anchored":false,"matchers":[{"name":"a","type":"=","value":"b"},)"
      R"({"name":"__name__","type":"=","value":"x"}],"name":"x","offset":60000,"offsetExpr":null,)"
      R"("smoothed":false,"startOrEnd":null,"timestamp":null,"type":"vectorSelector"},"op":"-","type":"unaryExpr"}})");
  CHECK(f.Get("/api/v1/format_query", {{"query", "x +"}}).status == 400);
}

TEST_CASE("empty sources answer like a Prometheus without them", "[api]") {
  Fixture f;
  CHECK(f.Get("/api/v1/rules").body ==
        R"({"status":"success","data":{"groups":[]}})");
  CHECK(f.Get("/api/v1/rules", {{"type", "x"}}).body ==
        ApiErr("bad_data",
               R"(invalid parameter \"type\": not supported value \"x\")"));
  CHECK(f.Get("/api/v1/alerts").body ==
        R"({"status":"success","data":{"alerts":[]}})");
  CHECK(
      f.Get("/api/v1/alertmanagers").body ==
      R"({"status":"success","data":{"activeAlertmanagers":[],"droppedAlertmanagers":[]}})");
  CHECK(
      f.Get("/api/v1/targets").body ==
      R"({"status":"success","data":{"activeTargets":[],"droppedTargets":[],"droppedTargetCounts":{}}})");
  CHECK(f.Get("/api/v1/targets/metadata").body ==
        R"({"status":"success","data":[]})");
  CHECK(
      f.Get("/api/v1/metadata").body ==
      R"({"status":"success","data":{"req_total":[{"type":"counter","help":"Requests.","unit":""}]}})");
  CHECK(f.Get("/api/v1/metadata", {{"limit", "x"}}).body ==
        ApiErr("bad_data", "limit must be a number"));
  CHECK(f.Get("/api/v1/status/walreplay").body ==
        R"({"status":"success","data":{"min":0,"max":0,"current":0}})");
  CHECK(f.Get("/api/v1/status/config").body ==
        R"({"status":"success","data":{"yaml":""}})");
  CHECK(f.Get("/api/v1/status/flags").body ==
        R"({"status":"success","data":{}})");
  CHECK(f.Get("/api/v1/status/buildinfo").status == 200);
  CHECK(f.Get("/api/v1/status/runtimeinfo").status == 200);
}

TEST_CASE("status/tsdb reports the cardinality audit", "[api]") {
  Fixture f;
  auto r = f.Get("/api/v1/status/tsdb", {{"limit", "1"}});
  CHECK(
      r.body.rfind(
          R"({"status":"success","data":{"headStats":{"numSeries":3,"numLabelPairs":4,)",
          0) == 0);
  CHECK(r.body.find(R"("chunkCount":3,)") != std::string::npos);
  CHECK(r.body.find(R"("seriesCountByMetricName":[{"name":"up","value":2}])") !=
        std::string::npos);
  CHECK(
      r.body.find(
          R"("labelValueCountByLabelName":[{"name":"__name__","value":2}])") !=
      std::string::npos);
  CHECK(
      r.body.find(
          R"("seriesCountByLabelValuePair":[{"name":"__name__=up","value":2}])") !=
      std::string::npos);
  CHECK(f.Get("/api/v1/status/tsdb", {{"limit", "0"}}).body ==
        ApiErr("bad_data", "limit must be a positive number"));
  CHECK(f.Get("/api/v1/status/tsdb", {{"limit", "10001"}}).body ==
        ApiErr("bad_data", "limit must not exceed 10000"));
}

TEST_CASE("federate writes the latest samples as text exposition", "[api]") {
  Fixture f;
  auto r = f.Get("/federate", {{"match[]", "up"}});
  CHECK(r.status == 200);
  CHECK(r.body ==
        "# TYPE up untyped\nup{job=\"a\"} 1 600000\nup{job=\"b\"} 0 600000\n");
  CHECK(f.Get("/federate", {{"match[]", "up{"}}).status == 400);
}

TEST_CASE("routing: unknown paths 404, wrong methods 405", "[api]") {
  Fixture f;
  auto r = f.Get("/api/v1/nope");
  CHECK(r.status == 404);
  CHECK(r.body == "404 page not found\n");
  CHECK(f.Call("POST", "/api/v1/rules", {}).status == 405);
  std::vector<std::string> routes;
  f.api->Register([&](std::string m, std::string p, net::HttpHandler) {
    routes.push_back(m + " " + p);
  });
  CHECK(std::find(routes.begin(), routes.end(),
                  "GET /api/v1/label/:name/values") != routes.end());
  CHECK(std::find(routes.begin(), routes.end(), "POST /api/v1/query_range") !=
        routes.end());
}

// The requests Grafana's Prometheus data source sends (pkg/promlib/client
// and the language provider), replayed against the handlers.
TEST_CASE("Grafana's data source requests succeed", "[api][grafana]") {
  Fixture f;
  auto ok = [&](std::string method, std::string path,
                std::vector<std::pair<std::string, std::string>> p) {
    auto r = f.Call(method, path, std::move(p));
    INFO(method << " " << path << " -> " << r.body);
    CHECK(r.status == 200);
    CHECK(r.body.rfind(R"({"status":"success")", 0) == 0);
  };
  ok("GET", "/api/v1/status/buildinfo", {});
  ok("GET", "/api/v1/rules", {});
  ok("POST", "/api/v1/query",
     {{"query", "1+1"}, {"time", "600"}, {"timeout", "60s"}});
  ok("POST", "/api/v1/query_range",
     {{"query", "rate(req_total[1m])"},
      {"start", "300"},
      {"end", "600"},
      {"step", "15"},
      {"timeout", "60s"}});
  ok("POST", "/api/v1/query_exemplars",
     {{"query", "req_total"}, {"start", "300"}, {"end", "600"}});
  ok("POST", "/api/v1/labels", {{"start", "300"}, {"end", "600"}});
  ok("GET", "/api/v1/labels",
     {{"start", "300"}, {"end", "600"}, {"match[]", "up"}});
  ok("GET", "/api/v1/label/__name__/values",
     {{"start", "300"}, {"end", "600"}});
  ok("GET", "/api/v1/label/job/values",
     {{"match[]", "{__name__=\"up\"}"}, {"start", "300"}, {"end", "600"}});
  ok("POST", "/api/v1/series",
     {{"match[]", "{__name__=\"up\"}"}, {"start", "300"}, {"end", "600"}});
  ok("GET", "/api/v1/metadata", {});
  ok("GET", "/api/v1/metadata", {{"metric", "req_total"}, {"limit", "1"}});
}

}  // namespace vigil::web::api
