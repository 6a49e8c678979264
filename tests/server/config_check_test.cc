// `vigil check config` on tests/server/testdata/config, compared with the
// real `promtool check config` (Prometheus 2.42) when it is on PATH: same
// stdout, stderr and exit code, except where Vigil deliberately differs.
#include <catch2/catch.hpp>
#include <string>

#include "tests/testutil/subprocess.h"

namespace {

using vigil::testutil::HaveCommand;
using vigil::testutil::Run;
using vigil::testutil::RunResult;

const std::string kConfigDir =
    std::string(VIGIL_SOURCE_DIR) + "/tests/server/testdata/config";

RunResult RunConfigCheck(const std::string& tool, const std::string& file) {
  return Run("cd '" + kConfigDir + "' && " + tool + " check config " + file);
}

RunResult VigilCheckConfig(const std::string& file) {
  return RunConfigCheck(std::string("'") + VIGIL_BINARY + "'", file);
}

void SameAsPromtool(const std::string& file) {
  if (!HaveCommand("promtool")) return;
  INFO(file);
  const RunResult v = VigilCheckConfig(file);
  const RunResult p = RunConfigCheck("promtool", file);
  CHECK(v.code == p.code);
  CHECK(v.out == p.out);
  CHECK(v.err == p.err);
}

}  // namespace

TEST_CASE("check config agrees with promtool", "[check_config]") {
  for (const char* f :
       {"good.yml", "unknown_keys.yml", "bad_duration.yml", "bad_regex.yml",
        "bad_relabel.yml", "duplicate_jobs.yml", "timeout_gt_interval.yml",
        "bad_file_sd.yml", "missing_file_sd.yml", "--syntax-only good.yml"}) {
    SameAsPromtool(f);
  }
  const RunResult good = VigilCheckConfig("good.yml");
  CHECK(good.code == 0);
  CHECK(good.out ==
        "Checking good.yml\n  SUCCESS: 1 rule files found\n"
        " SUCCESS: good.yml is valid prometheus config file syntax\n\n"
        "Checking rules/r.yml\n  SUCCESS: 1 rules found\n\n");
  const RunResult sd = VigilCheckConfig("bad_file_sd.yml");
  CHECK(sd.code == 1);
  CHECK(sd.err ==
        "  FAILED: checking SD file \"bad_sd.json\": \"a-b\" is not a valid "
        "label name\n");
}

TEST_CASE("check config rejects unsupported discovery by name",
          "[check_config]") {
  // promtool 2.42 (Debian's build has no Kubernetes SD) says "field
  // kubernetes_sd_configs not found"; Vigil says what it is.
  const RunResult r = VigilCheckConfig("unsupported_sd.yml");
  CHECK(r.code == 1);
  CHECK(r.err ==
        "  FAILED: parsing YAML file unsupported_sd.yml: line 3: "
        "kubernetes_sd_configs is not supported by vigil\n");
}
