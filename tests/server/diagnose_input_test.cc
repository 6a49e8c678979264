// Malformed input to diagnose: thresholds files (strict, file:line:col),
// the command's flags, /api/v1/diagnose's parameters, and what diagnose
// says over a database without any engine.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "server/diagnose/diagnose.h"
#include "server/diagnose/thresholds.h"
#include "server/web/api/v1/api.h"
#include "storage/db.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::diagnose::ParseThresholds;
using vigil::diagnose::Thresholds;
using vigil::testutil::Run;

std::string ThresholdsErr(std::string_view text) {
  auto t = ParseThresholds(text, "t.yml");
  REQUIRE(!t.ok());
  CHECK(t.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(t.status().message());
}

}  // namespace

TEST_CASE("diagnose thresholds decode strictly with file:line:col errors",
          "[diagnose]") {
  CHECK(ThresholdsErr("latency:\n  ttft_p99_seconds: \"2\"\n") ==
        "t.yml:2:21: yaml: unmarshal errors:\n  line 2: cannot unmarshal "
        "!!str `2` into float64");
  CHECK(ThresholdsErr("latency:\n  tpot: 1\n") ==
        "t.yml:2:3: yaml: unmarshal errors:\n  line 2: field tpot not found "
        "in type diagnose.Latency");
  CHECK(ThresholdsErr("window: 10m\n") ==
        "t.yml:1:1: yaml: unmarshal errors:\n  line 1: field window not found "
        "in type diagnose.Thresholds");
  CHECK(ThresholdsErr("windows:\n  recent: 10x\n") ==
        "t.yml:2:11: not a valid duration string: \"10x\"");
  CHECK(ThresholdsErr("windows:\n  recent: 0s\n") ==
        "t.yml:2:11: recent: must be a duration greater than 0");
  CHECK(ThresholdsErr("capacity:\n  queue_high: -1\n") ==
        "t.yml:2:15: queue_high: must be greater than 0; have -1");
  CHECK(ThresholdsErr("capacity:\n  kv_cache_high: [1]\n") ==
        "t.yml:2:18: yaml: unmarshal errors:\n  line 2: cannot unmarshal "
        "!!seq into float64");
  CHECK(ThresholdsErr("jobs:\n  engine: \"vllm(\"\n") ==
        "t.yml:2:11: engine: invalid regular expression \"vllm(\": missing ): "
        "^(?:vllm()$");
  CHECK(ThresholdsErr("gpu:\n  throttle_reasons: [hw_thermal, hot]\n") ==
        "t.yml:2:34: throttle_reasons: unknown reason \"hot\" (want one of "
        "idle, applications_clocks, sw_power_cap, hw_slowdown, sync_boost, "
        "sw_thermal, hw_thermal, hw_power_brake, display_clocks)");
  CHECK(ThresholdsErr("gpu: [\n").rfind("t.yml:2:1: yaml: ", 0) == 0);
  CHECK(ThresholdsErr(
            "capacity:\n  queue_high: 1\ncapacity:\n  kv_cache_high: 1\n")
            .find("already set") != std::string::npos);
  CHECK(ThresholdsErr("- 1\n").find(
            "cannot unmarshal !!seq into diagnose.Thresholds") !=
        std::string::npos);

  // Empty is the defaults; a partial file keeps the rest.
  auto empty = ParseThresholds("", "t.yml");
  REQUIRE(empty.ok());
  CHECK(empty->ttft_p99_seconds == 2);
  auto part = ParseThresholds(
      "latency:\n  ttft_p99_seconds: 1.5\ngpu:\n  throttle_reasons: [idle]\n",
      "t.yml");
  REQUIRE(part.ok());
  CHECK(part->ttft_p99_seconds == 1.5);
  CHECK(part->throttle_mask == 1);
  CHECK(part->tpot_p95_seconds == 0.05);

  // The shipped file is the built-in defaults, key for key.
  auto shipped = vigil::diagnose::LoadThresholdsFile(
      std::string(VIGIL_SOURCE_DIR) + "/examples/llm/diagnose.yml");
  REQUIRE(shipped.ok());
  const Thresholds d;
  CHECK(shipped->window_ms == d.window_ms);
  CHECK(shipped->baseline_window_ms == d.baseline_window_ms);
  CHECK(shipped->baseline_offset_ms == d.baseline_offset_ms);
  CHECK(shipped->engine_jobs == d.engine_jobs);
  CHECK(shipped->gpu_jobs == d.gpu_jobs);
  CHECK(shipped->probe_job == d.probe_job);
  CHECK(shipped->ttft_p99_seconds == d.ttft_p99_seconds);
  CHECK(shipped->tpot_p95_seconds == d.tpot_p95_seconds);
  CHECK(shipped->rise_ratio == d.rise_ratio);
  CHECK(shipped->flat_tolerance == d.flat_tolerance);
  CHECK(shipped->queue_high == d.queue_high);
  CHECK(shipped->kv_high == d.kv_high);
  CHECK(shipped->gpu_temp_celsius == d.gpu_temp_celsius);
  CHECK(shipped->throttle_mask == d.throttle_mask);
  CHECK(shipped->ecc_sbe_increase == d.ecc_sbe_increase);
  CHECK(shipped->ecc_window_ms == d.ecc_window_ms);
  CHECK(shipped->prefix_collapse_ratio == d.prefix_collapse_ratio);
  CHECK(shipped->prefix_min_baseline == d.prefix_min_baseline);
  CHECK(shipped->spec_acceptance_low == d.spec_acceptance_low);

  auto none = vigil::diagnose::LoadThresholdsFile("/nonexistent/t.yml");
  REQUIRE(!none.ok());
  CHECK(none.status().message() ==
        "/nonexistent/t.yml: cannot read thresholds file");
}

TEST_CASE("vigil diagnose rejects bad flags with exit code 2", "[diagnose]") {
  vigil::testutil::TempDir dir;
  const std::string v = VIGIL_BINARY;
  auto run = [&](const std::string& args) {
    return Run(v + " diagnose " + args);
  };
  auto r = run("");
  CHECK(r.code == 2);
  CHECK(r.err.find("exactly one of --server and --storage.tsdb.path") !=
        std::string::npos);
  CHECK(run("--server=http://x --storage.tsdb.path=" + dir.path()).code == 2);
  CHECK(run("--storage.tsdb.path=" + dir.path() + " extra").code == 2);
  r = run("--storage.tsdb.path=" + dir.path() + " --time=noon");
  CHECK(r.code == 2);
  CHECK(r.err.find("--time") != std::string::npos);
  r = run("--storage.tsdb.path=" + dir.path() + " -o yaml");
  CHECK(r.code == 2);
  CHECK(r.err.find("-o: want text or json") != std::string::npos);
  std::ofstream(dir.Sub("bad.yml")) << "capacity:\n  queue_high: x\n";
  r = run("--storage.tsdb.path=" + dir.path() +
          " --thresholds=" + dir.Sub("bad.yml"));
  CHECK(r.code == 2);
  CHECK(r.err.find(dir.Sub("bad.yml") + ":2:15: yaml: unmarshal errors") !=
        std::string::npos);
  r = run("--storage.tsdb.path=" + dir.Sub("nodb"));
  CHECK(r.code == 2);
  CHECK(r.err.find("open: ") != std::string::npos);
}

TEST_CASE("/api/v1/diagnose over a database without engines", "[diagnose]") {
  vigil::testutil::TempDir dir;
  auto db = vigil::storage::DB::Open({}, dir.path());
  REQUIRE(db.ok());
  auto app = (*db)->NewAppender();
  for (int64_t t = 0; t <= 600000; t += 15000) {
    REQUIRE(app->Append(0,
                        {{"__name__", "up"},
                         {"job", "node-exporter"},
                         {"instance", "h:9100"}},
                        t, t < 300000 ? 1 : 0)
                .ok());
  }
  REQUIRE(app->Commit().ok());
  vigil::promql::Engine engine;
  vigil::web::api::ApiOptions o;
  o.queryable = db->get();
  o.db = db->get();
  o.engine = &engine;
  o.now = [] { return int64_t{600000}; };
  vigil::web::api::Api api(o);
  auto call = [&](std::string method,
                  std::vector<std::pair<std::string, std::string>> params,
                  std::string params_error = "") {
    vigil::net::HttpRequest req;
    req.method = std::move(method);
    req.path = "/api/v1/diagnose";
    req.params = std::move(params);
    req.params_error = std::move(params_error);
    vigil::net::HttpResponse resp;
    api.Serve(req, &resp);
    return resp;
  };
  auto ok = call("GET", {});
  CHECK(ok.status == 200);
  CHECK(ok.body.rfind("{\"status\":\"success\",\"data\":{\"time\":600,", 0) ==
        0);
  CHECK(ok.body.find("\"findings\":[]") != std::string::npos);
  CHECK(ok.body.find("{\"kind\":\"target_down\",\"job\":\"node-exporter\","
                     "\"instance\":\"h:9100\"") != std::string::npos);
  CHECK(ok.body.find("\"kind\":\"no_engines\"") != std::string::npos);
  CHECK(call("POST", {{"time", "600"}}).body == ok.body);
  CHECK(call("DELETE", {}).status == 405);

  auto bad = call("GET", {{"time", "x"}});
  CHECK(bad.status == 400);
  CHECK(bad.body ==
        "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"invalid "
        "time value for 'time': cannot parse \\\"x\\\" to a valid "
        "timestamp\"}");
  auto to = call("GET", {{"timeout", "-"}});
  CHECK(to.status == 400);
  CHECK(to.body.find("invalid parameter \\\"timeout\\\"") != std::string::npos);
  auto esc = call("GET", {}, "invalid URL escape \"%zz\"");
  CHECK(esc.status == 400);
  CHECK(esc.body.find("invalid URL escape") != std::string::npos);
  // A tiny timeout ends the diagnosis as a query timeout (503), never
  // hangs it.
  auto tiny = call("GET", {{"timeout", "0.000001"}});
  INFO(tiny.status << " " << tiny.body);
  CHECK(tiny.status == 503);
  CHECK(tiny.body.find("\"errorType\":\"timeout\"") != std::string::npos);
  // A variant no engine has: nothing to diagnose, still a report.
  auto none = call("GET", {{"variant", "no-such"}});
  CHECK(none.status == 200);
  CHECK(none.body.find("\"variant\":\"no-such\",\"engines\":0") !=
        std::string::npos);
}
