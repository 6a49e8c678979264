// Target label building, relabelling, URLs and offsets, checked against
// what Prometheus 2.42's PopulateLabels and Target.URL produce.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "server/scrape/target.h"

namespace vigil::scrape {
namespace {

using vigil::Labels;
using vigil::RelabelAction;
using vigil::RelabelConfig;
using vigil::RelabelRegex;

ScrapePoolOptions TargetPool() {
  ScrapePoolOptions o;
  o.job_name = "node";
  o.interval_ms = 15000;
  o.timeout_ms = 10000;
  return o;
}

RelabelConfig ReplaceRule(std::vector<std::string> src, std::string target,
                          std::string regex, std::string repl) {
  RelabelConfig c;
  c.source_labels = std::move(src);
  c.target_label = std::move(target);
  c.regex = *RelabelRegex::Compile(regex);
  c.replacement = std::move(repl);
  return c;
}

struct Built {
  std::vector<Target> targets;
  std::vector<absl::Status> failures;
};

Built Build(const ScrapePoolOptions& o, std::vector<Labels> targets,
            Labels common = {}) {
  TargetGroup g;
  g.source = "0";
  g.targets = std::move(targets);
  g.labels = std::move(common);
  Built b;
  TargetsFromGroup(g, o, &b.targets, &b.failures);
  return b;
}

TEST_CASE("A static target gets Prometheus's default labels", "[scrape]") {
  auto b = Build(TargetPool(), {Labels{{"__address__", "10.0.0.1:9100"}}},
                 Labels{{"env", "prod"}});
  REQUIRE(b.failures.empty());
  REQUIRE(b.targets.size() == 1);
  const Target& t = b.targets[0];
  CHECK(
      t.labels().ToString() ==
      R"({__address__="10.0.0.1:9100", __metrics_path__="/metrics", __scheme__="http", __scrape_interval__="15s", __scrape_timeout__="10s", env="prod", instance="10.0.0.1:9100", job="node"})");
  CHECK(t.target_labels().ToString() ==
        R"({env="prod", instance="10.0.0.1:9100", job="node"})");
  CHECK(t.discovered_labels().Get("__address__") == "10.0.0.1:9100");
  CHECK_FALSE(t.discovered_labels().Has("instance"));
  CHECK(t.url() == "http://10.0.0.1:9100/metrics");
  CHECK(t.interval_ms() == 15000);
  CHECK(t.timeout_ms() == 10000);
}

TEST_CASE("An address without a port gets the scheme's (2.42)", "[scrape]") {
  auto b = Build(TargetPool(), {Labels{{"__address__", "node1"}}});
  REQUIRE(b.targets.size() == 1);
  CHECK(b.targets[0].labels().Get("__address__") == "node1:80");
  CHECK(b.targets[0].labels().Get("instance") == "node1:80");
  auto o = TargetPool();
  o.scheme = "https";
  CHECK(Build(o, {Labels{{"__address__", "[::1]"}}}).targets[0].url() ==
        "https://[::1]:443/metrics");
  o.no_default_port = true;
  CHECK(Build(o, {Labels{{"__address__", "node1"}}}).targets[0].url() ==
        "https://node1/metrics");
}

TEST_CASE("The blackbox pattern: params, __param_target and relabelling",
          "[scrape]") {
  auto o = TargetPool();
  o.job_name = "blackbox";
  o.metrics_path = "/probe";
  o.params["module"] = {"http_2xx"};
  o.relabel_configs = {
      ReplaceRule({"__address__"}, "__param_target", "(.*)", "$1"),
      ReplaceRule({"__param_target"}, "instance", "(.*)", "$1"),
      ReplaceRule({}, "__address__", "(.*)", "blackbox:9115"),
  };
  auto b = Build(o, {Labels{{"__address__", "https://example.com/a b"}}});
  REQUIRE(b.failures.empty());
  REQUIRE(b.targets.size() == 1);
  const Target& t = b.targets[0];
  CHECK(t.url() ==
        "http://blackbox:9115/probe?module=http_2xx&target=https%3A%2F%2F"
        "example.com%2Fa+b");
  CHECK(t.target_labels().ToString() ==
        R"({instance="https://example.com/a b", job="blackbox"})");
  CHECK(t.discovered_labels().Get("__param_module") == "http_2xx");
}

TEST_CASE("__meta_ labels go after relabelling, labelmap keeps them",
          "[scrape]") {
  auto o = TargetPool();
  RelabelConfig lm;
  lm.action = RelabelAction::kLabelMap;
  lm.regex = *RelabelRegex::Compile("__meta_kubernetes_pod_label_(.+)");
  lm.replacement = "$1";
  o.relabel_configs = {lm};
  auto b = Build(o, {Labels{{"__address__", "a:1"},
                            {"__meta_kubernetes_pod_label_app", "vllm"},
                            {"__meta_other", "x"}}});
  REQUIRE(b.targets.size() == 1);
  CHECK(b.targets[0].labels().Get("app") == "vllm");
  CHECK_FALSE(b.targets[0].labels().Has("__meta_other"));
  CHECK(b.targets[0].discovered_labels().Get("__meta_other") == "x");
}

TEST_CASE("Relabelled-away targets are kept as dropped", "[scrape]") {
  auto o = TargetPool();
  RelabelConfig keep;
  keep.source_labels = {"__address__"};
  keep.regex = *RelabelRegex::Compile("keep.*");
  keep.action = RelabelAction::kKeep;
  o.relabel_configs = {keep};
  auto b = Build(o, {Labels{{"__address__", "keepme:1"}},
                     Labels{{"__address__", "other:1"}}});
  REQUIRE(b.failures.empty());
  REQUIRE(b.targets.size() == 2);
  CHECK_FALSE(b.targets[0].dropped());
  CHECK(b.targets[1].dropped());
  CHECK(b.targets[1].discovered_labels().Get("__address__") == "other:1");
  CHECK(b.targets[1].discovered_labels().Get("job") == "node");
}

TEST_CASE("Invalid targets fail with Prometheus's errors", "[scrape]") {
  auto o = TargetPool();
  o.relabel_configs = {ReplaceRule({"x"}, "__address__", "(.+)", "")};
  auto b =
      Build(o, {Labels{{"__address__", "a:1"}, {"x", "1"}},
                Labels{{"__address__", "http://a:1/metrics"}},
                Labels{{"__address__", "a:1"}, {"__scrape_timeout__", "20s"}},
                Labels{{"__address__", "a:1"}, {"__scrape_interval__", "soon"}},
                Labels{{"__address__", "a:1"}, {"__scheme__", "ftp"}},
                Labels{{"__address__", "a"}, {"__scheme__", "ftp"}},
                Labels{{"__address__", "a:1"}, {"v", "\xff"}}});
  // With a port, the scheme is not checked here (as in Prometheus).
  REQUIRE(b.targets.size() == 1);
  CHECK(b.targets[0].url() == "ftp://a:1/metrics");
  std::vector<std::string> got;
  for (auto& s : b.failures) got.emplace_back(s.message());
  CHECK(got == std::vector<std::string>{
                   "instance 0 in group 0: no address",
                   "instance 1 in group 0: \"http://a:1/metrics\" is not a "
                   "valid hostname",
                   "instance 2 in group 0: scrape timeout cannot be greater "
                   "than scrape interval (\"20s\" > \"15s\")",
                   "instance 3 in group 0: error parsing scrape interval: "
                   "not a valid duration string: \"soon\"",
                   "instance 5 in group 0: invalid scheme: \"ftp\"",
                   "instance 6 in group 0: invalid label value for \"v\": "
                   "\"\\xff\"",
               });
}

TEST_CASE("Target identity and offsets are stable", "[scrape]") {
  auto a = Build(TargetPool(), {Labels{{"__address__", "a:1"}}}).targets[0];
  auto a2 = Build(TargetPool(), {Labels{{"__address__", "a:1"}}}).targets[0];
  auto b = Build(TargetPool(), {Labels{{"__address__", "b:1"}}}).targets[0];
  CHECK(a.hash() == a2.hash());
  CHECK(a.hash() != b.hash());
  // The phase within the interval does not depend on when we ask.
  for (vigil::Timestamp now : {1'700'000'000'000LL, 1'700'000'004'321LL}) {
    int64_t off = a.Offset(15000, 0, now);
    CHECK(off >= 0);
    CHECK(off <= 15000);
    CHECK((now + off) % 15000 == static_cast<int64_t>(a.hash() % 15000));
  }
  CHECK(a.Offset(15000, 7, 1'700'000'000'000) !=
        a.Offset(15000, 0, 1'700'000'000'000));
}

}  // namespace

namespace {

// Recorded from Debian's prometheus 2.42 with this static_config
// (targets ['127.0.0.1:18931', 'localhost'], labels {env: prod},
// params {module: [x y]}, interval 1s, timeout 500ms).
TEST_CASE("Targets match what Prometheus 2.42 showed for the same config",
          "[scrape]") {
  auto o = TargetPool();
  o.job_name = "j";
  o.interval_ms = 1000;
  o.timeout_ms = 500;
  o.params["module"] = {"x y"};
  auto b = Build(o,
                 {Labels{{"__address__", "127.0.0.1:18931"}},
                  Labels{{"__address__", "localhost"}}},
                 Labels{{"env", "prod"}});
  REQUIRE(b.targets.size() == 2);
  CHECK(b.targets[0].url() == "http://127.0.0.1:18931/metrics?module=x+y");
  CHECK(b.targets[1].url() == "http://localhost:80/metrics?module=x+y");
  CHECK(b.targets[1].target_labels().ToString() ==
        R"({env="prod", instance="localhost:80", job="j"})");
  CHECK(
      b.targets[1].discovered_labels().ToString() ==
      R"({__address__="localhost", __metrics_path__="/metrics", __param_module="x y", __scheme__="http", __scrape_interval__="1s", __scrape_timeout__="500ms", env="prod", job="j"})");
}

}  // namespace
}  // namespace vigil::scrape
