// /api/v1/query, /query_range, /query_exemplars, /format_query, /parse_query.
#include <chrono>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "promql/parser.h"
#include "server/web/api/v1/api.h"
#include "server/web/api/v1/ast_json.h"
#include "server/web/api/v1/util.h"

namespace vigil::web::api {

struct Api::QueryParams {
  std::string_view query;
  Timestamp start = 0, end = 0;
  int64_t step_ms = 0;  // 0: instant
  int64_t limit = 0;
  std::optional<int64_t> timeout_ns;
  int64_t lookback_ms = 0;  // 0: the engine's
  std::string_view stats;
};

namespace {

using QueryClock = promql::QueryContext::Clock;

double Seconds(QueryClock::duration d) {
  return std::chrono::duration<double>(d).count();
}

size_t Points(const promql::Value& v) {
  size_t n = v.vector.size();
  for (const promql::Series& s : v.matrix) n += s.size();
  return n;
}

// Prometheus's default stats renderer: timings and sample counts.
void WriteStats(JsonWriter& w, const promql::Result& r, double queue_s,
                double eval_s, double total_s) {
  w.StartObject();
  w.Key("timings");
  w.StartObject();
  w.Key("evalTotalTime");
  w.Float(eval_s);
  w.Key("resultSortTime");
  w.Float(0);
  w.Key("queryPreparationTime");
  w.Float(0);
  w.Key("innerEvalTime");
  w.Float(eval_s);
  w.Key("execQueueTime");
  w.Float(queue_s);
  w.Key("execTotalTime");
  w.Float(total_s);
  w.EndObject();
  w.Key("samples");
  w.StartObject();
  w.Key("totalQueryableSamples");
  w.Int(r.total_queryable_samples);
  w.Key("peakSamples");
  w.Int(r.peak_samples);
  w.EndObject();
  w.EndObject();
}

}  // namespace

void Api::Query(const net::HttpRequest& req, net::HttpResponse* resp) const {
  QueryParams p;
  auto limit = ParseLimitParam(FormValue(req, "limit"));
  if (!limit.ok()) return RespondInvalidParam(resp, "limit", limit.status());
  p.limit = *limit;
  auto t = ParseTimeParam(req, "time", Now());
  if (!t.ok()) return RespondInvalidParam(resp, "time", t.status());
  p.start = p.end = *t;
  RunQuery(req, p, resp);
}

void Api::QueryRange(const net::HttpRequest& req,
                     net::HttpResponse* resp) const {
  QueryParams p;
  auto limit = ParseLimitParam(FormValue(req, "limit"));
  if (!limit.ok()) return RespondInvalidParam(resp, "limit", limit.status());
  p.limit = *limit;
  auto start = ParseApiTime(FormValue(req, "start"));
  if (!start.ok()) return RespondInvalidParam(resp, "start", start.status());
  auto end = ParseApiTime(FormValue(req, "end"));
  if (!end.ok()) return RespondInvalidParam(resp, "end", end.status());
  if (*end < *start) {
    return RespondInvalidParam(resp, "end",
                               "end timestamp must not be before start time");
  }
  auto step = ParseApiDurationNs(FormValue(req, "step"));
  if (!step.ok()) return RespondInvalidParam(resp, "step", step.status());
  if (*step <= 0) {
    return RespondInvalidParam(resp, "step",
                               "zero or negative query resolution step widths "
                               "are not accepted. Try a positive integer");
  }
  // Go's Time.Sub saturates at the largest Duration.
  __int128 span_ns = static_cast<__int128>(*end - *start) * 1000000;
  if (span_ns > INT64_MAX) span_ns = INT64_MAX;
  if (span_ns / *step > 11000) {
    return RespondError(resp, ApiErrorType::kBadData,
                        "exceeded maximum resolution of 11,000 points per "
                        "timeseries. Try decreasing the query resolution "
                        "(?step=XX)");
  }
  p.start = *start;
  p.end = *end;
  // The engine steps in ms; a step below 1 ms would never advance.
  p.step_ms = std::max<int64_t>(1, *step / 1000000);
  RunQuery(req, p, resp);
}

void Api::RunQuery(const net::HttpRequest& req, const QueryParams& in,
                   net::HttpResponse* resp) const {
  QueryParams p = in;
  if (std::string_view to = FormValue(req, "timeout"); !to.empty()) {
    auto d = ParseApiDurationNs(to);
    if (!d.ok()) return RespondInvalidParam(resp, "timeout", d.status());
    p.timeout_ns = *d;
  }
  if (std::string_view lb = FormValue(req, "lookback_delta"); !lb.empty()) {
    auto d = ParseApiDurationNs(lb);
    if (!d.ok()) {
      return RespondError(resp, ApiErrorType::kBadData,
                          Cat("error parsing lookback delta duration: ",
                              Sv(d.status().message())));
    }
    p.lookback_ms = *d / 1000000;
  }
  p.stats = FormValue(req, "stats");
  p.query = FormValue(req, "query");

  const promql::Engine* engine = opts_.engine;
  std::optional<promql::Engine> custom;
  if (p.lookback_ms > 0) {
    promql::EngineOptions eo = engine->options();
    eo.lookback_delta_ms = p.lookback_ms;
    custom.emplace(eo);
    engine = &*custom;
  }
  promql::ParseOptions po;
  po.enable_experimental_functions =
      engine->options().enable_experimental_functions;
  auto expr = promql::ParseExpr(p.query, po);
  if (!expr.ok()) return RespondInvalidParam(resp, "query", expr.status());
  if (p.step_ms > 0) {
    promql::ValueType vt = promql::Type(**expr);
    if (vt != promql::ValueType::kScalar && vt != promql::ValueType::kVector) {
      return RespondInvalidParam(
          resp, "query",
          Cat("invalid expression type \"", promql::DocumentedTypeName(vt),
              "\" for range query, must be Scalar or instant Vector"));
    }
  }

  const QueryClock::time_point t0 = QueryClock::now();
  std::unique_ptr<promql::QueryContext> ctx;
  // Timeouts beyond ~30 years are no deadline (and cannot overflow).
  if (p.timeout_ns && *p.timeout_ns < (int64_t{1} << 60)) {
    ctx = std::make_unique<promql::QueryContext>(
        t0 + std::chrono::nanoseconds(*p.timeout_ns));
  } else {
    ctx = std::make_unique<promql::QueryContext>();
  }
  ctx->CancelWhen(req.client_gone);
  if (opts_.queries_delta) opts_.queries_delta(1);
  const absl::Status admitted = gate_->Acquire(*ctx);
  const QueryClock::time_point t1 = QueryClock::now();
  absl::StatusOr<promql::Result> res;
  if (!admitted.ok()) {
    res = admitted;
  } else {
    res = engine->Exec(opts_.queryable, **expr, p.query, p.start,
                       p.step_ms > 0 ? p.end : p.start, p.step_ms, ctx.get());
    gate_->Release();
  }
  const QueryClock::time_point t2 = QueryClock::now();
  if (opts_.queries_delta) opts_.queries_delta(-1);
  if (admitted.ok() && opts_.observe_inner_eval) {
    opts_.observe_inner_eval(Seconds(t2 - t1));
  }
  if (!res.ok()) return RespondStatus(resp, res.status());

  auto result = std::make_shared<promql::Result>(std::move(*res));
  size_t limit = 0;
  if (p.limit > 0) {
    const size_t n = result->value.type == promql::ValueType::kMatrix
                         ? result->value.matrix.size()
                     : result->value.type == promql::ValueType::kVector
                         ? result->value.vector.size()
                         : 0;
    if (n > static_cast<size_t>(p.limit)) {
      limit = static_cast<size_t>(p.limit);
      result->warnings.push_back("results truncated due to limit");
    }
  }
  const bool stats = !p.stats.empty();
  const double queue_s = Seconds(t1 - t0), eval_s = Seconds(t2 - t1),
               total_s = Seconds(t2 - t0);
  auto data = [result, limit, stats, queue_s, eval_s, total_s](JsonWriter& w) {
    w.StartObject();
    w.Key("resultType");
    w.String(promql::ValueTypeName(result->value.type));
    w.Key("result");
    w.Value(result->value, limit);
    if (stats) {
      w.Key("stats");
      WriteStats(w, *result, queue_s, eval_s, total_s);
    }
    w.EndObject();
  };
  if (Points(result->value) < opts_.stream_min_points) {
    return RespondData(resp, data, result->warnings, result->infos);
  }
  resp->status = 200;
  SetContentType(resp, "application/json");
  resp->body.clear();
  resp->stream = [result, data](const net::BodySink& sink) {
    JsonWriter w(&sink);
    WriteSuccess(w, data, result->warnings, result->infos);
    w.Flush();
  };
}

void Api::QueryExemplars(const net::HttpRequest& req,
                         net::HttpResponse* resp) const {
  auto start = ParseTimeParam(req, "start", kApiMinTime);
  if (!start.ok()) return RespondInvalidParam(resp, "start", start.status());
  auto end = ParseTimeParam(req, "end", kApiMaxTime);
  if (!end.ok()) return RespondInvalidParam(resp, "end", end.status());
  if (*end < *start) {
    return RespondError(resp, ApiErrorType::kBadData,
                        "end timestamp must not be before start timestamp");
  }
  auto expr = promql::ParseExpr(FormValue(req, "query"));
  if (!expr.ok()) return RespondStatus(resp, expr.status());
  // Vigil keeps no exemplars: every selector matches none.
  RespondData(resp, [](JsonWriter& w) {
    w.StartArray();
    w.EndArray();
  });
}

void Api::FormatQuery(const net::HttpRequest& req,
                      net::HttpResponse* resp) const {
  auto expr = promql::ParseExpr(FormValue(req, "query"));
  if (!expr.ok()) return RespondInvalidParam(resp, "query", expr.status());
  // Prometheus answers Expr.Pretty(0): lines of at most 100 characters.
  const std::string s = promql::Pretty(**expr);
  RespondData(resp, [&s](JsonWriter& w) { w.String(s); });
}

void Api::ParseQuery(const net::HttpRequest& req,
                     net::HttpResponse* resp) const {
  auto expr = promql::ParseExpr(FormValue(req, "query"));
  if (!expr.ok()) return RespondInvalidParam(resp, "query", expr.status());
  const promql::Expr& e = **expr;
  RespondData(resp, [&e](JsonWriter& w) { WriteAstJson(w, e); });
}

}  // namespace vigil::web::api
