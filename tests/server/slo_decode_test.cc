// slo::ParseSloFile: Sloth prometheus/v1 SLO files, strictly decoded and
// validated, every error naming file, line, column and what is wrong.
#include <catch2/catch.hpp>
#include <string>

#include "server/slo/decode.h"

namespace {

using vigil::slo::ParseSloFile;

constexpr char kGood[] = R"(version: "prometheus/v1"
service: "svc01"
labels:
  team: a
slos:
  - name: "slo1"
    objective: 99.9
    description: "x"
    labels:
      tier: "1"
    sli:
      events:
        error_query: sum(rate(http_requests_total{code=~"5.."}[{{.window}}]))
        total_query: sum(rate(http_requests_total[{{ .window }}]))
    alerting:
      name: MyAlert
      labels: {a: b}
      annotations: {runbook: "http://x"}
      page_alert:
        labels: {severity: critical}
      ticket_alert:
        disable: true
)";

// The error of `text` (REQUIRES: it fails).
std::string Err(const std::string& text) {
  auto f = ParseSloFile(text, "slo.yml");
  REQUIRE_FALSE(f.ok());
  return std::string(f.status().message());
}

std::string Replace(std::string s, const std::string& from,
                    const std::string& to) {
  const size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("slo decode: a Sloth file", "[slo]") {
  auto f = ParseSloFile(kGood, "slo.yml");
  REQUIRE(f.ok());
  REQUIRE(f->service == "svc01");
  REQUIRE(f->labels.at("team") == "a");
  REQUIRE(f->slos.size() == 1);
  const auto& s = f->slos[0];
  REQUIRE(s.objective == 99.9);
  REQUIRE(s.labels.at("tier") == "1");
  REQUIRE(s.sli.events.has_value());
  REQUIRE_FALSE(s.sli.raw.has_value());
  REQUIRE(s.alerting.name == "MyAlert");
  REQUIRE(s.alerting.page_alert.labels.at("severity") == "critical");
  REQUIRE(s.alerting.ticket_alert.disable);
  REQUIRE_FALSE(s.alerting.page_alert.disable);
}

TEST_CASE("slo decode: YAML and type errors carry file:line:col", "[slo]") {
  CHECK(Err("version: [\n").rfind("slo.yml:", 0) == 0);
  CHECK(Err("") == "slo.yml: spec is required");
  CHECK(Err(Replace(kGood, "objective: 99.9", "objective: \"99.9\"")) ==
        "slo.yml:7:16: yaml: unmarshal errors:\n  line 7: cannot unmarshal "
        "!!str `99.9` into float64");
  CHECK(Err(Replace(kGood, "    description:", "    descripton:")) ==
        "slo.yml:8:5: yaml: unmarshal errors:\n  line 8: field descripton not "
        "found in type v1.SLO");
  CHECK(Err("version: prometheus/v1\nservice: a\nslos: 3\n") ==
        "slo.yml:3:7: yaml: unmarshal errors:\n  line 3: cannot unmarshal "
        "!!int `3` into []v1.SLO");
  CHECK(Err(Replace(kGood, "labels: {a: b}", "labels: [a]"))
            .find("line 17: cannot unmarshal !!seq into map[string]string") !=
        std::string::npos);
  CHECK(Err(Replace(kGood, "disable: true", "disable: maybe")) ==
        "slo.yml:22:18: yaml: unmarshal errors:\n  line 22: cannot unmarshal "
        "!!str `maybe` into bool");
  CHECK(Err(Replace(kGood, "service: \"svc01\"\n",
                    "service: \"svc01\"\nservice: b\n"))
            .find("line 3: field service already set in type v1.Spec") !=
        std::string::npos);
}

TEST_CASE("slo decode: Sloth's validation, with the SLO named", "[slo]") {
  CHECK(Err(Replace(kGood, "prometheus/v1", "prometheus/v2")) ==
        "slo.yml: invalid spec version \"prometheus/v2\", should be "
        "\"prometheus/v1\"");
  CHECK(Err("version: prometheus/v1\nservice: a\n") ==
        "slo.yml: at least one SLO is required");
  CHECK(Err(Replace(kGood, "objective: 99.9", "objective: 0")) ==
        "slo.yml:6:5: slos[0] \"slo1\": objective must >0 and <=100");
  CHECK(Err(Replace(kGood, "objective: 99.9", "objective: 100.5")) ==
        "slo.yml:6:5: slos[0] \"slo1\": objective must >0 and <=100");
  CHECK(Err(Replace(kGood, "name: \"slo1\"", "name: \"-bad\""))
            .find("slos[0] \"-bad\": invalid SLO name: \"-bad\": name must "
                  "start") != std::string::npos);
  CHECK(Err(Replace(kGood, "service: \"svc01\"", "service: \"\""))
            .find("invalid SLO ID") != std::string::npos);
  CHECK(Err(Replace(kGood, "tier: \"1\"", "tier-x: \"1\"")) ==
        "slo.yml:6:5: slos[0] \"slo1\": invalid SLO label key \"tier-x\": the "
        "label key \"tier-x\" is not valid");
  CHECK(Err(Replace(kGood, "[{{ .window }}]", "[5m]")) ==
        "slo.yml:6:5: slos[0] \"slo1\": invalid SLI: sli total query "
        "template: template must contain the {{ .window }} variable");
  CHECK(Err(Replace(kGood, "sum(rate(http_requests_total[",
                    "sum(rate(http_requests_total{["))
            .find("invalid SLI: sli total query expression: ") !=
        std::string::npos);
  CHECK(Err(Replace(kGood, "{{ .window }}]))", "{{ .window }}{{end}}]))"))
            .find("invalid SLI: sli total query expression: template: ") !=
        std::string::npos);
  CHECK(Err(Replace(kGood, "      name: MyAlert\n", "")) ==
        "slo.yml:6:5: slos[0] \"slo1\": invalid alert: page alert: alert "
        "name is required");
  CHECK(Err(Replace(kGood, "runbook: \"http://x\"", "runbook: \"\""))
            .find("invalid alert annotation value \"\"") != std::string::npos);
  // Two SLOs with one name would give two groups with one name.
  std::string two =
      std::string(kGood) +
      std::string(kGood).substr(std::string(kGood).find("  - name"));
  CHECK(Err(two).find("slos[1] \"slo1\": duplicate SLO name") !=
        std::string::npos);
}

TEST_CASE("slo decode: exactly one SLI type", "[slo]") {
  const std::string none = Replace(
      kGood,
      "      events:\n        error_query: sum(rate(http_requests_total{code=~"
      "\"5..\"}[{{.window}}]))\n        total_query: sum(rate(http_requests_"
      "total[{{ .window }}]))\n",
      "");
  CHECK(Err(none).find("invalid SLI: at least one SLI type is required") !=
        std::string::npos);
  const std::string both = Replace(
      kGood, "      events:\n",
      "      raw:\n        error_ratio_query: x[{{.window}}]\n      events:\n");
  CHECK(Err(both).find("invalid SLI: only one SLI type is allowed") !=
        std::string::npos);
  const std::string same = Replace(
      kGood, "sum(rate(http_requests_total{code=~\"5..\"}[{{.window}}]))",
      "sum(rate(http_requests_total[{{ .window }}]))");
  CHECK(Err(same).find("both error and total queries can't be the same") !=
        std::string::npos);
}

TEST_CASE("slo decode: Sloth plugins are not supported", "[slo]") {
  CHECK(Err(Replace(kGood, "slos:\n",
                    "slo_plugins:\n  chain: [{id: x}]\nslos:\n")) ==
        "slo.yml:5:1: slo_plugins (Sloth SLO plugins) is not supported by "
        "vigil");
  CHECK(Err(Replace(kGood, "      events:\n",
                    "      plugin:\n        id: x\n      events:\n")) ==
        "slo.yml:12:7: plugin (Sloth SLI plugins) is not supported by vigil");
}

TEST_CASE("slo decode: the latency helper (Vigil extension)", "[slo]") {
  const std::string events =
      "      events:\n        error_query: sum(rate(http_requests_total{code=~"
      "\"5..\"}[{{.window}}]))\n        total_query: sum(rate(http_requests_"
      "total[{{ .window }}]))\n";
  auto with = [&](const std::string& latency) {
    return Replace(kGood, events, "      latency:\n" + latency);
  };
  auto f = ParseSloFile(
      with("        histogram: [vllm:ttft_seconds, sglang:ttft_seconds]\n"
           "        threshold: 2.5\n        matchers: 'job=~\"vllm|sglang\"'\n"
           "        by: [variant]\n"),
      "slo.yml");
  REQUIRE(f.ok());
  const auto& l = *f->slos[0].sli.latency;
  CHECK(l.histograms.size() == 2);
  CHECK(l.threshold == 2.5);
  CHECK(l.by == std::vector<std::string>{"variant"});
  auto one = ParseSloFile(
      with("        histogram: h_seconds\n        threshold: 1\n"), "slo.yml");
  REQUIRE(one.ok());
  CHECK(one->slos[0].sli.latency->histograms ==
        std::vector<std::string>{"h_seconds"});

  CHECK(Err(with("        threshold: 1\n"))
            .find("invalid SLI: latency: histogram is required") !=
        std::string::npos);
  CHECK(Err(with("        histogram: h\n"))
            .find("latency: threshold must be a positive number") !=
        std::string::npos);
  CHECK(
      Err(with("        histogram: 'bad name'\n        threshold: 1\n"))
          .find("latency: histogram \"bad name\" is not a valid metric name") !=
      std::string::npos);
  CHECK(Err(with("        histogram: h\n        threshold: 1\n        "
                 "matchers: 'job=='\n"))
            .find("latency: matchers \"job==\": ") != std::string::npos);
  CHECK(Err(with("        histogram: h\n        threshold: 1\n        by: "
                 "[le]\n"))
            .find("latency: by: \"le\" is not a label to group by") !=
        std::string::npos);
  CHECK(Err(with("        histogram: h\n        threshold: 1\n        "
                 "buckets: 3\n"))
            .find("field buckets not found in type vigil.LatencySLI") !=
        std::string::npos);
}

TEST_CASE("slo decode: a missing file", "[slo]") {
  auto f = vigil::slo::LoadSloFile("/nonexistent/slo.yml");
  REQUIRE_FALSE(f.ok());
  CHECK(f.status().message() ==
        "open /nonexistent/slo.yml: no such file or directory");
}
