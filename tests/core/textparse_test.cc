// Tests for core/textparse: every real page under shared/fixtures/metrics,
// hand-made malformed input (message and line:col), OpenMetrics features,
// huge lines, and a no-crash sweep over truncated and corrupted pages.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/textparse/parser.h"

namespace {

using vigil::textparse::Entry;
using vigil::textparse::Format;
using vigil::textparse::MetricType;
using vigil::textparse::Parser;

const std::filesystem::path kFixtures =
    std::filesystem::path(VIGIL_SHARED_DIR) / "fixtures" / "metrics";

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Counts {
  int series = 0, help = 0, type = 0, comment = 0;
  absl::Status status;
};

Counts ParseAll(std::string_view body, Format f = Format::kPrometheusText) {
  Counts c;
  Parser p(body, f);
  for (;;) {
    absl::StatusOr<Entry> e = p.Next();
    if (!e.ok()) {
      c.status = e.status();
      return c;
    }
    switch (*e) {
      case Entry::kSeries:
        ++c.series;
        break;
      case Entry::kHelp:
        ++c.help;
        break;
      case Entry::kType:
        ++c.type;
        break;
      case Entry::kComment:
        ++c.comment;
        break;
      case Entry::kUnit:
        break;
      case Entry::kEOF:
        return c;
    }
  }
}

// The error message of parsing `body`, or "" if it parses.
std::string ErrorOf(std::string_view body, Format f = Format::kPrometheusText) {
  absl::Status s = ParseAll(body, f).status;
  return std::string(s.message());
}

// Advances `p` to the next series; fails the test otherwise.
void NextSeries(Parser& p) {
  for (;;) {
    absl::StatusOr<Entry> e = p.Next();
    REQUIRE(e.ok());
    REQUIRE(*e != Entry::kEOF);
    if (*e == Entry::kSeries) return;
  }
}

std::string LabelValue(const Parser& p, std::string_view name) {
  for (size_t i = 0; i < p.NumLabels(); ++i) {
    if (p.Label(i).name == name) return std::string(p.Label(i).value);
  }
  return "<absent>";
}

}  // namespace

TEST_CASE(
    "Every fixture page parses with the sample, HELP and TYPE counts "
    "grep finds",
    "[textparse][fixtures][shared]") {
  if (!std::filesystem::exists(kFixtures)) {
    WARN("fixtures folder missing: " << kFixtures);
    return;
  }
  // Counted with: grep -vc '^#' F; grep -c '^# HELP' F; grep -c '^# TYPE' F
  // (no fixture has blank lines or other comments).
  const std::map<std::string, std::array<int, 3>> expected = {
      {"dcgm-exporter-h100x8-sampled-aicr.txt", {30, 0, 0}},
      {"dcgm-exporter-l4-kops.txt", {23, 23, 23}},
      {"dcgm-exporter-l40s-upcloud.txt", {23, 23, 23}},
      {"dcgm-exporter-rtx4000ada-lke.txt", {25, 25, 25}},
      {"ingress-nginx.txt", {169, 71, 71}},
      {"node-exporter-e2e.txt", {3027, 1228, 1228}},
      {"sglang.txt", {91, 12, 12}},
      {"vllm-v0.txt", {120, 29, 29}},
      {"vllm-v1.txt", {395, 83, 83}},
  };
  int seen = 0;
  for (const auto& ent : std::filesystem::directory_iterator(kFixtures)) {
    if (ent.path().extension() != ".txt") continue;
    const std::string name = ent.path().filename().string();
    INFO(name);
    const std::string body = ReadFile(ent.path());
    Counts c = ParseAll(body);
    REQUIRE(c.status.ok());
    ++seen;
    auto it = expected.find(name);
    if (it == expected.end()) continue;  // new fixture: parse-only
    CHECK(c.series == it->second[0]);
    CHECK(c.help == it->second[1]);
    CHECK(c.type == it->second[2]);
    CHECK(c.comment == 0);
  }
  CHECK(seen >= 9);
}

TEST_CASE("node-exporter: raw 0x1C byte and U+FFFD pass through untouched",
          "[textparse][fixtures][shared]") {
  if (!std::filesystem::exists(kFixtures)) return;
  const std::string body = ReadFile(kFixtures / "node-exporter-e2e.txt");
  Parser p(body, Format::kPrometheusText);
  std::string product_version, model_name;
  int untyped = 0;
  for (;;) {
    auto e = p.Next();
    REQUIRE(e.ok());
    if (*e == Entry::kEOF) break;
    if (*e == Entry::kType && p.Type() == MetricType::kUnknown) ++untyped;
    if (*e != Entry::kSeries) continue;
    if (p.MetricName() == "node_dmi_info") {
      CHECK(p.line() == 1318);
      product_version = LabelValue(p, "product_version");
    }
    if (p.MetricName() == "node_power_supply_info" &&
        LabelValue(p, "model_name") != "<absent>") {
      CHECK(p.line() == 3638);
      model_name = LabelValue(p, "model_name");
    }
  }
  CHECK(product_version == "\xEF\xBF\xBD\x1C[\xEF\xBF\xBD");
  CHECK(model_name == "LNV-45N1\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(untyped == 334);  // grep -c '^# TYPE .* untyped'
}

TEST_CASE("vllm-v0: last line without final newline is still a sample",
          "[textparse][fixtures][shared]") {
  if (!std::filesystem::exists(kFixtures)) return;
  const std::string body = ReadFile(kFixtures / "vllm-v0.txt");
  REQUIRE(body.back() != '\n');
  Parser p(body, Format::kPrometheusText);
  std::string last_name;
  double last_value = -1;
  int last_line = 0;
  for (;;) {
    auto e = p.Next();
    REQUIRE(e.ok());
    if (*e == Entry::kEOF) break;
    if (*e == Entry::kSeries) {
      last_name = std::string(p.MetricName());
      last_value = p.Value();
      last_line = p.line();
    }
  }
  CHECK(last_name == "vllm:avg_generation_throughput_toks_per_s");
  CHECK(last_value == 0.0);
  CHECK(last_line == 178);
}

TEST_CASE(
    "Fixture label values: spaces, big negative integers, 25 labels, "
    "empty values dropped from identity",
    "[textparse][fixtures][shared]") {
  if (!std::filesystem::exists(kFixtures)) return;
  {
    const std::string body =
        ReadFile(kFixtures / "dcgm-exporter-rtx4000ada-lke.txt");
    Parser p(body, Format::kPrometheusText);
    NextSeries(p);  // line 3
    CHECK(p.line() == 3);
    CHECK(p.MetricName() == "DCGM_FI_DEV_SM_CLOCK");
    CHECK(p.Value() == 2310);
    CHECK(LabelValue(p, "modelName") == "NVIDIA RTX 4000 Ada Generation");
    CHECK(LabelValue(p, "pod_uid") == "");
    CHECK(p.NumLabels() == 11);
    vigil::Labels l = p.BuildLabels();
    CHECK(l.size() == 11);  // 11 + __name__ - pod_uid=""
    CHECK_FALSE(l.Has("pod_uid"));
    CHECK(l[0].name == "DCGM_FI_DRIVER_VERSION");  // sorted, uppercase first
    CHECK(l.MetricName() == "DCGM_FI_DEV_SM_CLOCK");
    // Zero-copy: the key and an unescaped value point into the body.
    CHECK(p.SeriesText().data() ==
          body.data() + body.find("DCGM_FI_DEV_SM_CLOCK{"));
    CHECK(p.SeriesText().back() == '}');
  }
  {
    const std::string body = ReadFile(kFixtures / "ingress-nginx.txt");
    Parser p(body, Format::kPrometheusText);
    bool found_id = false, found_help = false;
    for (;;) {
      auto e = p.Next();
      REQUIRE(e.ok());
      if (*e == Entry::kEOF) break;
      if (*e == Entry::kSeries &&
          p.MetricName() == "nginx_ingress_controller_ssl_certificate_info") {
        found_id = LabelValue(p, "identifier") ==
                   "-165626895043401770364299435549261304887";
      }
      if (*e == Entry::kHelp &&
          p.MetricName() == "nginx_ingress_controller_orphan_ingress") {
        CHECK(p.line() == 202);
        CHECK(p.Help().find("orphaned ingress.\n                       "
                            "'namespace'") != std::string_view::npos);
        found_help = true;
      }
    }
    CHECK(found_id);
    CHECK(found_help);
  }
  {
    const std::string body = ReadFile(kFixtures / "vllm-v1.txt");
    Parser p(body, Format::kPrometheusText);
    int created = 0;
    for (;;) {
      auto e = p.Next();
      REQUIRE(e.ok());
      if (*e == Entry::kEOF) break;
      if (*e == Entry::kHelp && p.MetricName() == "http_request_size_bytes") {
        CHECK(p.Help().back() == ' ');  // trailing blank kept
      }
      if (*e == Entry::kType &&
          p.MetricName() == "vllm:prompt_tokens_created") {
        CHECK(p.Type() == MetricType::kGauge);
      }
      if (*e != Entry::kSeries) continue;
      if (p.MetricName().ends_with("_created")) ++created;
      if (p.MetricName() == "vllm:cache_config_info") {
        CHECK(p.line() == 524);
        CHECK(p.NumLabels() == 25);
        CHECK(LabelValue(p, "cpu_offload_params") == "set()");
        CHECK(p.BuildLabels().size() == 26);
      }
      if (p.MetricName() == "vllm:iteration_tokens_total_bucket" &&
          LabelValue(p, "le") == "+Inf") {
        CHECK(p.Value() >= 0);
      }
    }
    CHECK(created > 0);
  }
}

TEST_CASE("Malformed text-format input yields line:col and a clear message",
          "[textparse][errors]") {
  struct Case {
    std::string body;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"a 1\nb 2\nfoo{a=\"b\",1a=\"c\"} 1\n",
       "3:11: invalid label name \"1a\""},
      {"1a 1\n", "1:1: invalid metric name \"1a\""},
      {"foo-bar 1\n", "1:1: invalid metric name \"foo-bar\""},
      {"foo{a-b=\"c\"} 1\n", "1:5: invalid label name \"a-b\""},
      {"foo{a=\"b\",a=\"c\"} 1\n",
       "1:11: duplicate label name \"a\" in \"foo\""},
      {"foo{a=\"b\n", "1:7: unterminated label value: missing closing quote"},
      {"foo{a=\"b\"", "1:4: unterminated label set: missing \"}\""},
      {"foo{a=\"b\"} \n", "1:12: missing value after \"foo{a=\\\"b\\\"}\""},
      {"foo{a=\"b\"}\n", "1:11: missing value after \"foo{a=\\\"b\\\"}\""},
      {"foo{a=b} 1\n", "1:7: expected quoted value for label \"a\", got \"b\""},
      {"foo{a \"b\"} 1\n",
       "1:7: expected \"=\" after label name \"a\", got \"\\\"\""},
      {"DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION{gpu=\"0\"} ERROR - FAILED TO "
       "CONVERT TO STRING\n",
       "1:51: invalid value \"ERROR\": want a float, NaN, +Inf or -Inf"},
      {"foo 1 2 3\n",
       "1:9: unexpected \"3\" after timestamp; want end of line"},
      {"foo 1 1.5\n",
       "1:7: invalid timestamp \"1.5\": want an integer in milliseconds since "
       "the epoch"},
      {"foo 1 # {a=\"b\"} 1\n",
       "1:7: unexpected \"#\" after sample: exemplars are only allowed in "
       "OpenMetrics"},
      {std::string("ok 1\nfoo\x00 1\n", 11),
       "2:1: invalid metric name \"foo\\x00\""},
      {"foo{a=\"\xff\"} 1\n", "1:8: invalid UTF-8 in value of label \"a\""},
      {"# TYPE foo countr\n",
       "1:12: invalid metric type \"countr\" for \"foo\""},
      {"# HELP 1x y\n", "1:8: expected metric name after \"# HELP\""},
      {"# TYPE 9foo gauge\n", "1:8: expected metric name after \"# TYPE\""},
      {"foo{__name__=\"bar\"} 1\n",
       "1:5: label name \"__name__\" is reserved for the metric name"},
      {"{a=\"b\"} 1\n", "1:1: expected metric name, got \"{\""},
      {"foo NaNx\n",
       "1:5: invalid value \"NaNx\": want a float, NaN, +Inf or -Inf"},
  };
  for (const Case& c : cases) {
    INFO(c.body);
    CHECK(ErrorOf(c.body) == c.want);
  }
}

TEST_CASE("Errors are sticky and Next never runs past them",
          "[textparse][errors]") {
  Parser p("a 1\nb{ 2\nc 3\n", Format::kPrometheusText);
  REQUIRE(p.Next().ok());
  absl::StatusOr<Entry> e = p.Next();
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().code() == absl::StatusCode::kInvalidArgument);
  absl::StatusOr<Entry> again = p.Next();
  REQUIRE_FALSE(again.ok());
  CHECK(again.status() == e.status());
}

TEST_CASE("Values, escapes, timestamps and comments in text 0.0.4",
          "[textparse]") {
  const std::string body =
      "# HELP m A \\\\ backslash\\nand newline \\q kept\n"
      "# just a comment\n"
      "\n"
      "  m{path=\"C:\\\\dir\",q=\"say \\\"hi\\\"\",nl=\"a\\nb\",} +Inf "
      "1700000000123\n"
      "m{x=\"-\"} -Inf\n"
      "m NaN 5\n"
      "m{} 1.5e+06\n"
      "m{u=\"\xe6\x97\xa5\xe6\x9c\xac\"} 9.223372036854776e+18";
  Parser p(body, Format::kPrometheusText);
  REQUIRE(*p.Next() == Entry::kHelp);
  CHECK(p.Help() == "A \\ backslash\nand newline \\q kept");
  REQUIRE(*p.Next() == Entry::kComment);
  CHECK(p.Comment() == "# just a comment");
  REQUIRE(*p.Next() == Entry::kSeries);
  CHECK(p.line() == 4);
  CHECK(LabelValue(p, "path") == "C:\\dir");
  CHECK(LabelValue(p, "q") == "say \"hi\"");
  CHECK(LabelValue(p, "nl") == "a\nb");
  CHECK(std::isinf(p.Value()));
  CHECK(p.Value() > 0);
  CHECK(p.Timestamp() == 1700000000123);
  CHECK(p.SeriesText().starts_with("m{path="));
  CHECK(p.SeriesText().ends_with(",}"));
  REQUIRE(*p.Next() == Entry::kSeries);
  CHECK(p.Value() < 0);
  CHECK(std::isinf(p.Value()));
  CHECK_FALSE(p.Timestamp().has_value());
  REQUIRE(*p.Next() == Entry::kSeries);
  CHECK(std::isnan(p.Value()));
  CHECK(p.Timestamp() == 5);
  CHECK(p.SeriesText() == "m");
  REQUIRE(*p.Next() == Entry::kSeries);
  CHECK(p.Value() == 1.5e6);
  CHECK(p.NumLabels() == 0);
  REQUIRE(*p.Next() == Entry::kSeries);
  CHECK(LabelValue(p, "u") == "\xe6\x97\xa5\xe6\x9c\xac");
  CHECK(p.Value() == 9.223372036854776e+18);
  CHECK(*p.Next() == Entry::kEOF);
  CHECK(*p.Next() == Entry::kEOF);
}

TEST_CASE(
    "OpenMetrics: UNIT, _created, exemplars, float-second timestamps, "
    "# EOF",
    "[textparse][openmetrics]") {
  const std::string body =
      "# TYPE req counter\n"
      "# UNIT req_seconds seconds\n"
      "# HELP req Requests \\\"served\\\".\n"
      "req_total{code=\"200\"} 17 1700000000.5 # {trace_id=\"abc\\\"d\"} 0.67 "
      "1700000000.123456\n"
      "req_created{code=\"200\"} 1700000000.25\n"
      "lat_bucket{le=\"+Inf\"} 3 # {trace_id=\"x\"} 1\n"
      "# TYPE st stateset\n"
      "st{st=\"a\"} 1 -1.5\n"
      "# EOF\n";
  Parser p(body, Format::kOpenMetrics);
  REQUIRE(*p.Next() == Entry::kType);
  CHECK(p.Type() == MetricType::kCounter);
  REQUIRE(*p.Next() == Entry::kUnit);
  CHECK(p.MetricName() == "req_seconds");
  CHECK(p.Unit() == "seconds");
  REQUIRE(*p.Next() == Entry::kHelp);
  CHECK(p.Help() == "Requests \"served\".");
  REQUIRE(*p.Next() == Entry::kSeries);
  CHECK(p.MetricName() == "req_total");
  CHECK(p.Value() == 17);
  CHECK(p.Timestamp() == 1700000000500);
  REQUIRE(p.HasExemplar());
  REQUIRE(p.NumExemplarLabels() == 1);
  CHECK(p.ExemplarLabel(0).name == "trace_id");
  CHECK(p.ExemplarLabel(0).value == "abc\"d");
  CHECK(p.ExemplarValue() == 0.67);
  CHECK(p.ExemplarTimestamp() == 1700000000123);
  CHECK(LabelValue(p, "code") == "200");
  REQUIRE(*p.Next() == Entry::kSeries);
  CHECK(p.MetricName() == "req_created");
  CHECK(p.Value() == 1700000000.25);
  CHECK_FALSE(p.HasExemplar());
  REQUIRE(*p.Next() == Entry::kSeries);
  CHECK(p.HasExemplar());
  CHECK_FALSE(p.ExemplarTimestamp().has_value());
  REQUIRE(*p.Next() == Entry::kType);
  CHECK(p.Type() == MetricType::kStateSet);
  REQUIRE(*p.Next() == Entry::kSeries);
  CHECK(p.Timestamp() == -1500);
  CHECK(*p.Next() == Entry::kEOF);
  CHECK(*p.Next() == Entry::kEOF);
}

TEST_CASE("OpenMetrics structural errors", "[textparse][openmetrics][errors]") {
  const Format om = Format::kOpenMetrics;
  CHECK(ErrorOf("a 1\n", om) ==
        "2:1: unexpected end of input: an OpenMetrics exposition must end "
        "with \"# EOF\"");
  CHECK(ErrorOf("a 1", om) ==
        "1:4: unexpected end of input: an OpenMetrics exposition must end "
        "with \"# EOF\"");
  CHECK(ErrorOf("a 1\n# EOF\nb 2\n", om) ==
        "3:1: unexpected content after \"# EOF\"");
  CHECK(ErrorOf("a 1\n# EOF", om).empty());
  CHECK(ErrorOf("a 1\n\n# EOF\n", om) ==
        "2:1: empty line is not allowed in OpenMetrics");
  CHECK(ErrorOf("# random comment\n# EOF\n", om) ==
        "1:3: invalid comment: OpenMetrics allows only \"# HELP\", \"# TYPE\", "
        "\"# UNIT\" and \"# EOF\" lines");
  CHECK(ErrorOf("# UNIT foo_bytes seconds\n# EOF\n", om) ==
        "1:18: unit \"seconds\" is not a suffix of metric name \"foo_bytes\"");
  CHECK(ErrorOf("a 1 # {x=\"y\"}\n# EOF\n", om) ==
        "1:14: invalid exemplar: missing value after its labels");
  CHECK(ErrorOf("a 1 NaN\n# EOF\n", om) ==
        "1:5: invalid timestamp \"NaN\": want seconds since the epoch (a "
        "finite float)");
  CHECK(ErrorOf("# TYPE a untyped\n# EOF\n", om) ==
        "1:10: invalid metric type \"untyped\" for \"a\"");
  // "# EOF" is an ordinary comment in the Prometheus text format.
  CHECK(ParseAll("a 1\n# EOF\nb 2\n").series == 2);
}

TEST_CASE("A 10 MB label value and a 10 MB junk line are handled",
          "[textparse][limits]") {
  std::string big(10 << 20, 'x');
  big[12345] = '\\';  // exercise the scratch path too
  big[12346] = 'n';
  const std::string body = "a 1\nbig{v=\"" + big + "\"} 42 7\nb 2";
  Parser p(body, Format::kPrometheusText);
  REQUIRE(*p.Next() == Entry::kSeries);
  REQUIRE(*p.Next() == Entry::kSeries);
  CHECK(p.Value() == 42);
  CHECK(p.Timestamp() == 7);
  std::string_view v = p.Label(0).value;
  CHECK(v.size() == big.size() - 1);
  CHECK(v[12345] == '\n');
  REQUIRE(*p.Next() == Entry::kSeries);
  CHECK(p.line() == 3);

  const std::string junk = "a 1\n" + std::string(10 << 20, 'x') + "-y 1\n";
  std::string err = ErrorOf(junk);
  CHECK(err.starts_with("2:1: invalid metric name \"xxxx"));
  CHECK(ErrorOf("-1 1\n") == "1:1: expected metric name, got \"-\"");
  CHECK(err.size() < 200);  // the token is cut in the message
}

TEST_CASE("Truncated and corrupted fixture pages never crash the parser",
          "[textparse][robustness][shared]") {
  if (!std::filesystem::exists(kFixtures)) return;
  std::mt19937 rng(42);
  for (const char* name :
       {"vllm-v1.txt", "ingress-nginx.txt", "dcgm-exporter-l4-kops.txt"}) {
    const std::string body = ReadFile(kFixtures / name);
    int errors = 0;
    for (int i = 0; i < 300; ++i) {
      std::string b = body.substr(0, rng() % body.size());
      if (i % 2 == 1 && !b.empty()) {
        b[rng() % b.size()] = static_cast<char>(rng() % 256);
      }
      for (Format f : {Format::kPrometheusText, Format::kOpenMetrics}) {
        Counts c = ParseAll(b, f);
        if (!c.status.ok()) {
          ++errors;
          // Every message starts with "line:col: ".
          std::string m(c.status.message());
          CHECK(m.find(':') < m.find(": "));
        }
      }
    }
    CHECK(errors >= 300);  // OpenMetrics always lacks "# EOF" here
  }
}
