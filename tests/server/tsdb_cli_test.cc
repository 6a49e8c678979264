// `vigil tsdb import/dump/analyze` end to end, with the real promtool as the
// oracle for dump output when it is installed.
#include <catch2/catch.hpp>
#include <fstream>

#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil {
namespace {

using testutil::kVigil;
using testutil::Run;
using testutil::WriteFile;

// A small file with floats, counters, a histogram, NaN, escapes and UTF-8.
const char kOpenMetrics[] = R"(# HELP req_total Requests.
# TYPE req_total counter
req_total{path="/a",code="200"} 1 1767225600
req_total{path="/a",code="200"} 3 1767225615
req_total{path="/a",code="200"} 0 1767225630.5
req_total{path="/b\"q\"",code="500"} 1e+06 1767225600
# TYPE temp gauge
temp{gpu="0",model="NVIDIA H100 80GB HBM3"} 61.25 1767225600
temp{gpu="0",model="NVIDIA H100 80GB HBM3"} NaN 1767225615
temp{gpu="0",model="NVIDIA H100 80GB HBM3"} -Inf 1767225630
temp{gpu="1",model="Ünïcödé"} 0.0001 1767225600
temp{gpu="1",model="Ünïcödé"} 1.7740114612876017e+09 1767225615
# TYPE lat histogram
lat_bucket{le="0.1"} 2 1767225600
lat_bucket{le="+Inf"} 5 1767225600
lat_sum 1.5 1767225600
lat_count 5 1767225600
# EOF
)";

TEST_CASE("tsdb import then dump prints every sample as promtool does",
          "[tsdb]") {
  testutil::TempDir tmp;
  WriteFile(tmp.Sub("in.om"), kOpenMetrics);
  auto imp = Run(kVigil + " tsdb import openmetrics " + tmp.Sub("in.om") + " " +
                 tmp.Sub("v"));
  INFO(imp.err);
  REQUIRE(imp.code == 0);
  auto dump = Run(kVigil + " tsdb dump " + tmp.Sub("v"));
  REQUIRE(dump.code == 0);
  REQUIRE(
      dump.out.find(
          R"({__name__="req_total", code="200", path="/a"} 0 1767225630500)") !=
      std::string::npos);
  REQUIRE(
      dump.out.find(
          R"({__name__="req_total", code="500", path="/b\"q\""} 1e+06 1767225600000)") !=
      std::string::npos);
  REQUIRE(
      dump.out.find(
          R"({__name__="temp", gpu="0", model="NVIDIA H100 80GB HBM3"} NaN 1767225615000)") !=
      std::string::npos);
  REQUIRE(dump.out.find(R"(-Inf 1767225630000)") != std::string::npos);
  REQUIRE(
      dump.out.find(
          R"({__name__="temp", gpu="1", model="Ünïcödé"} 1.7740114612876017e+09 1767225615000)") !=
      std::string::npos);
  REQUIRE(std::count(dump.out.begin(), dump.out.end(), '\n') == 13);

  auto sel = Run(kVigil +
                 " tsdb dump --match='{__name__=~\"temp|lat_sum\",gpu!=\"0\"}' "
                 "--min-time=1767225600000 --max-time=1767225600000 " +
                 tmp.Sub("v"));
  REQUIRE(sel.code == 0);
  REQUIRE(sel.out ==
          "{__name__=\"lat_sum\"} 1.5 1767225600000\n"
          "{__name__=\"temp\", gpu=\"1\", model=\"Ünïcödé\"} 0.0001 "
          "1767225600000\n");

  if (testutil::HaveCommand("promtool")) {
    auto p = Run("promtool tsdb create-blocks-from openmetrics " +
                 tmp.Sub("in.om") + " " + tmp.Sub("p"));
    INFO(p.err);
    REQUIRE(p.code == 0);
    std::filesystem::create_directories(tmp.Sub("p") +
                                        "/wal");  // promtool 2.42 wants it
    auto a = Run("promtool tsdb dump " + tmp.Sub("p") + " | sort");
    auto b = Run(kVigil + " tsdb dump " + tmp.Sub("v") + " | sort");
    REQUIRE(a.code == 0);
    REQUIRE(b.out == a.out);
  }
}

TEST_CASE("tsdb import reports malformed input with file and line", "[tsdb]") {
  testutil::TempDir tmp;
  SECTION("missing timestamp") {
    WriteFile(tmp.Sub("in.om"), "a 1 10\nb 2\n# EOF\n");
    auto r = Run(kVigil + " tsdb import openmetrics " + tmp.Sub("in.om") + " " +
                 tmp.Sub("v"));
    REQUIRE(r.code == 1);
    REQUIRE(
        r.err.find("in.om:2: expected timestamp for series {__name__=\"b\"}") !=
        std::string::npos);
    // What was accepted before the error is kept.
    auto d = Run(kVigil + " tsdb dump " + tmp.Sub("v"));
    REQUIRE(d.out == "{__name__=\"a\"} 1 10000\n");
  }
  SECTION("syntax error") {
    WriteFile(tmp.Sub("in.om"), "a{x=\"1} 1 10\n# EOF\n");
    auto r = Run(kVigil + " tsdb import openmetrics " + tmp.Sub("in.om") + " " +
                 tmp.Sub("v"));
    REQUIRE(r.code == 1);
    REQUIRE(r.err.find("parse error: 1:") != std::string::npos);
  }
  SECTION("out of order") {
    WriteFile(tmp.Sub("in.om"), "a 1 20\na 2 10\n# EOF\n");
    auto r = Run(kVigil + " tsdb import openmetrics " + tmp.Sub("in.om") + " " +
                 tmp.Sub("v"));
    REQUIRE(r.code == 1);
    REQUIRE(r.err.find("in.om:2: add sample: out of order sample") !=
            std::string::npos);
  }
  SECTION("missing file") {
    auto r = Run(kVigil + " tsdb import openmetrics " + tmp.Sub("nope.om") +
                 " " + tmp.Sub("v"));
    REQUIRE(r.code == 1);
    REQUIRE(r.err.find("nope.om") != std::string::npos);
  }
  SECTION("bad flags") {
    REQUIRE(Run(kVigil + " tsdb dump").code == 2);
    REQUIRE(Run(kVigil + " tsdb dump --min-time=abc " + tmp.path()).code == 2);
    auto r = Run(kVigil + " tsdb dump --match='{a=~\"(\"}' " + tmp.path());
    REQUIRE(r.code == 2);
    REQUIRE(r.err.find("--match") != std::string::npos);
  }
  SECTION("not a data directory") {
    auto r = Run(kVigil + " tsdb dump " + tmp.path());
    REQUIRE(r.code == 1);
    REQUIRE(r.err.find("not a Vigil data directory") != std::string::npos);
  }
}

TEST_CASE("tsdb analyze summarises series, samples and cardinality", "[tsdb]") {
  testutil::TempDir tmp;
  WriteFile(tmp.Sub("in.om"), kOpenMetrics);
  REQUIRE(Run(kVigil + " tsdb import openmetrics " + tmp.Sub("in.om") + " " +
              tmp.Sub("v"))
              .code == 0);
  auto r = Run(kVigil + " tsdb analyze " + tmp.Sub("v"));
  INFO(r.out + r.err);
  REQUIRE(r.code == 0);
  REQUIRE(r.out.find("Series: 8\n") != std::string::npos);
  REQUIRE(r.out.find("Samples: 13\n") != std::string::npos);
  REQUIRE(r.out.find("Bytes per sample: ") != std::string::npos);
  REQUIRE(r.out.find("Highest cardinality metric names (series):\n2 "
                     "lat_bucket\n2 req_total\n2 temp\n") != std::string::npos);
}

}  // namespace
}  // namespace vigil
