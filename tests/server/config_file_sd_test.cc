// server/config/file_sd.h: JSON and YAML target files.
#include <catch2/catch.hpp>
#include <string>

#include "server/config/config.h"
#include "server/config/file_sd.h"

namespace {

const std::string kDir =
    std::string(VIGIL_SOURCE_DIR) + "/tests/server/testdata/config";

}  // namespace

TEST_CASE("file_sd reads JSON and YAML groups with __meta_filepath",
          "[file_sd]") {
  auto groups = vigil::config::ReadFileSD({"sd/*.json", "sd/*.yml"}, kDir);
  REQUIRE(groups.ok());
  REQUIRE(groups->size() == 3);
  const auto& g0 = (*groups)[0];
  CHECK(g0.source == kDir + "/sd/nodes.json:0");
  REQUIRE(g0.targets.size() == 2);
  CHECK(g0.targets[1].Get("__address__") == "10.0.0.2:9100");
  CHECK(g0.labels.Get("rack") == "r1");
  CHECK(g0.labels.Get("__meta_filepath") == kDir + "/sd/nodes.json");
  CHECK((*groups)[1].labels.size() == 1);
  CHECK((*groups)[2].labels.Get("rack") == "r2");
  CHECK((*groups)[2].source == kDir + "/sd/more.yml:0");
}

TEST_CASE("file_sd errors", "[file_sd]") {
  auto bad = vigil::config::ReadFileSDFile(kDir + "/bad_sd.json");
  CHECK(bad.status().message() == "\"a-b\" is not a valid label name");
  auto missing = vigil::config::ReadFileSDFile(kDir + "/nope.json");
  CHECK(missing.status().code() == absl::StatusCode::kUnavailable);
  auto ext = vigil::config::ReadFileSDFile(kDir + "/targets.txt");
  CHECK(ext.status().message() == "invalid file extension: \".txt\"");
  // A file that matches nothing is not an error: discovery finds nothing.
  auto none = vigil::config::ReadFileSD({"none/*.json"}, kDir);
  REQUIRE(none.ok());
  CHECK(none->empty());
}

TEST_CASE("a relative file_sd path of a relative config file stays relative",
          "[config][file_sd]") {
  // LoadConfigFile joins files to the config's directory; discovery lists
  // them again with no base: that must not make them absolute.
  CHECK(vigil::config::JoinDir("", "examples/sim/targets.json") ==
        "examples/sim/targets.json");
  CHECK(vigil::config::JoinDir("examples/sim/", "targets.json") ==
        "examples/sim/targets.json");
  CHECK(vigil::config::JoinDir("/etc/vigil", "/abs.json") == "/abs.json");
}
