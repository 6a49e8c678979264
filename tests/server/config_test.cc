// server/config/config.h: prometheus.yml decoded with promtool's strictness
// and messages, Prometheus's defaults, and Vigil's explicit rejections.
#include "server/config/config.h"

#include <catch2/catch.hpp>
#include <string>

namespace {

using vigil::config::ParseConfig;

TEST_CASE("prometheus.yml basics", "[config]") {
  auto parse = [](const std::string& yaml) {
    return ParseConfig(yaml, "p.yml");
  };
  SECTION("defaults and values") {
    auto empty = parse("");
    REQUIRE(empty.ok());
    CHECK(empty->global.evaluation_interval_ms == 60000);
    CHECK(empty->global.scrape_timeout_ms == 10000);
    auto c = parse(
        "global:\n  scrape_interval: 5s\n  evaluation_interval: 30s\n"
        "  external_labels: {env: prod}\nrule_files: [a.yml, 'r/*.yml']\n");
    REQUIRE(c.ok());
    CHECK(c->global.scrape_interval_ms == 5000);
    CHECK(c->global.scrape_timeout_ms == 5000);  // capped at the interval
    CHECK(c->global.evaluation_interval_ms == 30000);
    CHECK(c->global.external_labels.Get("env") == "prod");
    CHECK(c->rule_files == std::vector<std::string>{"a.yml", "r/*.yml"});
  }
  auto err = [&](const std::string& yaml) {
    auto c = parse(yaml);
    return c.ok() ? std::string("ok") : std::string(c.status().message());
  };
  CHECK(err("global:\n  foo: 1\nbar: 2\n") ==
        "parsing YAML file p.yml: yaml: unmarshal errors:\n"
        "  line 2: field foo not found in type config.plain\n"
        "  line 3: field bar not found in type config.plain");
  CHECK(err("global:\n  scrape_interval: 1x\n") ==
        "parsing YAML file p.yml: not a valid duration string: \"1x\"");
  CHECK(err("global:\n  scrape_interval: 5s\n  scrape_timeout: 10s\n") ==
        "parsing YAML file p.yml: global scrape timeout greater than scrape "
        "interval");
  CHECK(err("global:\n  external_labels: {a-b: c}\n") ==
        "parsing YAML file p.yml: \"a-b\" is not a valid label name");
  CHECK(err("rule_files: ['a/*/b.yml']\n") ==
        "parsing YAML file p.yml: invalid rule file path \"a/*/b.yml\"");
  CHECK(err("scrape_configs:\n  - job_name: a\n  - job_name: a\n") ==
        "parsing YAML file p.yml: found multiple scrape configs with job name "
        "\"a\"");
  CHECK(err("scrape_configs:\n  - scrape_interval: 1m\n") ==
        "parsing YAML file p.yml: job_name is empty");
  CHECK(err("scrape_configs:\n  -\n") ==
        "parsing YAML file p.yml: empty or null scrape config section");
  CHECK(err("alerting:\n  alertmanagers: []\n  foo: 1\n") ==
        "parsing YAML file p.yml: yaml: unmarshal errors:\n"
        "  line 3: field foo not found in type config.plain");
  CHECK(err("scrape_configs:\n  - job_name: a\n    static_configs: []\n    "
            "bogus: 1\n") ==
        "parsing YAML file p.yml: yaml: unmarshal errors:\n"
        "  line 4: field bogus not found in type config.ScrapeConfig");
  // Prometheus validates a scrape config only once it decoded cleanly.
  CHECK(err("scrape_configs:\n  - jobname: a\n") ==
        "parsing YAML file p.yml: yaml: unmarshal errors:\n"
        "  line 2: field jobname not found in type config.ScrapeConfig");
  // yaml.v2 words duplicates differently from v3 and keeps decoding.
  CHECK(err("global: {}\nglobal: {}\n") ==
        "parsing YAML file p.yml: yaml: unmarshal errors:\n"
        "  line 2: field global already set in type config.plain");
  CHECK(err("global:\n  external_labels:\n    a: b\n    a: c\n") ==
        "parsing YAML file p.yml: yaml: unmarshal errors:\n"
        "  line 4: key \"a\" already set in map");
  CHECK(err("global: [\n").find("parsing YAML file p.yml: ") == 0);
}

std::string ConfigErr(const std::string& yaml) {
  auto c = ParseConfig(yaml, "p.yml");
  return c.ok() ? std::string("ok") : std::string(c.status().message());
}

TEST_CASE("scrape configs get Prometheus's defaults", "[config]") {
  auto c = ParseConfig(
      "global:\n  scrape_interval: 15s\n  sample_limit: 100\n"
      "scrape_configs:\n"
      "  - job_name: a\n"
      "  - job_name: b\n    scrape_interval: 5s\n    sample_limit: 7\n"
      "    body_size_limit: 10MB\n    honor_labels: yes\n"
      "    params: {module: [x, y]}\n"
      "    bearer_token: t\n"
      "    static_configs:\n      - targets: ['h:1', 'h:2']\n"
      "        labels: {env: prod}\n"
      "    file_sd_configs:\n      - files: [sd/*.json]\n"
      "    dns_sd_configs:\n      - names: [svc.local]\n        type: A\n"
      "        port: 9100\n"
      "    metric_relabel_configs:\n      - source_labels: [__name__]\n"
      "        regex: go_.*\n        action: drop\n",
      "p.yml");
  REQUIRE(c.ok());
  REQUIRE(c->scrape_configs.size() == 2);
  const auto& a = c->scrape_configs[0];
  CHECK(a.scrape_interval_ms == 15000);
  CHECK(a.scrape_timeout_ms == 10000);
  CHECK(a.metrics_path == "/metrics");
  CHECK(a.scheme == "http");
  CHECK(a.honor_timestamps);
  CHECK(a.sample_limit == 100);  // inherited from global
  CHECK(a.http.follow_redirects);
  const auto& b = c->scrape_configs[1];
  CHECK(b.scrape_timeout_ms == 5000);  // capped at the interval
  CHECK(b.sample_limit == 7);
  CHECK(b.body_size_limit_bytes == 10 * 1024 * 1024);
  CHECK(b.honor_labels);
  CHECK(b.params.at("module") == std::vector<std::string>{"x", "y"});
  REQUIRE(b.http.authorization);
  CHECK(b.http.authorization->type == "Bearer");
  CHECK(b.http.authorization->credentials == "t");
  REQUIRE(b.sd.static_configs.size() == 1);
  CHECK(b.sd.static_configs[0].targets.size() == 2);
  CHECK(b.sd.static_configs[0].labels.Get("env") == "prod");
  CHECK(b.sd.file_sd_configs[0].refresh_interval_ms == 300000);
  CHECK(b.sd.dns_sd_configs[0].type == vigil::config::DNSRecordType::kA);
  CHECK(b.sd.dns_sd_configs[0].port == 9100);
  REQUIRE(b.metric_relabel_configs.size() == 1);
  CHECK(b.metric_relabel_configs[0].action == vigil::RelabelAction::kDrop);
}

TEST_CASE("prometheus.yml errors use promtool's texts", "[config]") {
  const std::string job = "scrape_configs:\n  - job_name: a\n";
  CHECK(ConfigErr(job + "    body_size_limit: 10XB\n") ==
        "parsing YAML file p.yml: units: unknown unit XB in 10XB");
  CHECK(ConfigErr(job + "    sample_limit: -1\n    honor_labels: maybe\n") ==
        "parsing YAML file p.yml: yaml: unmarshal errors:\n"
        "  line 3: cannot unmarshal !!int `-1` into uint\n"
        "  line 4: cannot unmarshal !!str `maybe` into bool");
  CHECK(ConfigErr(job + "    relabel_configs:\n      - action: foo\n") ==
        "parsing YAML file p.yml: unknown relabel action \"foo\"");
  CHECK(ConfigErr(job + "    relabel_configs:\n      - action: replace\n") ==
        "parsing YAML file p.yml: relabel configuration for replace action "
        "requires 'target_label' value");
  CHECK(ConfigErr(job + "    relabel_configs:\n      - regex: '('\n") ==
        "parsing YAML file p.yml: error parsing regexp: missing closing ): "
        "`^(?s:()$`");
  CHECK(
      ConfigErr(job + "    bearer_token: x\n    basic_auth: {username: u}\n") ==
      "parsing YAML file p.yml: at most one of basic_auth, oauth2, "
      "bearer_token & bearer_token_file must be configured");
  CHECK(ConfigErr(job + "    authorization: {type: Basic}\n") ==
        "parsing YAML file p.yml: authorization type cannot be set to "
        "\"basic\", use \"basic_auth\" instead");
  CHECK(ConfigErr(job +
                  "    static_configs:\n      - targets: ['http://x:1']\n") ==
        "parsing YAML file p.yml: \"http://x:1\" is not a valid hostname");
  CHECK(ConfigErr(job + "    static_configs:\n      - labels: {a-b: c}\n") ==
        "parsing YAML file p.yml: \"a-b\" is not a valid label name");
  CHECK(ConfigErr(job + "    file_sd_configs:\n      - files: [x.txt]\n") ==
        "parsing YAML file p.yml: path name \"x.txt\" is not valid for file "
        "discovery");
  CHECK(
      ConfigErr(job +
                "    dns_sd_configs:\n      - names: [x]\n        type: A\n") ==
      "parsing YAML file p.yml: a port is required in DNS-SD configs for "
      "all record types except SRV");
  CHECK(ConfigErr(job + "    dns_sd_configs:\n      - names: []\n") ==
        "parsing YAML file p.yml: DNS-SD config must contain at least one SRV "
        "record name");
  CHECK(ConfigErr(job +
                  "    static_configs:\n      - targets: [x]\n        foo: 1\n"
                  "    tls_config:\n      foo: 1\n") ==
        "parsing YAML file p.yml: yaml: unmarshal errors:\n"
        "  line 5: field foo not found in type struct { Targets []string "
        "\"yaml:\\\"targets\\\"\"; Labels model.LabelSet "
        "\"yaml:\\\"labels\\\"\" }\n"
        "  line 7: field foo not found in type config.plain");
}

TEST_CASE("what Vigil does not implement is rejected by name", "[config]") {
  const std::string job = "scrape_configs:\n  - job_name: a\n";
  CHECK(ConfigErr(job + "    kubernetes_sd_configs:\n      - role: pod\n") ==
        "parsing YAML file p.yml: line 3: kubernetes_sd_configs is not "
        "supported by vigil");
  CHECK(ConfigErr(job + "    made_up_sd_configs: []\n") ==
        "parsing YAML file p.yml: line 3: made_up_sd_configs is not "
        "supported by vigil");
  CHECK(ConfigErr(job + "    oauth2: {client_id: x}\n") ==
        "parsing YAML file p.yml: line 3: oauth2 is not supported by vigil");
  CHECK(ConfigErr("remote_read:\n  - url: http://x/\n") ==
        "parsing YAML file p.yml: line 1: remote_read is not supported by "
        "vigil yet");
  CHECK(ConfigErr("remote_write: []\nstorage: {}\n") == "ok");
  CHECK(ConfigErr("alerting:\n  alertmanagers:\n    - api_version: v1\n") ==
        "parsing YAML file p.yml: expected Alertmanager api version to be "
        "one of [v2] but got v1");
  CHECK(
      ConfigErr("alerting:\n  alertmanagers:\n    - consul_sd_configs: []\n") ==
      "parsing YAML file p.yml: line 3: consul_sd_configs is not supported "
      "by vigil");
}

TEST_CASE("LoadConfigFile joins relative paths to the config's directory",
          "[config]") {
  auto c = vigil::config::LoadConfigFile(
      std::string(VIGIL_SOURCE_DIR) + "/tests/server/testdata/config/good.yml");
  REQUIRE(c.ok());
  CHECK(c->rule_files[0] == std::string(VIGIL_SOURCE_DIR) +
                                "/tests/server/testdata/config/"
                                "rules/*.yml");
  auto missing = vigil::config::LoadConfigFile("/nonexistent/p.yml");
  CHECK(missing.status().message() ==
        "open /nonexistent/p.yml: no such file or directory");
}

}  // namespace
