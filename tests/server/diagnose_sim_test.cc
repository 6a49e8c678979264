// vigil diagnose over a simulated fleet (examples/sim): one host per fault
// of examples/sim/faults.h, backfilled and imported once (diagnose_testutil.h),
// then diagnosed from the database and through a running server. Each
// fault must name its cause and none of the wrong ones; healthy hosts
// (vLLM V1, V0, SGLang) must yield no finding.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/server/diagnose_testutil.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

namespace fs = std::filesystem;
using vigil::testutil::Run;
using vigil::testutil::RunResult;
using vigil::testutil::SimFleet;

// 2026-11-30 13:30 UTC: the simulated daily peak is at 14:00, so the
// baseline and the recent window see the same load.
constexpr int64_t kSimStart = 1796045400;

// Host h runs engines[h]; faults start 30 min in; diagnosed at 45 min.
const char* const kEngines =
    "vllm-v1,vllm-v1,sglang,vllm-v1,vllm-v0,vllm-v1,vllm-v1,vllm-v1,vllm-v1,"
    "vllm-v1,vllm-v1,vllm-v1,sglang,vllm-v0";
const char* const kScenario = R"(faults:
  - {at: 30m, kind: traffic-surge, host: 1, factor: 3}
  - {at: 30m, kind: kv-saturation, host: 2}
  - {at: 30m, kind: queue-buildup, host: 3}
  - {at: 30m, kind: long-prompts, host: 4}
  - {at: 30m, kind: gpu-degrading, host: 5, gpu: 0, duration: 20m}
  - {at: 30m, kind: gpu-overheat, host: 6, gpu: 0}
  - {at: 30m, kind: xid, host: 7, gpu: 0, code: 79}
  - {at: 30m, kind: ecc-dbe, host: 8, gpu: 0}
  - {at: 30m, kind: engine-hang, host: 9}
  - {at: 30m, kind: target-down, host: 10}
  - {at: 30m, kind: spec-decode-low, host: 11}
)";

const SimFleet& FaultFleet() {
  static const SimFleet f = vigil::testutil::BuildSimFleet(
      std::string("--hosts=14 --gpus=1 --cpus=1 --engines=") + kEngines +
          " --ecc --backfill-probe --backfill-step=30s",
      kScenario, kSimStart, 2700);
  return f;
}

// Two healthy hosts, dcgm-exporter's default counters (no ECC), no probe.
const SimFleet& HealthyFleet() {
  static const SimFleet f = vigil::testutil::BuildSimFleet(
      "--hosts=2 --gpus=2 --cpus=1 --engines=vllm-v1,sglang "
      "--backfill-step=30s",
      "", kSimStart, 2700);
  return f;
}

std::string DiagnoseVigil() { return VIGIL_BINARY; }

RunResult Diagnose(const SimFleet& f, const std::string& extra) {
  return Run(DiagnoseVigil() + " diagnose --storage.tsdb.path=" + f.data +
             " --time=" + std::to_string(f.end) + " " + extra);
}

struct Parsed {
  rapidjson::Document doc;
  // node -> causes of its findings (engine and GPU findings alike).
  std::map<std::string, std::multiset<std::string>> by_node;
  std::vector<std::string> order;  // causes as listed
  std::multiset<std::string> missing;
};

Parsed ParseDiagnosis(const std::string& json) {
  Parsed p;
  p.doc.Parse(json.c_str());
  REQUIRE(!p.doc.HasParseError());
  REQUIRE(std::string(p.doc["status"].GetString()) == "success");
  for (const auto& f : p.doc["data"]["findings"].GetArray()) {
    std::string cause = f["cause"].GetString();
    p.by_node[f["node"].GetString()].insert(cause);
    p.order.push_back(cause);
    REQUIRE(f["evidence"].IsArray());
    REQUIRE(f["evidence"].Size() > 0);
    REQUIRE(f["next"].Size() > 0);
    REQUIRE(!std::string(f["summary"].GetString()).empty());
  }
  for (const auto& m : p.doc["data"]["missing"].GetArray()) {
    p.missing.insert(m["kind"].GetString());
  }
  return p;
}

// The documented order of docs/diagnose.md.
const std::vector<std::string> kOrder = {
    "upstream",        "decode_bound",  "capacity_exhausted",
    "saturation_knee", "hardware",      "demand_side",
    "supply_side",     "kv_high_water", "prefix_cache_collapse",
    "gpu_hang",        "engine_down",   "spec_decode_low"};

struct Expect {
  int host;
  const char* fault;
  std::set<std::string> required;
  std::set<std::string> forbidden;  // besides: anything for a healthy host
  std::set<std::string> one_of;     // at least one of these (if not empty)
};

}  // namespace

TEST_CASE("diagnose names the cause of each simulated fault and no wrong one",
          "[diagnose]") {
  const SimFleet& f = FaultFleet();
  REQUIRE(f.error.empty());
  RunResult r = Diagnose(f, "-o json");
  INFO(r.err);
  CHECK(r.code == 1);  // findings
  Parsed p = ParseDiagnosis(r.out);
  CHECK(p.doc["data"]["engines"].GetInt() == 14);
  const std::set<std::string> latency = {"upstream", "decode_bound",
                                         "capacity_exhausted"};
  const std::vector<Expect> expect = {
      {0, "healthy vllm-v1", {}, {}, {}},
      {12, "healthy sglang", {}, {}, {}},
      {13, "healthy vllm-v0", {}, {}, {}},
      {1,
       "traffic-surge",
       {"capacity_exhausted", "demand_side"},
       {"hardware", "supply_side", "engine_down", "gpu_hang", "upstream",
        "decode_bound", "kv_high_water"},
       {}},
      {2,
       "kv-saturation (sglang)",
       {"upstream", "demand_side", "prefix_cache_collapse"},
       {"hardware", "supply_side", "decode_bound", "kv_high_water",
        "engine_down"},
       {}},
      {3,
       "queue-buildup",
       {"upstream"},
       {"demand_side", "hardware", "supply_side", "capacity_exhausted",
        "decode_bound", "kv_high_water", "engine_down"},
       {}},
      {4,
       "long-prompts (vllm-v0)",
       {"upstream", "demand_side"},
       {"hardware", "supply_side", "decode_bound", "engine_down"},
       {}},
      {5,
       "gpu-degrading",
       {"hardware"},
       {"demand_side", "upstream", "decode_bound", "engine_down", "gpu_hang"},
       {}},
      {6,
       "gpu-overheat",
       {"hardware", "supply_side"},
       {"capacity_exhausted", "demand_side", "upstream", "engine_down",
        "saturation_knee"},
       {}},
      {7, "xid 79", {"hardware"}, latency, {}},
      {8, "ecc-dbe", {"hardware"}, latency, {}},
      {9,
       "engine-hang",
       {},
       {"hardware", "upstream", "decode_bound", "capacity_exhausted",
        "demand_side"},
       {"engine_down", "gpu_hang"}},
      {10, "target-down", {"engine_down"}, {"hardware", "gpu_hang"}, {}},
      {11, "spec-decode-low", {"spec_decode_low"}, {}, {}},
  };
  for (const Expect& e : expect) {
    const std::string node = "gpu-node-" + std::to_string(e.host);
    const auto& got = p.by_node[node];
    std::string list;
    for (const auto& c : got) list += c + " ";
    INFO(e.fault << " on " << node << ": " << list);
    const bool healthy = e.required.empty() && e.one_of.empty();
    if (healthy) {
      CHECK(got.empty());
      continue;
    }
    for (const auto& c : e.required) CHECK(got.count(c) == 1);
    for (const auto& c : e.forbidden) CHECK(got.count(c) == 0);
    if (!e.one_of.empty()) {
      int n = 0;
      for (const auto& c : e.one_of) n += int(got.count(c));
      CHECK(n == 1);
    }
    // Only the causes the table names: every other one is wrong too,
    // except the ones a fault may plausibly add (listed nowhere).
    if (std::string(e.fault) == "ecc-dbe" || std::string(e.fault) == "xid 79" ||
        std::string(e.fault) == "spec-decode-low" ||
        std::string(e.fault) == "target-down") {
      CHECK(got.size() == e.required.size());
    }
  }
  // In the map's order.
  size_t last = 0;
  for (const auto& c : p.order) {
    auto it = std::find(kOrder.begin(), kOrder.end(), c);
    REQUIRE(it != kOrder.end());
    size_t i = size_t(it - kOrder.begin());
    CHECK(i >= last);
    last = i;
  }
  // The two dead engines are reported missing, not guessed about.
  CHECK(p.missing.count("target_down") == 2);
  CHECK(p.missing.count("ecc_disabled") == 0);
  CHECK(p.missing.count("no_probe") == 0);
}

TEST_CASE("with a higher TTFT line the overheated GPU is decode-bound",
          "[diagnose]") {
  const SimFleet& f = FaultFleet();
  REQUIRE(f.error.empty());
  vigil::testutil::TempDir dir;
  std::ofstream(dir.Sub("t.yml")) << "latency:\n  ttft_p99_seconds: 5\n";
  RunResult r = Diagnose(f, "-o json --thresholds=" + dir.Sub("t.yml"));
  Parsed p = ParseDiagnosis(r.out);
  const auto& got = p.by_node["gpu-node-6"];
  std::string list;
  for (const auto& c : got) list += c + " ";
  INFO(list);
  CHECK(got.count("decode_bound") == 1);
  CHECK(got.count("supply_side") == 1);
  CHECK(got.count("hardware") == 1);
  CHECK(got.count("capacity_exhausted") == 0);
  CHECK(got.size() == 3);
}

TEST_CASE("diagnose's text report shows each finding's numbers and next steps",
          "[diagnose]") {
  const SimFleet& f = FaultFleet();
  REQUIRE(f.error.empty());
  RunResult r = Diagnose(f, "--variant=sglang");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.out.find("2 engine target(s)") != std::string::npos);
  CHECK(r.out.find("upstream: sglang") != std::string::npos);
  CHECK(r.out.find("ttft_p99_seconds = ") != std::string::npos);
  CHECK(r.out.find("(baseline ") != std::string::npos);
  CHECK(r.out.find("next: queue depth") != std::string::npos);
  CHECK(r.out.find("vllm-v1") == std::string::npos);
  // An XID finding is critical and names the code.
  RunResult x = Diagnose(f, "");
  CHECK(x.out.find("[critical] hardware") != std::string::npos);
  CHECK(x.out.find("XID 79 on GPU 0") != std::string::npos);
}

TEST_CASE("a healthy fleet yields no finding and says what data is missing",
          "[diagnose]") {
  const SimFleet& f = HealthyFleet();
  REQUIRE(f.error.empty());
  RunResult r = Diagnose(f, "-o json");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  Parsed p = ParseDiagnosis(r.out);
  CHECK(p.order.empty());
  CHECK(p.doc["data"]["engines"].GetInt() == 2);
  CHECK(p.doc["data"]["gpu_hosts"].GetInt() == 2);
  CHECK(p.missing.count("ecc_disabled") == 2);  // no --ecc
  CHECK(p.missing.count("no_probe") == 1);
  CHECK(p.missing.count("target_down") == 0);
  RunResult t = Diagnose(f, "");
  CHECK(t.code == 0);
  CHECK(t.out.find("no finding") != std::string::npos);
  CHECK(t.out.find("ecc_disabled") != std::string::npos);

  SECTION("--thresholds overrides the defaults") {
    vigil::testutil::TempDir dir;
    // Healthy KV usage is about 0.3 with no queue: a high-water mark at 0.2.
    std::ofstream(dir.Sub("t.yml")) << "capacity:\n  kv_cache_high: 0.2\n";
    RunResult o = Diagnose(f, "-o json --thresholds=" + dir.Sub("t.yml"));
    CHECK(o.code == 1);
    Parsed q = ParseDiagnosis(o.out);
    CHECK(q.order ==
          std::vector<std::string>{"kv_high_water", "kv_high_water"});
  }
  SECTION("the shipped thresholds file equals the built-in defaults") {
    RunResult o =
        Diagnose(f, "-o json --thresholds=" + std::string(VIGIL_SOURCE_DIR) +
                        "/examples/llm/diagnose.yml");
    CHECK(o.code == 0);
    CHECK(o.out == r.out);
  }
  SECTION("a time before any data finds no engine (exit 2)") {
    RunResult o =
        Run(DiagnoseVigil() + " diagnose --storage.tsdb.path=" + f.data +
            " --time=" + std::to_string(f.start - 7200) + " -o json");
    CHECK(o.code == 2);
    CHECK(o.out.find("\"no_engines\"") != std::string::npos);
  }
}

TEST_CASE(
    "diagnose: --server and /api/v1/diagnose give the report of the database",
    "[diagnose]") {
  const SimFleet& f = FaultFleet();
  REQUIRE(f.error.empty());
  RunResult local = Diagnose(f, "-o json");
  REQUIRE((local.code == 1));
  // The server opens its storage read-write: give it a copy.
  vigil::testutil::TempDir dir;
  fs::copy(f.data, dir.Sub("data"), fs::copy_options::recursive);
  std::ofstream(dir.Sub("prometheus.yml"))
      << "global:\n  scrape_interval: 15s\n";
  const int port = vigil::testutil::FreePort();
  const std::string addr = "127.0.0.1:" + std::to_string(port);
  vigil::testutil::Process server(
      {DiagnoseVigil(), "--config.file=" + dir.Sub("prometheus.yml"),
       "--storage.tsdb.path=" + dir.Sub("data"),
       "--web.listen-address=" + addr},
      dir.Sub("vigil.log"));
  REQUIRE(vigil::testutil::WaitHttp("http://" + addr + "/-/ready"));
  const std::string t = std::to_string(f.end);
  RunResult remote = Run(DiagnoseVigil() + " diagnose --server=http://" + addr +
                         " --time=" + t + " -o json");
  INFO(remote.err);
  CHECK(remote.code == 1);
  CHECK(remote.out == local.out);
  RunResult api =
      Run("curl -s 'http://" + addr + "/api/v1/diagnose?time=" + t + "'");
  CHECK(api.out + "\n" == local.out);
  // POST form, and the variant filter.
  RunResult post =
      Run("curl -s -XPOST -d time=" + t + " -d variant=vllm-v0 'http://" +
          addr + "/api/v1/diagnose'");
  RunResult v0 = Diagnose(f, "-o json --variant=vllm-v0");
  CHECK(post.out + "\n" == v0.out);
  CHECK(v0.out.find("\"engines\":2") != std::string::npos);
  // Text over --server reads like the local one.
  RunResult text = Run(DiagnoseVigil() + " diagnose --server=http://" + addr +
                       "/ --time=" + t);
  CHECK(text.out == Diagnose(f, "").out);
  // Malformed parameters: Prometheus's error JSON, 400.
  RunResult bad = Run("curl -s -w ' %{http_code}' 'http://" + addr +
                      "/api/v1/diagnose?time=yesterday'");
  CHECK(bad.out ==
        "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"invalid "
        "time value for 'time': cannot parse \\\"yesterday\\\" to a valid "
        "timestamp\"} 400");
  RunResult bad_to = Run("curl -s -w ' %{http_code}' 'http://" + addr +
                         "/api/v1/diagnose?timeout=soon'");
  CHECK(bad_to.out.find("\"errorType\":\"bad_data\"") != std::string::npos);
  CHECK(bad_to.out.find("invalid parameter \\\"timeout\\\"") !=
        std::string::npos);
  CHECK(bad_to.out.substr(bad_to.out.size() - 3) == "400");
  RunResult bad_esc = Run("curl -s -w ' %{http_code}' 'http://" + addr +
                          "/api/v1/diagnose?variant=%zz'");
  CHECK(bad_esc.out.substr(bad_esc.out.size() - 3) == "400");
  // A server that is not there: a data error.
  RunResult gone =
      Run(DiagnoseVigil() + " diagnose --server=http://127.0.0.1:" +
          std::to_string(vigil::testutil::FreePort()));
  CHECK(gone.code == 2);
  CHECK(gone.err.find("connection refused") != std::string::npos);
}

TEST_CASE(
    "the server's --diagnose.thresholds.file sets /api/v1/diagnose's "
    "thresholds",
    "[diagnose]") {
  const SimFleet& f = HealthyFleet();
  REQUIRE(f.error.empty());
  vigil::testutil::TempDir dir;
  fs::copy(f.data, dir.Sub("data"), fs::copy_options::recursive);
  std::ofstream(dir.Sub("prometheus.yml")) << "global: {}\n";
  std::ofstream(dir.Sub("t.yml")) << "capacity:\n  kv_cache_high: 0.2\n";
  std::ofstream(dir.Sub("bad.yml")) << "capacity:\n  kv_cache_hi: 0.2\n";
  const std::string addr =
      "127.0.0.1:" + std::to_string(vigil::testutil::FreePort());
  auto argv = [&](const std::string& thresholds) {
    return std::vector<std::string>{
        DiagnoseVigil(), "--config.file=" + dir.Sub("prometheus.yml"),
        "--storage.tsdb.path=" + dir.Sub("data"),
        "--web.listen-address=" + addr,
        "--diagnose.thresholds.file=" + thresholds};
  };
  {
    vigil::testutil::Process bad(argv(dir.Sub("bad.yml")), dir.Sub("bad.log"));
    CHECK(bad.Wait(10000) == 1);
    CHECK(vigil::testutil::ReadFile(dir.Sub("bad.log"))
              .find("bad.yml:2:3: yaml: unmarshal errors") !=
          std::string::npos);
  }
  vigil::testutil::Process server(argv(dir.Sub("t.yml")), dir.Sub("vigil.log"));
  REQUIRE(vigil::testutil::WaitHttp("http://" + addr + "/-/ready"));
  const std::string t = std::to_string(f.end);
  RunResult api =
      Run("curl -s 'http://" + addr + "/api/v1/diagnose?time=" + t + "'");
  Parsed p = ParseDiagnosis(api.out);
  CHECK(p.order == std::vector<std::string>{"kv_high_water", "kv_high_water"});
  RunResult cli =
      Run(DiagnoseVigil() + " diagnose --server=http://" + addr +
          " --time=" + t + " -o json --thresholds=" + dir.Sub("t.yml"));
  CHECK(cli.out == api.out + "\n");
}
