// examples/llm/prometheus.yml and alertmanager.yml, the files a user copies
// to a real cluster: both pass Vigil's and the real tools' checks (promtool
// 2.42, amtool 0.25; skipped, saying so, when not on PATH), as written and
// with their commented "alternative" blocks uncommented; the target labels
// the rule pack and the dashboard key on come out of the relabelling; and
// every scrape job is watched by one of the pack's `up` alerts.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/labels.h"
#include "core/relabel.h"
#include "promql/ast.h"
#include "rules/rule_file.h"
#include "server/config/config.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

namespace fs = std::filesystem;
using vigil::testutil::HaveCommand;
using vigil::testutil::kVigil;
using vigil::testutil::ReadFile;
using vigil::testutil::Run;
using vigil::testutil::RunResult;
using vigil::testutil::TempDir;

const std::string kLlm = std::string(VIGIL_SOURCE_DIR) + "/examples/llm";

// The file with every block between "# --- begin alternative" and
// "# --- end alternative" uncommented (the first "# " of each line).
std::string Uncommented(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  bool inside = false;
  int blocks = 0;
  while (std::getline(in, line)) {
    const std::string t = std::regex_replace(line, std::regex("^\\s+"), "");
    if (t == "# --- begin alternative") {
      inside = true;
      ++blocks;
      continue;
    }
    if (t == "# --- end alternative") {
      inside = false;
      continue;
    }
    if (inside) line = std::regex_replace(line, std::regex("^(\\s*)# ?"), "$1");
    out += line + "\n";
  }
  CHECK(blocks > 0);
  CHECK_FALSE(inside);
  return out;
}

// A copy of examples/llm with `file` replaced by its uncommented version;
// rules/ is linked, so relative rule_files still resolve.
void WriteAlternative(const TempDir& dir, const std::string& file) {
  std::ofstream(dir.Sub(file)) << Uncommented(ReadFile(kLlm + "/" + file));
  fs::create_directory_symlink(kLlm + "/rules", dir.Sub("rules"));
}

RunResult In(const std::string& dir, const std::string& cmd) {
  return Run("cd '" + dir + "' && " + cmd);
}

void ExpectConfigValid(const std::string& dir) {
  const RunResult v = In(dir, kVigil + " check config prometheus.yml");
  INFO(dir << "\n" << v.out << v.err);
  CHECK(v.code == 0);
  CHECK(v.out.find(" SUCCESS: prometheus.yml is valid prometheus config "
                   "file syntax") != std::string::npos);
  CHECK(v.out.find("Checking rules/recording.yml\n  SUCCESS") !=
        std::string::npos);
  CHECK(v.out.find("Checking rules/alerts.yml\n  SUCCESS") !=
        std::string::npos);
  if (!HaveCommand("promtool")) {
    WARN("SKIPPED: promtool not on PATH (Debian package prometheus)");
    return;
  }
  const RunResult p = In(dir, "promtool check config prometheus.yml");
  INFO(p.out << p.err);
  CHECK(p.code == 0);
  CHECK(p.out == v.out);
}

void ExpectAlertmanagerValid(const std::string& dir) {
  if (!HaveCommand("amtool")) {
    WARN(
        "SKIPPED: amtool not on PATH (Debian package prometheus-alertmanager)");
    return;
  }
  const RunResult r = In(dir, "amtool check-config alertmanager.yml");
  INFO(dir << "\n" << r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("SUCCESS") != std::string::npos);
}

vigil::config::Config LoadExample() {
  auto c = vigil::config::LoadConfigFile(kLlm + "/prometheus.yml");
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  return *c;
}

}  // namespace

TEST_CASE("example prometheus.yml passes vigil and promtool check config",
          "[example_config]") {
  ExpectConfigValid(kLlm);
  TempDir dir;
  WriteAlternative(dir, "prometheus.yml");
  ExpectConfigValid(dir.path());
}

TEST_CASE("example alertmanager.yml passes amtool check-config",
          "[example_config]") {
  ExpectAlertmanagerValid(kLlm);
  TempDir dir;
  WriteAlternative(dir, "alertmanager.yml");
  ExpectAlertmanagerValid(dir.path());
}

TEST_CASE("example prometheus.yml loads the rule pack and its Alertmanager",
          "[example_config]") {
  const auto c = LoadExample();
  REQUIRE(c.rule_files.size() == 3);
  CHECK(c.rule_files[0] == kLlm + "/rules/recording.yml");
  CHECK(c.rule_files[1] == kLlm + "/rules/alerts.yml");
  CHECK(c.rule_files[2] == kLlm + "/rules/slo.yml");  // from slo.yml
  REQUIRE(c.alerting.alertmanagers.size() == 1);
  const auto& am = c.alerting.alertmanagers[0].sd.static_configs;
  REQUIRE(am.size() == 1);
  REQUIRE(am[0].targets.size() == 1);
  CHECK(am[0].targets[0].Get("__address__") == "127.0.0.1:9093");
  // The recording rules run every 15s; scrapes must not be rarer.
  CHECK(c.global.scrape_interval_ms == 15000);
}

TEST_CASE("example prometheus.yml: every job is watched by an up alert",
          "[example_config]") {
  // The `up{job=~...} == 0` alerts of rules/alerts.yml (LLMEngineDown,
  // ScrapeDown): a renamed job would silently lose its down alert.
  const auto alerts = vigil::rules::ReadRuleFile(kLlm + "/rules/alerts.yml");
  REQUIRE(alerts.ok());
  std::vector<vigil::Matcher> job_matchers;
  for (const auto& g : alerts.groups) {
    for (const auto& r : g.rules) {
      using namespace vigil::promql;
      if (r.expr->kind != NodeKind::kBinary) continue;
      const auto& lhs = *r.expr->As<BinaryExpr>().lhs;
      if (lhs.kind != NodeKind::kVectorSelector) continue;
      const auto& vs = lhs.As<VectorSelector>();
      if (vs.name != "up") continue;
      for (const auto& m : vs.matchers) {
        if (m.name() == "job") job_matchers.push_back(m);
      }
    }
  }
  REQUIRE(job_matchers.size() == 2);
  std::set<std::string> jobs;
  for (const auto& sc : LoadExample().scrape_configs) {
    jobs.insert(sc.job_name);
    if (sc.job_name == "vigil") continue;  // meta-monitoring, see below
    // The probe job scrapes the prober (Vigil itself, or blackbox_exporter):
    // its targets are engines, watched by their own jobs' LLMEngineDown.
    if (sc.job_name == "llm-probe") continue;
    bool watched = false;
    for (const auto& m : job_matchers) watched |= m.Matches(sc.job_name);
    INFO("job " << sc.job_name << " has no LLMEngineDown / ScrapeDown");
    CHECK(watched);
  }
  for (const char* j : {"vigil", "vllm", "sglang", "trtllm", "dcgm-exporter",
                        "node-exporter", "gateway"}) {
    INFO(j);
    CHECK(jobs.count(j));
  }
}

TEST_CASE("example prometheus.yml: DNS-found vLLM pods get their variant",
          "[example_config]") {
  TempDir dir;
  WriteAlternative(dir, "prometheus.yml");
  auto c = vigil::config::LoadConfigFile(dir.Sub("prometheus.yml"));
  REQUIRE(c.ok());
  const vigil::config::ScrapeConfig* vllm = nullptr;
  for (const auto& sc : c->scrape_configs) {
    if (sc.job_name == "vllm") vllm = &sc;
  }
  REQUIRE(vllm != nullptr);
  CHECK(vllm->sd.dns_sd_configs.size() == 1);
  vigil::LabelsBuilder in;
  in.Set("__address__", "10.1.2.3:8000")
      .Set("__meta_dns_name", "vllm-qwen-7b-awq.llm.svc.cluster.local");
  vigil::Labels out;
  REQUIRE(vigil::Process(in.Build(), vllm->relabel_configs, &out));
  CHECK(out.Get("variant") == "qwen-7b-awq");
  CHECK(out.Get("framework") == "vllm");
  CHECK(out.Get("service") == "llm-inference");
}

TEST_CASE("example prometheus.yml gives targets the dashboard's labels",
          "[example_config]") {
  // Run Vigil on the example (the targets are unreachable here; their labels
  // are what counts) and read them back from /api/v1/targets.
  TempDir dir;
  const int port = vigil::testutil::FreePort();
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  vigil::testutil::Process vigil(
      {VIGIL_BINARY, "--config.file=" + kLlm + "/prometheus.yml",
       "--storage.tsdb.path=" + dir.Sub("data"),
       "--web.listen-address=127.0.0.1:" + std::to_string(port)},
      dir.Sub("vigil.log"));
  REQUIRE(vigil::testutil::WaitHttp(base + "/-/ready"));
  std::string body;
  for (int i = 0; i < 50; ++i) {
    body = Run("curl -s '" + base + "/api/v1/targets?state=active'").out;
    if (body.find("\"job\":\"gateway\"") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO(body.substr(0, 2000));
  // Engine targets: framework (= job), service and variant.
  for (const char* fw : {"vllm", "sglang", "trtllm"}) {
    const std::regex engine(std::string("\\{[^{}]*\"framework\":\"") + fw +
                            "\"[^{}]*\"job\":\"" + fw +
                            "\"[^{}]*\"service\":\"llm-inference\"[^{}]*"
                            "\"variant\":\"[^\"]+\"[^{}]*\\}");
    INFO(fw);
    CHECK(std::regex_search(body, engine));
  }
  // GPU hosts: framework and variant of the engine they serve.
  CHECK(std::regex_search(
      body, std::regex("\\{\"framework\":\"vllm\",\"instance\":\"10\\.0\\.0\\."
                       "11:9400\",\"job\":\"dcgm-exporter\",\"variant\":"
                       "\"llama3-70b-fp8\"\\}")));
  CHECK(body.find("\"job\":\"vigil\"") != std::string::npos);
}
