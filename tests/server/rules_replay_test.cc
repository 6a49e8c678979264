// `vigil rules replay`: recording results land in the directory and the
// alert timeline has the pending, firing and resolved times Prometheus's
// state machine gives.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil {
namespace {

using testutil::kVigil;
using testutil::Run;

TEST_CASE("rules replay writes recording rules and prints the alert timeline",
          "[replay]") {
  testutil::TempDir tmp;
  // kv usage: 0.5 for 10 minutes, 0.99 for 10 minutes, 0.5 again (1 m steps).
  std::string om = "# TYPE kv gauge\n";
  for (int m = 0; m <= 30; ++m) {
    double v = (m >= 10 && m < 20) ? 0.99 : 0.5;
    om += "kv{instance=\"a\"} " + std::to_string(v) + " " +
          std::to_string(1767225600 + m * 60) + "\n";
  }
  om += "# EOF\n";
  std::ofstream(tmp.Sub("in.om")) << om;
  std::ofstream(tmp.Sub("rules.yml")) << R"(groups:
  - name: g
    interval: 1m
    rules:
      - record: kv:max
        expr: max by (instance) (kv)
      - alert: KVHigh
        expr: kv:max > 0.95
        for: 3m
        labels:
          severity: critical
        annotations:
          summary: "KV cache {{ $value | humanizePercentage }} on {{ $labels.instance }}"
)";
  REQUIRE(Run(kVigil + " tsdb import openmetrics " + tmp.Sub("in.om") + " " +
              tmp.Sub("d"))
              .code == 0);
  auto r = Run(kVigil + " rules replay --storage.tsdb.path=" + tmp.Sub("d") +
               " --start=2026-01-01T00:00:00Z --end=2026-01-01T00:30:00Z " +
               tmp.Sub("rules.yml"));
  INFO(r.out + r.err);
  REQUIRE(r.code == 0);
  const std::string who =
      R"(KVHigh {alertname="KVHigh", instance="a", severity="critical"})";
  REQUIRE(r.out.find("2026-01-01T00:10:00Z pending   " + who) !=
          std::string::npos);
  REQUIRE(r.out.find("2026-01-01T00:13:00Z firing    " + who) !=
          std::string::npos);
  REQUIRE(r.out.find("summary: KV cache 99% on a") != std::string::npos);
  REQUIRE(r.out.find("2026-01-01T00:20:00Z resolved  " + who) !=
          std::string::npos);
  REQUIRE(r.out.find("KVHigh                                   fired 1 "
                     "time(s), firing for 7m in total") != std::string::npos);
  // The recording rule's results are in the directory, one per evaluation.
  auto d = Run(kVigil + " tsdb dump --match=kv:max " + tmp.Sub("d"));
  REQUIRE(d.code == 0);
  REQUIRE(d.out.find(
              "{__name__=\"kv:max\", instance=\"a\"} 0.99 1767226200000\n") !=
          std::string::npos);
  REQUIRE(std::count(d.out.begin(), d.out.end(), '\n') == 31);
}

TEST_CASE("rules replay rejects bad input clearly", "[replay]") {
  testutil::TempDir tmp;
  REQUIRE(Run(kVigil + " rules replay " + tmp.path()).code == 2);
  auto bad_time =
      Run(kVigil + " rules replay --storage.tsdb.path=" + tmp.Sub("d") +
          " --start=yesterday --end=1 x.yml");
  REQUIRE(bad_time.code == 2);
  REQUIRE(bad_time.err.find("yesterday") != std::string::npos);
  std::ofstream(tmp.Sub("bad.yml")) << "groups:\n  - name: g\n    rules:\n     "
                                       " - record: x\n        expr: sum(\n";
  auto bad_rules =
      Run(kVigil + " rules replay --storage.tsdb.path=" + tmp.Sub("d") +
          " --start=0 --end=60 " + tmp.Sub("bad.yml"));
  REQUIRE(bad_rules.code == 1);
  REQUIRE(bad_rules.err.find("bad.yml") != std::string::npos);
}

}  // namespace
}  // namespace vigil
