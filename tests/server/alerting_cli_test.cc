// `vigil check alertmanager-config` and `vigil alertmanager routes show|test`
// run as processes on the alertmanager testdata and the LLM example, and,
// when `amtool` (0.25) is on PATH, the same files through amtool: the same
// exit codes, the same stdout (check-config's errors compared once Vigil's
// "FILE:LINE:COL: " is taken out), the same trees and receivers.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"

namespace {

using vigil::testutil::HaveCommand;
using vigil::testutil::kVigil;
using vigil::testutil::Run;
using vigil::testutil::RunResult;

const std::string kCliData =
    std::string(VIGIL_SOURCE_DIR) + "/tests/server/testdata/alertmanager";
const std::string kLlmAmConfig =
    std::string(VIGIL_SOURCE_DIR) + "/examples/llm/alertmanager.yml";

// Runs `cmd` inside the testdata directory (short, shared file names).
RunResult InData(const std::string& cmd) {
  return Run("cd '" + kCliData + "' && " + cmd);
}

bool HaveAmtool() {
  if (HaveCommand("amtool")) return true;
  WARN("amtool not installed: skipping the comparison with amtool");
  return false;
}

std::string FirstLine(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// Vigil's check-config output with "FILE:LINE:COL: " after FAILED removed.
std::string WithoutPositions(const std::string& s) {
  return std::regex_replace(
      s, std::regex(R"(FAILED: [^ :]+\.yml(:\d+:\d+)?: )"), "FAILED: ");
}

std::vector<std::string> BadFiles() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(kCliData + "/bad")) {
    out.push_back("bad/" + e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("check alertmanager-config prints amtool's summary",
          "[alerting][am-cli]") {
  const RunResult v = InData(kVigil + " check alertmanager-config rich.yml '" +
                             kLlmAmConfig + "'");
  CHECK(v.code == 0);
  CHECK(v.out ==
        "Checking 'rich.yml'  SUCCESS\nFound:\n - global config\n - route\n"
        " - 2 inhibit rules\n - 10 receivers\n - 1 templates\n  SUCCESS\n\n"
        "Checking '" +
            kLlmAmConfig +
            "'  SUCCESS\nFound:\n - global config\n - route\n"
            " - 2 inhibit rules\n - 2 receivers\n - 0 templates\n\n");
  CHECK(v.err.empty());
  if (!HaveAmtool()) return;
  const RunResult a =
      InData("amtool check-config rich.yml '" + kLlmAmConfig + "'");
  CHECK(a.code == 0);
  CHECK(a.out == v.out);
}

TEST_CASE("check alertmanager-config parses the template files",
          "[alerting][am-cli]") {
  const RunResult v =
      InData(kVigil + " check alertmanager-config bad_template.yml");
  CHECK(v.code == 1);
  CHECK(v.out ==
        "Checking 'bad_template.yml'  SUCCESS\nFound:\n - global config\n"
        " - route\n - 0 inhibit rules\n - 1 receivers\n - 1 templates\n"
        "  FAILED: template: broken.tmpl:1: function \"nosuchfunc\" not "
        "defined\n\n");
  if (!HaveAmtool()) return;
  const RunResult a = InData("amtool check-config bad_template.yml");
  CHECK(a.code == 1);
  CHECK(a.out == v.out);
}

TEST_CASE("check alertmanager-config fails where amtool fails",
          "[alerting][am-cli]") {
  const bool amtool = HaveAmtool();
  // yaml-cpp words syntax errors its own way.
  const std::vector<std::string> own_words = {"bad/bad_yaml.yml"};
  for (const std::string& f : BadFiles()) {
    INFO(f);
    const RunResult v = InData(kVigil + " check alertmanager-config " + f);
    CHECK(v.code == 1);
    CHECK(std::regex_search(
        FirstLine(v.out),
        std::regex("^Checking '" + f + "'  FAILED: " + f + "(:\\d+:\\d+)?: ")));
    CHECK(v.err == "vigil: error: failed to validate 1 file(s)\n\n");
    if (!amtool) continue;
    const RunResult a = InData("amtool check-config " + f);
    CHECK(a.code == 1);
    if (std::find(own_words.begin(), own_words.end(), f) == own_words.end()) {
      CHECK(WithoutPositions(v.out) == a.out);
    }
  }
  const RunResult two = InData(kVigil +
                               " check alertmanager-config rich.yml "
                               "bad/unknown_key.yml bad/no_routes.yml");
  CHECK(two.code == 1);
  CHECK(two.err == "vigil: error: failed to validate 2 file(s)\n\n");
  const RunResult missing =
      InData(kVigil + " check alertmanager-config nope.yml");
  CHECK(missing.code == 1);
  CHECK(missing.err == "vigil: error: path 'nope.yml' does not exist\n\n");
}

TEST_CASE("what amtool accepts and Vigil does not implement fails by name",
          "[alerting][am-cli]") {
  const std::string dir = std::filesystem::temp_directory_path() /
                          ("vigil-am-cli-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir + "/pd.yml")
        << "route: {receiver: x}\nreceivers:\n- name: x\n"
           "  pagerduty_configs:\n  - routing_key: abc\n";
    std::ofstream(dir + "/teams.yml")
        << "route: {receiver: x}\nreceivers:\n- name: x\n"
           "  msteams_configs: [{webhook_url: 'https://teams/x'}]\n"
           "  feishu_configs: [{webhook_url: 'https://feishu/x'}]\n";
  }
  const RunResult pd = Run("cd '" + dir + "' && " + kVigil +
                           " check alertmanager-config pd.yml");
  CHECK(pd.code == 1);
  CHECK(FirstLine(pd.out) ==
        "Checking 'pd.yml'  FAILED: pd.yml:4:3: pagerduty_configs is not "
        "supported by vigil");
  const RunResult teams = Run("cd '" + dir + "' && " + kVigil +
                              " check alertmanager-config teams.yml");
  CHECK(teams.code == 0);
  if (HaveAmtool()) {
    CHECK(Run("cd '" + dir + "' && amtool check-config pd.yml").code == 0);
    CHECK(Run("cd '" + dir + "' && amtool check-config teams.yml").code == 1);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("routes show prints amtool's tree", "[alerting][am-cli]") {
  const RunResult llm =
      Run(kVigil + " alertmanager routes show '" + kLlmAmConfig + "'");
  CHECK(llm.code == 0);
  CHECK(llm.out ==
        "Routing tree:\n.\n"
        "└── default-route  receiver: oncall-default\n"
        "    ├── {severity=\"critical\"}  receiver: oncall-critical\n"
        "    └── {severity=\"info\"}  receiver: oncall-default\n\n");
  const RunResult rich = InData(kVigil + " alertmanager routes show rich.yml");
  CHECK(rich.code == 0);
  CHECK(rich.out.find(
            "├── {team=\"db\"}  continue: true  receiver: db-pager\n") !=
        std::string::npos);
  CHECK(
      rich.out.find("{service=~\"^(?:mysql|postgres)$\"}  receiver: db-sql") !=
      std::string::npos);
  // --config.file works as in amtool.
  CHECK(InData(kVigil + " alertmanager routes --config.file=rich.yml").out ==
        rich.out);
  const RunResult bad =
      InData(kVigil + " alertmanager routes show bad/unknown_key.yml");
  CHECK(bad.code == 1);
  CHECK(bad.err ==
        "vigil: error: bad/unknown_key.yml:3:3: yaml: unmarshal errors:\n"
        "  line 3: field recevier not found in type config.plain\n\n");
  if (!HaveAmtool()) return;
  CHECK(Run("amtool config routes show --config.file='" + kLlmAmConfig + "'")
            .out == llm.out);
  CHECK(InData("amtool config routes show --config.file=rich.yml").out ==
        rich.out);
}

TEST_CASE("routes test gives amtool's receivers", "[alerting][am-cli]") {
  struct Case {
    std::string file;
    std::string labels;
  };
  const std::vector<Case> cases = {
      {kLlmAmConfig, "severity=critical"},
      {kLlmAmConfig, "severity=info alertname=GPUMemoryGap"},
      {kLlmAmConfig, "severity=warning alertname=QueueBuildup cluster=a"},
      {kLlmAmConfig,
       "alertname=LLMEngineDown severity=critical instance=h:8000"},
      {kLlmAmConfig, ""},
      {"rich.yml", "team=db"},
      {"rich.yml", "team=db severity=critical"},
      {"rich.yml", "team=db severity=critical env=dev"},
      {"rich.yml", "team=db service=mysql"},
      {"rich.yml", "team=db service=mysqlx"},
      {"rich.yml", "team=frontend severity=warning"},
      {"rich.yml", "team=frontend severity=info"},
      {"rich.yml", "team=frontend instance=host:9090"},
      {"rich.yml", "alertname=Watchdog"},
      {"rich.yml", "severity=warning"},
      {"rich.yml", "severity=warnish"},
      {"rich.yml", "team=db severity=page service=postgres"},
      {"rich.yml", "'team=\"frontend\"' 'instance=\"a b:9090\"'"},
  };
  const bool amtool = HaveAmtool();
  for (const Case& c : cases) {
    INFO(c.file << " " << c.labels);
    for (const char* tree : {"", " --tree"}) {
      const RunResult v = InData(kVigil + " alertmanager routes test '" +
                                 c.file + "'" + tree + " " + c.labels);
      CHECK(v.code == 0);
      CHECK_FALSE(v.out.empty());
      if (!amtool) continue;
      const RunResult a = InData("amtool config routes test --config.file='" +
                                 c.file + "'" + tree + " " + c.labels);
      CHECK(a.code == v.code);
      CHECK(a.out == v.out);
    }
  }
  // The receivers themselves, without amtool.
  CHECK(InData(kVigil + " alertmanager routes test rich.yml severity=warning")
            .out == "chat,mail\n");
  const RunResult ok = InData(kVigil +
                              " alertmanager routes test rich.yml "
                              "--verify.receivers=db-pager,db-audit team=db");
  CHECK(ok.code == 0);
  CHECK(ok.out == "db-pager,db-audit\n");
  const RunResult mismatch = InData(
      kVigil +
      " alertmanager routes test rich.yml --verify.receivers=db team=db");
  CHECK(mismatch.code == 1);
  CHECK(mismatch.out ==
        "db-pager,db-audit\n"
        "WARNING: Expected receivers did not match resolved receivers.\n");
  const RunResult regex =
      InData(kVigil + " alertmanager routes test rich.yml 'team=~db'");
  CHECK(regex.code == 1);
  CHECK(regex.err ==
        "vigil: error: Failed to parse labels: labels must be specified as "
        "key=value pairs\n\n");
  if (amtool) {
    CHECK(InData("amtool config routes test --config.file=rich.yml "
                 "--verify.receivers=db team=db")
              .out == mismatch.out);
    CHECK(InData("amtool config routes test --config.file=rich.yml 'team=~db'")
              .code == 1);
  }
}

}  // namespace
