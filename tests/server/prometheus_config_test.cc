// server/config/prometheus_config.h: prometheus.yml decoded with promtool's
// strictness and messages.
#include "server/config/prometheus_config.h"

#include <catch2/catch.hpp>
#include <string>

namespace {

using vigil::config::ParsePrometheusConfig;

TEST_CASE("prometheus.yml basics", "[config]") {
  auto parse = [](const std::string& yaml) {
    return ParsePrometheusConfig(yaml, "p.yml");
  };
  SECTION("defaults and values") {
    auto empty = parse("");
    REQUIRE(empty.ok());
    CHECK(empty->evaluation_interval_ms == 60000);
    CHECK(empty->scrape_timeout_ms == 10000);
    auto c = parse(
        "global:\n  scrape_interval: 5s\n  evaluation_interval: 30s\n"
        "  external_labels: {env: prod}\nrule_files: [a.yml, 'r/*.yml']\n");
    REQUIRE(c.ok());
    CHECK(c->scrape_interval_ms == 5000);
    CHECK(c->scrape_timeout_ms == 5000);  // capped at the interval
    CHECK(c->evaluation_interval_ms == 30000);
    CHECK(c->external_labels.Get("env") == "prod");
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

}  // namespace
