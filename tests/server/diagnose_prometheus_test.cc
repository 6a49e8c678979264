// The same diagnosis through a real Prometheus: the simulator's backfill
// goes into Debian's Prometheus with `promtool tsdb create-blocks-from
// openmetrics`, and `vigil diagnose --server` asks it. Prometheus 2.x
// windows include their left end (3.x and Vigil do not), so the numbers
// differ in the last digits; the causes, their order and the missing data
// must not.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/server/diagnose_testutil.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::testutil::Run;
using vigil::testutil::RunResult;

// (cause, node) of every finding, in order, and the missing kinds.
std::vector<std::string> Summary(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  REQUIRE(!d.HasParseError());
  std::vector<std::string> out;
  for (const auto& f : d["data"]["findings"].GetArray()) {
    out.push_back(std::string(f["cause"].GetString()) + "@" +
                  f["node"].GetString());
  }
  for (const auto& m : d["data"]["missing"].GetArray()) {
    out.push_back(std::string("missing:") + m["kind"].GetString());
  }
  return out;
}

}  // namespace

TEST_CASE("diagnose --server against Prometheus names the same causes",
          "[diagnose][prometheus]") {
  if (!vigil::testutil::HaveCommand("promtool") ||
      !vigil::testutil::HaveCommand("prometheus")) {
    WARN("promtool/prometheus not installed: comparison SKIPPED");
    return;
  }
  const char* scenario = R"(faults:
  - {at: 30m, kind: kv-saturation, host: 1}
  - {at: 30m, kind: gpu-overheat, host: 2, gpu: 0}
  - {at: 30m, kind: xid, host: 3, gpu: 1, code: 48}
  - {at: 30m, kind: target-down, host: 4}
)";
  const auto f = vigil::testutil::BuildSimFleet(
      "--hosts=5 --gpus=2 --cpus=1 --engines=vllm-v1,sglang,vllm-v1,vllm-v0 "
      "--backfill-step=30s --ecc",
      scenario, 1796045400, 2700, true);
  REQUIRE(f.error.empty());
  vigil::testutil::TempDir dir;
  RunResult b = Run("promtool tsdb create-blocks-from openmetrics " + f.om +
                    " " + dir.Sub("prom"));
  INFO(b.out << b.err);
  REQUIRE(b.code == 0);
  std::ofstream(dir.Sub("prometheus.yml")) << "global: {}\n";
  const std::string addr =
      "127.0.0.1:" + std::to_string(vigil::testutil::FreePort());
  vigil::testutil::Process prom(
      {"prometheus", "--config.file=" + dir.Sub("prometheus.yml"),
       "--storage.tsdb.path=" + dir.Sub("prom"),
       "--storage.tsdb.retention.time=100y", "--web.listen-address=" + addr},
      dir.Sub("prom.log"));
  REQUIRE(vigil::testutil::WaitHttp("http://" + addr + "/-/ready", 300));
  const std::string t = " --time=" + std::to_string(f.end) + " -o json";
  RunResult remote =
      Run(std::string(VIGIL_BINARY) + " diagnose --server=http://" + addr + t);
  RunResult local = Run(std::string(VIGIL_BINARY) +
                        " diagnose --storage.tsdb.path=" + f.data + t);
  INFO(remote.err << local.err);
  CHECK(remote.code == 1);
  CHECK(local.code == 1);
  std::vector<std::string> want = Summary(local.out);
  CHECK(Summary(remote.out) == want);
  // And the faults are there at all.
  auto has = [&](const std::string& s) {
    return std::find(want.begin(), want.end(), s) != want.end();
  };
  CHECK(has("demand_side@gpu-node-1"));
  CHECK(has("hardware@gpu-node-2"));
  CHECK(has("hardware@gpu-node-3"));
  CHECK(has("engine_down@gpu-node-4"));
  CHECK(has("missing:no_probe"));
}
