// `vigil calibrate` over simulator data with known load steps (70 / 90 /
// 110 % of design load, examples/llm/calibrate/steps.yml's kind of
// scenario): the percentiles match a direct computation from the stored
// samples, the proposals follow the rule of docs/calibration.md, a server
// gives the same answer as the storage directory, --write output passes
// promtool, and malformed flags and windows are clear errors. Plus the
// pure functions (windows, thresholds, quantiles) on their own.
#include "server/calibrate/calibrate.h"

#include <rapidjson/document.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "rules/rule_file.h"
#include "storage/db.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::testutil::Run;

const std::string kCalibrateVigil = VIGIL_BINARY;
const std::string kRules =
    std::string(VIGIL_SOURCE_DIR) + "/examples/llm/rules/alerts.yml";
constexpr int64_t kStart = 1796045100;  // 2026-11-30T13:25:00Z, near the peak

std::string Sim() {
#ifdef VIGIL_SIM_BINARY
  return VIGIL_SIM_BINARY;
#else
  return (std::filesystem::path(kCalibrateVigil).parent_path() / "vigil-sim")
      .string();
#endif
}

// One host, 5 min warm-up, then 10 min at each of factor 1.0 / 1.3 / 1.6,
// imported into a storage directory once per process.
struct CalibrateFixture {
  vigil::testutil::TempDir dir;
  std::string data;
  bool ok = false;
  std::string log;
  CalibrateFixture() {
    data = dir.Sub("data");
    std::ofstream(dir.Sub("steps.yml"))
        << "faults:\n"
           "  - {at: 5m, kind: traffic-surge, factor: 1.0, duration: 10m}\n"
           "  - {at: 15m, kind: traffic-surge, factor: 1.3, duration: 10m}\n"
           "  - {at: 25m, kind: traffic-surge, factor: 1.6, duration: 10m}\n";
    auto sim =
        Run("cd " + dir.path() + " && " + Sim() +
            " --hosts=1 --gpus=2 --rps=10 --start=" + std::to_string(kStart) +
            " --scenario=steps.yml --backfill=35m --backfill-file=h.om");
    log = sim.err;
    if (sim.code != 0) return;
    auto imp = Run(kCalibrateVigil + " tsdb import openmetrics " +
                   dir.Sub("h.om") + " " + data);
    log += imp.err;
    std::filesystem::remove(dir.Sub("h.om"));
    ok = imp.code == 0;
  }
};

CalibrateFixture& Data() {
  static CalibrateFixture f;
  return f;
}

std::string Windows() {
  auto w = [](const char* n, int a, int b) {
    return std::string(" --window=") + n + "=" + std::to_string(kStart + a) +
           ".." + std::to_string(kStart + b);
  };
  return w("load70", 600, 900) + w("load90", 1200, 1500) +
         w("load110", 1800, 2100);
}

const rapidjson::Value* RowOf(const rapidjson::Document& d,
                              const std::string& alert) {
  for (const auto& r : d["rows"].GetArray()) {
    if (r["alert"].GetString() == alert) return &r;
  }
  return nullptr;
}

double P95(const rapidjson::Value& row, const char* window) {
  return row["windows"][window]["p95"].GetDouble();
}

// Every stored sample of `metric` with a time in [from, to] (seconds).
std::vector<double> StoredValues(const std::string& dir,
                                 const std::string& metric, int64_t from,
                                 int64_t to) {
  vigil::storage::Options o;
  o.read_only = true;
  auto db = vigil::storage::DB::Open(o, dir);
  REQUIRE(db.ok());
  std::vector<double> out;
  {
    auto q = (*db)->NewQuerier(from * 1000, to * 1000);
    REQUIRE(q.ok());
    auto m = vigil::Matcher::Make(vigil::MatchType::kEqual, "__name__", metric);
    REQUIRE(m.ok());
    auto ss = (*q)->Select({*m});
    REQUIRE(ss.ok());
    while ((*ss)->Next()) {
      auto it = (*ss)->At().Iterator();
      while (it->Next()) {
        if (it->t() >= from * 1000 && it->t() <= to * 1000)
          out.push_back(it->v());
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("calibrate windows, thresholds and quantiles", "[calibrate]") {
  using namespace vigil::calibrate;
  auto w = ParseWindow("load70=2026-11-30T13:35:00Z..1796046000");
  REQUIRE(w.ok());
  CHECK(w->name == "load70");
  CHECK(w->start == 1796045700000);
  CHECK(w->end == 1796046000000);
  for (const char* bad :
       {"load70", "=1..2", "a=1", "a=x..2", "a=1..y", "a=5..5", "a b=1..2"}) {
    auto r = ParseWindow(bad);
    INFO(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message()).find(bad) != std::string::npos);
  }

  auto parsed = vigil::rules::ParseRuleFile(
      "groups:\n- name: g\n  rules:\n"
      "  - alert: Hot\n    expr: max by (i) (temp) > 85\n    for: 5m\n"
      "    labels: {severity: critical}\n"
      "  - alert: LowAccept\n    expr: 0.5 > rate(acc[5m])\n"
      "  - alert: Down\n    expr: up == 0\n",
      "t.yml");
  REQUIRE(parsed.errors.empty());
  std::vector<std::string> skipped;
  auto ts = FindThresholds(parsed.groups, &skipped);
  REQUIRE(ts.size() == 2);
  CHECK(ts[0].alert == "Hot");
  CHECK(ts[0].op == ">");
  CHECK(ts[0].value == 85);
  CHECK(ts[0].metric == "max by (i) (temp)");
  CHECK(ts[0].critical);
  CHECK(ts[0].cls == MetricClass::kHardware);
  CHECK(ts[1].op == "<");  // `0.5 > x` is `x < 0.5`
  CHECK(ts[1].value == 0.5);
  CHECK_FALSE(ts[1].critical);
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].rfind("Down:", 0) == 0);

  std::vector<double> v = {4, 1, 3, 2};
  CHECK(Quantile(0.5, &v) == Approx(2.5));
  CHECK(Quantile(0.95, &v) == Approx(3.85));
  CHECK(RoundThreshold(0.66237) == Approx(0.662));
  CHECK(RoundThreshold(83.5) == Approx(83.5));
}

TEST_CASE("calibrate over simulated 70/90/110 % steps", "[calibrate]") {
  CalibrateFixture& f = Data();
  INFO(f.log);
  REQUIRE(f.ok);
  auto r = Run(kCalibrateVigil + " calibrate --storage.tsdb.path=" + f.data +
               " --rules=" + kRules + Windows() + " -o json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  rapidjson::Document d;
  d.Parse(r.out.c_str());
  REQUIRE(d.IsObject());

  SECTION("percentiles are those of the stored samples") {
    // GPUTempHigh compares the raw DCGM_FI_DEV_GPU_TEMP: at a 15 s step on
    // 15 s samples the range query reads every stored sample once.
    const auto* row = RowOf(d, "GPUTempHigh");
    REQUIRE(row);
    for (auto [name, a, b] :
         {std::tuple{"load70", 600, 900}, std::tuple{"load110", 1800, 2100}}) {
      auto v =
          StoredValues(f.data, "DCGM_FI_DEV_GPU_TEMP", kStart + a, kStart + b);
      REQUIRE(v.size() == 2 * 21);  // 2 GPUs x 21 steps
      const auto& w = (*row)["windows"][name];
      CHECK(w["samples"].GetUint64() == v.size());
      auto copy = v;
      CHECK(w["p50"].GetDouble() ==
            Approx(vigil::calibrate::Quantile(0.5, &copy)));
      CHECK(w["p95"].GetDouble() ==
            Approx(vigil::calibrate::Quantile(0.95, &copy)));
      CHECK(w["p99"].GetDouble() ==
            Approx(vigil::calibrate::Quantile(0.99, &copy)));
      CHECK(w["max"].GetDouble() == Approx(copy.back()));
    }
  }

  SECTION("load shows in the capacity and latency metrics") {
    for (const char* a : {"KVCacheHigh", "TTFTBreach", "TPOTBreach"}) {
      const auto* row = RowOf(d, a);
      REQUIRE(row);
      INFO(a);
      // llm:* recording rules are not stored: their expressions were used.
      std::string queried = (*row)["queried"].GetString();
      CHECK(queried != (*row)["metric"].GetString());
      CHECK(queried.find(":5m") == std::string::npos);
      CHECK(queried.find(":1m") == std::string::npos);
      CHECK(P95(*row, "load70") < P95(*row, "load90"));
      CHECK(P95(*row, "load90") < P95(*row, "load110"));
    }
    // 110 % of design load is past the KV 80 % capacity point...
    CHECK(P95(*RowOf(d, "KVCacheHigh"), "load70") < 0.8);
    CHECK(P95(*RowOf(d, "KVCacheHigh"), "load110") > 0.8);
    // ... and the concurrency there is the simulator's: KV 80 % of 262144
    // tokens at ~1025 tokens per request is ~205 requests.
    REQUIRE(d["designConcurrency"].IsNumber());
    CHECK(d["designConcurrency"].GetDouble() == Approx(205).margin(20));
  }

  SECTION("proposals follow the rule") {
    int proposed = 0;
    for (const auto& row : d["rows"].GetArray()) {
      INFO(row["alert"].GetString());
      if (!row["proposed"].IsNumber()) continue;
      ++proposed;
      double line = row["line"].GetDouble();
      double base = P95(row, "load70");
      double want = std::string(row["severity"].GetString()) == "critical"
                        ? line
                        : base + 0.75 * (line - base);
      CHECK(row["proposed"].GetDouble() ==
            Approx(vigil::calibrate::RoundThreshold(want)));
      std::string cls = row["class"].GetString();
      std::string fr = row["proposedFor"].GetString();
      if (cls == "latency") CHECK(fr == "10m");
      if (cls == "hardware") CHECK(fr == "0s");
      if (cls == "capacity")
        CHECK(fr == (std::string(row["severity"].GetString()) == "critical"
                         ? "5m"
                         : "10m"));
    }
    CHECK(proposed >= 6);
    // Latency: critical stays at the SLO line (2 s).
    CHECK((*RowOf(d, "TTFTBreach"))["proposed"].GetDouble() == 2);
    // Capacity: the KV critical line is where TTFT p99 broke 2 s, which
    // the 110 % step reached.
    const auto& kv = *RowOf(d, "KVCacheCritical");
    REQUIRE(kv["atBreach"].IsNumber());
    CHECK(kv["line"].GetDouble() == kv["atBreach"].GetDouble());
    CHECK(kv["line"].GetDouble() > P95(kv, "load70"));
  }

  SECTION("a server gives the same answer as the directory") {
    vigil::testutil::TempDir srv;
    std::filesystem::copy(f.data, srv.Sub("data"),
                          std::filesystem::copy_options::recursive);
    std::ofstream(srv.Sub("prometheus.yml")) << "global: {}\n";
    int port = vigil::testutil::FreePort();
    vigil::testutil::Process p(
        {kCalibrateVigil, "--config.file=" + srv.Sub("prometheus.yml"),
         "--storage.tsdb.path=" + srv.Sub("data"),
         "--storage.tsdb.retention.time=100y",
         "--web.listen-address=127.0.0.1:" + std::to_string(port)},
        srv.Sub("vigil.log"));
    std::string url = "http://127.0.0.1:" + std::to_string(port);
    REQUIRE(vigil::testutil::WaitHttp(url + "/-/ready"));
    auto h = Run(kCalibrateVigil + " calibrate --server=" + url +
                 " --rules=" + kRules + Windows() + " -o json");
    INFO(h.err);
    REQUIRE(h.code == 0);
    rapidjson::Document hd;
    hd.Parse(h.out.c_str());
    REQUIRE(hd.IsObject());
    REQUIRE(hd["rows"].Size() == d["rows"].Size());
    for (rapidjson::SizeType i = 0; i < d["rows"].Size(); ++i) {
      const auto& a = d["rows"][i];
      const auto& b = hd["rows"][i];
      INFO(a["alert"].GetString());
      for (const char* w : {"load70", "load90", "load110"}) {
        if (!a["windows"][w]["p95"].IsNumber()) continue;
        CHECK(b["windows"][w]["p95"].GetDouble() ==
              Approx(a["windows"][w]["p95"].GetDouble()));
        CHECK(b["windows"][w]["samples"].GetUint64() ==
              a["windows"][w]["samples"].GetUint64());
      }
      CHECK(b["proposed"].IsNumber() == a["proposed"].IsNumber());
      if (a["proposed"].IsNumber())
        CHECK(b["proposed"].GetDouble() == Approx(a["proposed"].GetDouble()));
    }
    p.Signal(SIGTERM);
    p.Wait(20000);
  }

  SECTION("--write: a rule file promtool accepts, and a ledger entry") {
    vigil::testutil::TempDir out;
    for (int i = 0; i < 2; ++i) {
      auto w = Run("USER=tester " + kCalibrateVigil +
                   " calibrate --storage.tsdb.path=" + f.data +
                   " --rules=" + kRules + Windows() + " --write=" + out.path());
      INFO(w.err);
      REQUIRE(w.code == 0);
    }
    std::string rules = vigil::testutil::ReadFile(out.Sub("alerts.yml"));
    CHECK(rules.find("llm:ttft_p99:5m > 2") != std::string::npos);
    CHECK(rules.find("llm:kv_usage:1m > 0.85") == std::string::npos);
    auto ours = Run(kCalibrateVigil + " check rules " + out.Sub("alerts.yml"));
    INFO(ours.out + ours.err);
    CHECK(ours.code == 0);
    if (vigil::testutil::HaveCommand("promtool")) {
      auto pt = Run("promtool check rules " + out.Sub("alerts.yml"));
      INFO(pt.out + pt.err);
      CHECK(pt.code == 0);
    }
    // The proposed file has the proposed numbers.
    auto again = vigil::rules::LoadRuleFile(out.Sub("alerts.yml"));
    REQUIRE(again.ok());
    std::vector<std::string> skipped;
    auto ts = vigil::calibrate::FindThresholds(*again, &skipped);
    // Rows come in the order of the thresholds (rules with two
    // comparisons have two rows).
    REQUIRE(ts.size() == d["rows"].Size());
    for (size_t i = 0; i < ts.size(); ++i) {
      const auto& t = ts[i];
      const auto* row = &d["rows"][rapidjson::SizeType(i)];
      REQUIRE(std::string((*row)["alert"].GetString()) == t.alert);
      if ((*row)["proposed"].IsNumber())
        CHECK(t.value == Approx((*row)["proposed"].GetDouble()));
      else
        CHECK(t.value == (*row)["current"].GetDouble());
    }
    std::string ledger =
        vigil::testutil::ReadFile(out.Sub("thresholds-ledger.yml"));
    CHECK(ledger.find("who: \"tester\"") != std::string::npos);
    CHECK(ledger.find("alert: \"KVCacheCritical\"") != std::string::npos);
    CHECK(ledger.find("old: \"> 0.97\"") != std::string::npos);
    size_t entries = 0;
    for (size_t p = 0; (p = ledger.find("\n- when:", p)) != std::string::npos;
         ++p)
      ++entries;
    CHECK(entries + (ledger.rfind("- when:", 0) == 0) == 2);
  }
}

TEST_CASE("calibrate: malformed flags and windows are clear errors",
          "[calibrate]") {
  vigil::testutil::TempDir dir;
  const std::string base =
      kCalibrateVigil + " calibrate --rules=" + kRules + " ";
  struct Case {
    std::string args;
    std::string want;
  };
  std::vector<Case> cases = {
      {"--window=a=1..2", "exactly one of --storage.tsdb.path and --server"},
      {"--storage.tsdb.path=" + dir.path() +
           " --server=http://x --window=a=1..2",
       "exactly one of"},
      {"--server=http://127.0.0.1:1", "no --window given"},
      {"--server=http://127.0.0.1:1 --window=a=2..1", "end is not after start"},
      {"--server=http://127.0.0.1:1 --window=a1..2", "no '='"},
      {"--server=http://127.0.0.1:1 --window=a=1-2", "no '..'"},
      {"--server=ftp://x --window=a=1..2", "want http:// or https://"},
      {"--server=http://127.0.0.1:1 --window=a=1..2 --step=x", "--step \"x\""},
      {"--server=http://127.0.0.1:1 --window=a=1..2 --slo=TTFT",
       "--slo \"TTFT\""},
      {"--server=http://127.0.0.1:1 --window=a=1..2 --warning-fraction=0.9",
       "outside 0.7..0.8"},
      {"--server=http://127.0.0.1:1 --window=a=1..2 --baseline=b",
       "--baseline \"b\" is not the name of a --window"},
      {"--server=http://127.0.0.1:1 --window=a=1..2 --window=a=3..4",
       "given twice"},
      {"--server=http://127.0.0.1:1 --window=a=1..2 -o yaml", "-o \"yaml\""},
      {"--bogus", "unknown flag: --bogus"},
  };
  for (const auto& c : cases) {
    auto r = Run(base + c.args);
    INFO(c.args + "\n" + r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.want) != std::string::npos);
  }
  // A missing rule file and an unreachable server fail with exit 1.
  auto nofile =
      Run(kCalibrateVigil + " calibrate --rules=" + dir.Sub("none.yml") +
          " --server=http://127.0.0.1:1 --window=a=1..2");
  CHECK(nofile.code == 1);
  CHECK(nofile.err.find("none.yml") != std::string::npos);
  auto down =
      Run(base + "--server=http://127.0.0.1:" +
          std::to_string(vigil::testutil::FreePort()) + " --window=a=1..2");
  INFO(down.out + down.err);
  CHECK(down.code == 1);
  CHECK(down.out.find("error: query http://127.0.0.1:") != std::string::npos);
}
