// /api/v1/format_query against the real thing: each query of
// tests/promql/testdata/pretty/ posted to a running Prometheus (the Debian
// package, 2.42) and to vigil; the answers must be the same bytes.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::testutil::Run;

std::string FormatQuery(const std::string& base, const std::string& q,
                        const std::string& dir) {
  std::ofstream(dir + "/q.txt") << q;
  return Run("curl -s '" + base +
             "/api/v1/format_query' --data-urlencode query@'" + dir + "/q.txt'")
      .out;
}

TEST_CASE("format_query answers as a live Prometheus does",
          "[server][promql][pretty]") {
  if (!vigil::testutil::HaveCommand("prometheus") ||
      !vigil::testutil::HaveCommand("curl")) {
    WARN("prometheus or curl not installed: test skipped");
    return;
  }
  vigil::testutil::TempDir dir;
  std::ofstream(dir.Sub("prometheus.yml")) << "global: {}\n";
  const std::string prom =
      "127.0.0.1:" + std::to_string(vigil::testutil::FreePort());
  const std::string self =
      "127.0.0.1:" + std::to_string(vigil::testutil::FreePort());
  vigil::testutil::Process p(
      {"prometheus", "--config.file=" + dir.Sub("prometheus.yml"),
       "--storage.tsdb.path=" + dir.Sub("prom"),
       "--web.listen-address=" + prom},
      dir.Sub("prom.log"));
  vigil::testutil::Process v(
      {VIGIL_BINARY, "--config.file=" + dir.Sub("prometheus.yml"),
       "--storage.tsdb.path=" + dir.Sub("data"),
       "--web.listen-address=" + self},
      dir.Sub("vigil.log"));
  REQUIRE(vigil::testutil::WaitHttp("http://" + prom + "/-/ready"));
  REQUIRE(vigil::testutil::WaitHttp("http://" + self + "/-/ready"));

  std::ifstream cases(std::string(VIGIL_SOURCE_DIR) +
                      "/tests/promql/testdata/pretty/"
                      "format_query-prometheus-2.42.txt");
  std::vector<std::string> queries = {
      // Beyond the recorded file: errors read the same too.
      "sum(",
      "foo{a=~\"b\"} offset 5m @ 1000",
  };
  std::string line;
  while (std::getline(cases, line)) {
    if (line.rfind("in: ", 0) == 0) queries.push_back(line.substr(4));
  }
  REQUIRE(queries.size() > 10);
  for (const std::string& q : queries) {
    INFO(q);
    CHECK(FormatQuery("http://" + self, q, dir.path()) ==
          FormatQuery("http://" + prom, q, dir.path()));
  }
}

}  // namespace
