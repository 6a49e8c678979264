// Runs the built `vigil check metrics` on the fixture pages and on
// malformed input, and, when `promtool` is on PATH, checks that it reaches
// the same verdict (exit code) and prints the same lint lines.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(VIGIL_SHARED_DIR) / "fixtures" / "metrics";

struct Result {
  int code = -1;
  std::string err;  // stderr
  std::string out;  // stdout
};

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `cmd` through the shell with `input` on stdin.
Result RunWithInput(const std::string& cmd, const std::string& input) {
  const fs::path dir = fs::temp_directory_path();
  const std::string tag = std::to_string(getpid());
  const fs::path in = dir / ("vigil_cm_in_" + tag);
  const fs::path out = dir / ("vigil_cm_out_" + tag);
  const fs::path err = dir / ("vigil_cm_err_" + tag);
  {
    std::ofstream f(in, std::ios::binary);
    f << input;
  }
  const std::string full = cmd + " <'" + in.string() + "' >'" + out.string() +
                           "' 2>'" + err.string() + "'";
  const int st = std::system(full.c_str());
  Result r;
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = Slurp(out);
  r.err = Slurp(err);
  fs::remove(in);
  fs::remove(out);
  fs::remove(err);
  return r;
}

Result VigilCheckMetrics(const std::string& input) {
  return RunWithInput(std::string("'") + VIGIL_BINARY + "' check metrics",
                      input);
}

bool HavePromtool() {
  static const bool have =
      std::system("command -v promtool >/dev/null 2>&1") == 0;
  return have;
}

Result Promtool(const std::string& input) {
  return RunWithInput("promtool check metrics", input);
}

// Same verdict as promtool; for lint problems also the same lines.
void CompareMetricsWithPromtool(const std::string& input) {
  if (!HavePromtool()) return;
  Result v = VigilCheckMetrics(input);
  Result p = Promtool(input);
  CHECK(v.code == p.code);
  if (p.code == 3 || p.code == 0) CHECK(v.err == p.err);
  if (p.code == 1) {
    CHECK(v.err.rfind("error while linting: ", 0) == 0);
    CHECK(p.err.rfind("error while linting: ", 0) == 0);
  }
}

}  // namespace

TEST_CASE("check metrics: verdicts on every fixture page",
          "[check_metrics][fixtures][shared]") {
  if (!fs::exists(kFixtures)) {
    WARN("fixtures folder missing: " << kFixtures);
    return;
  }
  int seen = 0;
  for (const auto& ent : fs::directory_iterator(kFixtures)) {
    if (ent.path().extension() != ".txt") continue;
    const std::string name = ent.path().filename().string();
    INFO(name);
    const std::string body = Slurp(ent.path());
    Result v = VigilCheckMetrics(body);
    ++seen;
    // Every page lints with problems except vllm-v0.txt, which lacks the
    // final newline promtool insists on.
    if (name == "vllm-v0.txt") {
      CHECK(v.code == 1);
      CHECK(v.err ==
            "error while linting: 178:78: unexpected end of input: the last "
            "line has no final newline\n");
    } else {
      CHECK(v.code == 3);
    }
    CompareMetricsWithPromtool(body);
  }
  CHECK(seen >= 9);
}

TEST_CASE("check metrics: known lint lines from real pages",
          "[check_metrics][fixtures][shared]") {
  if (!fs::exists(kFixtures)) return;
  auto has = [](const std::string& err, const std::string& line) {
    return err.find(line + "\n") != std::string::npos;
  };
  Result ing = VigilCheckMetrics(Slurp(kFixtures / "ingress-nginx.txt"));
  CHECK(has(ing.err,
            "nginx_ingress_controller_requests counter metrics "
            "should have \"_total\" suffix"));
  Result sg = VigilCheckMetrics(Slurp(kFixtures / "sglang.txt"));
  CHECK(has(sg.err,
            "sglang:cache_hit_rate metric names should not contain "
            "':'"));
  Result node = VigilCheckMetrics(Slurp(kFixtures / "node-exporter-e2e.txt"));
  CHECK(has(node.err,
            "node_entropy_available_bits use base unit \"bytes\" "
            "instead of \"bits\""));
  CHECK(std::count(node.err.begin(), node.err.end(), '\n') == 77);
  Result v1 = VigilCheckMetrics(Slurp(kFixtures / "vllm-v1.txt"));
  // A histogram named ..._total.
  CHECK(has(v1.err,
            "vllm:iteration_tokens_total non-counter metrics should "
            "not have \"_total\" suffix"));
  Result h100 = VigilCheckMetrics(
      Slurp(kFixtures / "dcgm-exporter-h100x8-sampled-aicr.txt"));
  // No HELP at all; one camelCase problem (modelName) per series.
  CHECK(has(h100.err, "DCGM_FI_DEV_GPU_TEMP no help text"));
  size_t camel = 0;
  for (size_t p = 0; (p = h100.err.find("'camelCase'", p)) != std::string::npos;
       ++p) {
    ++camel;
  }
  CHECK(camel == 30);
}

TEST_CASE("check metrics: malformed input exits 1 with line:col",
          "[check_metrics][errors]") {
  struct Case {
    std::string in;
    std::string err;
  };
  const std::vector<Case> cases = {
      {"# HELP a x\n# TYPE a gauge\na{1a=\"x\"} 1\n",
       "error while linting: 3:3: invalid label name \"1a\"\n"},
      {"foo{a=\"b\",a=\"c\"} 1\n",
       "error while linting: 1:11: duplicate label name \"a\" in \"foo\"\n"},
      {"DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION{gpu=\"0\"} ERROR - FAILED TO "
       "CONVERT TO STRING\n",
       "error while linting: 1:51: invalid value \"ERROR\": want a float, NaN, "
       "+Inf or -Inf\n"},
      {"# TYPE foo counter\nfoo 1\n# TYPE foo counter\n",
       "error while linting: 3:1: second TYPE line for metric name \"foo\", or "
       "TYPE reported after samples\n"},
      {"# HELP x a\n# HELP x b\nx 1\n",
       "error while linting: 2:1: second HELP line for metric name \"x\"\n"},
      {"x{a=\"\\t\"} 1\n",
       "error while linting: 1:6: invalid escape sequence \"\\\\t\" in label "
       "value (only \\\\, \\\" and \\n are allowed)\n"},
      {"x 1 2 3\n",
       "error while linting: 1:7: unexpected \"3\" after timestamp; want end "
       "of line\n"},
      {"x 1",
       "error while linting: 1:4: unexpected end of input: the last "
       "line has no final newline\n"},
  };
  for (const Case& c : cases) {
    INFO(c.in);
    Result v = VigilCheckMetrics(c.in);
    CHECK(v.code == 1);
    CHECK(v.err == c.err);
    CHECK(v.out.empty());
    CompareMetricsWithPromtool(c.in);
  }
}

TEST_CASE("check metrics: clean pages and lint rules agree with promtool",
          "[check_metrics]") {
  const std::string clean =
      "# HELP http_requests_total Requests.\n"
      "# TYPE http_requests_total counter\n"
      "http_requests_total{code=\"200\"} 3\n"
      "# HELP latency_seconds Latency.\n"
      "# TYPE latency_seconds histogram\n"
      "latency_seconds_bucket{le=\"0.1\"} 1\n"
      "latency_seconds_bucket{le=\"+Inf\"} 2\n"
      "latency_seconds_sum 0.3\n"
      "latency_seconds_count 2\n"
      "# HELP rpc_seconds RPC.\n"
      "# TYPE rpc_seconds summary\n"
      "rpc_seconds{quantile=\"0.5\"} NaN\n"
      "rpc_seconds_sum 0\n"
      "rpc_seconds_count 0\n"
      "# HELP never_observed Declared, no samples.\n"
      "# TYPE never_observed gauge\n";
  Result v = VigilCheckMetrics(clean);
  CHECK(v.code == 0);
  CHECK(v.err.empty());
  CompareMetricsWithPromtool(clean);

  const std::string lint =
      "# HELP foo_counter x\n# TYPE foo_counter gauge\nfoo_counter 1\n"
      "# HELP req x\n# TYPE req counter\nreq 1\n"
      "# HELP g_total x\n# TYPE g_total gauge\ng_total{le=\"1\"} 1\n"
      "g_total{le=\"2\"} 1\n"
      "# HELP a_ms x\n# TYPE a_ms "
      "histogram\na_ms_bucket{le=\"1\",fooBar=\"x\"} 1\n"
      "a_ms_bucket{le=\"+Inf\",fooBar=\"x\"} 1\na_ms_sum{fooBar=\"x\"} 1\n"
      "a_ms_count{fooBar=\"x\"} 1\n"
      "# HELP disk_kilobits x\n# TYPE disk_kilobits gauge\ndisk_kilobits 1\n"
      "# HELP up_sum x\n# TYPE up_sum gauge\nup_sum{quantile=\"0.5\"} 1\n"
      "untyped_no_help{camelLabel=\"x\"} 1\n"
      "recording:rule 1\n";
  v = VigilCheckMetrics(lint);
  CHECK(v.code == 3);
  CHECK(v.err.find("req counter metrics should have \"_total\" suffix\n") !=
        std::string::npos);
  CHECK(v.err.find("foo_counter metric name should not include type "
                   "'counter'\n") != std::string::npos);
  CHECK(v.err.find("disk_kilobits use base unit \"bytes\" instead of "
                   "\"kilobits\"\n") != std::string::npos);
  CompareMetricsWithPromtool(lint);
}

TEST_CASE("check metrics: rejects arguments, --help exits 0",
          "[check_metrics]") {
  CHECK(VigilCheckMetrics("").code == 0);
  Result r = RunWithInput(
      std::string("'") + VIGIL_BINARY + "' check metrics extra", "");
  CHECK(r.code == 2);
  r = RunWithInput(std::string("'") + VIGIL_BINARY + "' check metrics --help",
                   "");
  CHECK(r.code == 0);
  CHECK(r.out.find("usage: vigil check metrics") == 0);
}

TEST_CASE("check metrics: expfmt's verdicts on scrape-parser edge cases",
          "[check_metrics][errors]") {
  // Where Prometheus's scrape parser and promtool's expfmt disagree, check
  // metrics must side with promtool.
  const std::vector<std::pair<std::string, int>> cases = {
      {"# TYPE n untyped \nn 1\n", 1},
      {"# TYPE n\nn 1\n", 3},
      {"#TYPE x\nx 1\n", 3},
      {"# HELP n\nn 1\n", 3},
      {"# TYPE n GAUGE\nn 1\n", 3},
      {"s.9\n", 3},
      {"s{a=\"\"}5\n", 3},
      {"s +NaN\n", 1},
      {"s 1e-400\n", 3},
      {"s 1e400\n", 1},
      {"s{a=\"\\t\"} 1\n", 1},
      {"s{a=\"b\" c=\"d\"} 1\n", 1},
      {"s 1 -5\n", 3},
      {"s 1 2 \n", 1},
      {"s 1 \n", 1},
      {"# HELP n a\\tb\nn 1\n", 1},
  };
  for (const auto& [in, code] : cases) {
    INFO(in);
    CHECK(VigilCheckMetrics(in).code == code);
    CompareMetricsWithPromtool(in);
  }
}
