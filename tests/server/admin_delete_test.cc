// The admin API's delete_series and clean_tombstones against the real
// `vigil` binary: deleted samples vanish from every query at once and
// after a restart, a clean removes them from disk, and malformed requests
// get Prometheus's answers.
#include <signal.h>
#include <time.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "fmt/format.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::testutil::FreePort;
using vigil::testutil::Process;
using vigil::testutil::ReadFile;
using vigil::testutil::Run;
using vigil::testutil::TempDir;
using vigil::testutil::WriteFile;

// The body, then the HTTP code on the last line.
std::string Curl(const std::string& args) {
  return Run("curl -s -g -w '\\n%{http_code}' " + args).out;
}

std::string Rfc3339Seconds(int64_t unix_s) {
  time_t t = unix_s;
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// True if any file under `dir` contains `needle`.
bool OnDisk(const std::string& dir, const std::string& needle) {
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() &&
        ReadFile(e.path().string()).find(needle) != std::string::npos) {
      return true;
    }
  }
  return false;
}

struct AdminServer {
  AdminServer(const TempDir& dir, int port, bool admin)
      : url("http://127.0.0.1:" + std::to_string(port)),
        p(admin ? std::vector<std::string>{VIGIL_BINARY,
                                           "--config.file=" +
                                               dir.Sub("prometheus.yml"),
                                           "--storage.tsdb.path=" +
                                               dir.Sub("data"),
                                           "--web.listen-address=127.0.0.1:" +
                                               std::to_string(port),
                                           "--web.enable-admin-api"}
                : std::vector<std::string>{VIGIL_BINARY,
                                           "--config.file=" +
                                               dir.Sub("prometheus.yml"),
                                           "--storage.tsdb.path=" +
                                               dir.Sub("data"),
                                           "--web.listen-address=127.0.0.1:" +
                                               std::to_string(port)},
          dir.Sub("vigil.log")) {
    REQUIRE(p.started());
    REQUIRE(vigil::testutil::WaitHttp(url + "/-/ready"));
  }
  void Stop() {
    p.Signal(SIGTERM);
    REQUIRE(p.Wait(20000) == 0);
  }
  std::string url;
  Process p;
};

constexpr char kNoMatch[] =
    "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"no match[] "
    "parameter provided\"}\n400";

// 61 samples a minute apart, the last at `now`, of three series; bar's
// label value is unique so the test can look for it on disk.
void Import(const TempDir& dir, int64_t now) {
  std::string om = "# TYPE foo gauge\n";
  for (const char* a : {"1", "2"}) {
    for (int i = 0; i <= 60; ++i) {
      om += fmt::format("foo{{a=\"{}\"}} {} {}\n", a, i, now - 3600 + 60 * i);
    }
  }
  om += "# TYPE bar gauge\n";
  for (int i = 0; i <= 60; ++i) {
    om +=
        fmt::format("bar{{x=\"deleteme_zq\"}} {} {}\n", i, now - 3600 + 60 * i);
  }
  om += "# EOF\n";
  WriteFile(dir.Sub("in.om"), om);
  auto r = Run(std::string(VIGIL_BINARY) + " tsdb import openmetrics " +
               dir.Sub("in.om") + " " + dir.Sub("data"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  WriteFile(dir.Sub("prometheus.yml"), "global:\n  scrape_interval: 15s\n");
}

// What every query shows once foo{a="1"} lost 20 minutes (21 samples) and
// bar everything.
void CheckDeleted(const std::string& url, int64_t now) {
  const std::string at = "&time=" + std::to_string(now);
  auto count = [&](const std::string& sel) {
    return Curl("'" + url + "/api/v1/query?query=count_over_time(" + sel +
                "[2h])" + at + "'");
  };
  CHECK(count("foo{a=\"1\"}").find(",\"40\"]") != std::string::npos);
  CHECK(count("foo{a=\"2\"}").find(",\"61\"]") != std::string::npos);
  CHECK(count("bar").find("\"result\":[]") != std::string::npos);
  // A range query over the deleted stretch: no point of a="1" until the
  // lookback reaches the first sample after it.
  auto range =
      Curl("'" + url + "/api/v1/query_range?query=foo{a=\"1\"}&start=" +
           std::to_string(now - 2040) + "&end=" + std::to_string(now - 1260) +
           "&step=60'");
  INFO(range);
  CHECK(range.find("\"result\":[]") != std::string::npos);
  auto series =
      Curl("'" + url + "/api/v1/series?match[]={__name__=~\"foo|bar\"}'");
  CHECK(series.find("\"bar\"") == std::string::npos);
  CHECK(series.find("\"a\":\"1\"") != std::string::npos);
  CHECK(Curl("'" + url + "/api/v1/label/x/values'") ==
        "{\"status\":\"success\",\"data\":[]}\n200");
  CHECK(Curl("'" + url + "/api/v1/labels'").find("\"x\"") == std::string::npos);
  CHECK(Curl("'" + url + "/federate?match[]=bar'").find("bar") ==
        std::string::npos);
  CHECK(Curl("'" + url + "/api/v1/status/tsdb'").find("\"numSeries\":2,") !=
        std::string::npos);
}

TEST_CASE(
    "delete_series hides data at once and across restarts, "
    "clean_tombstones removes it",
    "[server][admin]") {
  TempDir dir;
  const int64_t now = (time(nullptr) / 60) * 60;
  Import(dir, now);
  const int port = FreePort();
  {
    AdminServer s(dir, port, /*admin=*/true);
    const std::string del = s.url + "/api/v1/admin/tsdb/delete_series";
    CHECK(Curl("'" + s.url +
               "/api/v1/query?query=count_over_time(foo{a=\"1\"}[2h])&time=" +
               std::to_string(now) + "'")
              .find(",\"61\"]") != std::string::npos);

    // Malformed requests, answered as Prometheus answers them.
    CHECK(Curl("-X POST " + del) == kNoMatch);
    CHECK(Curl("-X POST '" + del + "?start=1'") == kNoMatch);
    auto bad = Curl("-X POST '" + del + "?match[]=foo{'");
    INFO(bad);
    CHECK(bad.rfind("{\"status\":\"error\",\"errorType\":\"bad_data\","
                    "\"error\":\"invalid parameter \\\"match[]\\\": ",
                    0) == 0);
    CHECK(bad.substr(bad.size() - 3) == "400");
    CHECK(Curl("-X POST '" + del + "?match[]=foo&start=abc'") ==
          "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":"
          "\"invalid parameter \\\"start\\\": invalid time value for "
          "'start': cannot parse \\\"abc\\\" to a valid timestamp\"}\n400");
    CHECK(Curl("-X POST '" + del + "?match[]=foo&end=xyz'") ==
          "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":"
          "\"invalid parameter \\\"end\\\": invalid time value for "
          "'end': cannot parse \\\"xyz\\\" to a valid timestamp\"}\n400");
    CHECK(Curl("'" + del + "?match[]=foo'").rfind("Method Not Allowed", 0) ==
          0);
    CHECK(Curl("'" + s.url + "/api/v1/admin/tsdb/clean_tombstones'")
              .rfind("Method Not Allowed", 0) == 0);
    // A bad selector after a good one deletes nothing.
    CHECK(Curl("-X POST '" + del + "?match[]=foo&match[]=foo{'")
              .substr(0, 40)
              .find("bad_data") != std::string::npos);
    // An empty range deletes nothing (and succeeds).
    CHECK(Curl("-X POST '" + del + "?match[]=foo&start=10&end=5'") == "\n204");

    // The deletes: a form body with RFC 3339 and float times, and PUT with
    // the default (whole) range.
    CHECK(Curl("-X POST " + del + " --data-urlencode 'match[]=foo{a=\"1\"}' " +
               "--data-urlencode start=" + Rfc3339Seconds(now - 2400) +
               " --data-urlencode end=" + std::to_string(now - 1200) + ".0") ==
          "\n204");
    CHECK(Curl("-X PUT '" + del + "?match[]=bar'") == "\n204");
    CheckDeleted(s.url, now);
    s.Stop();
  }
  // Still on disk (tombstoned), still hidden after a restart.
  CHECK(OnDisk(dir.Sub("data"), "deleteme_zq"));
  {
    AdminServer s(dir, port, /*admin=*/true);
    CheckDeleted(s.url, now);
    CHECK(Curl("-X POST " + s.url + "/api/v1/admin/tsdb/clean_tombstones") ==
          "\n204");
    CheckDeleted(s.url, now);
    CHECK(Curl("-X PUT " + s.url + "/api/v1/admin/tsdb/clean_tombstones") ==
          "\n204");
    s.Stop();
  }
  // Gone from disk: the series record of bar and its chunks.
  CHECK_FALSE(OnDisk(dir.Sub("data"), "deleteme_zq"));
  auto dump = Run(std::string(VIGIL_BINARY) + " tsdb dump " + dir.Sub("data"));
  REQUIRE(dump.code == 0);
  size_t a1 = 0, pos = 0;
  while ((pos = dump.out.find("a=\"1\"", pos)) != std::string::npos) {
    ++a1;
    ++pos;
  }
  CHECK(a1 == 40);
  CHECK(dump.out.find("bar") == std::string::npos);
  AdminServer s(dir, port, /*admin=*/true);
  CheckDeleted(s.url, now);
}

TEST_CASE("delete_series and clean_tombstones need --web.enable-admin-api",
          "[server][admin]") {
  TempDir dir;
  Import(dir, (time(nullptr) / 60) * 60);
  AdminServer s(dir, FreePort(), /*admin=*/false);
  const std::string off =
      "{\"status\":\"error\",\"errorType\":\"unavailable\",\"error\":\"admin "
      "APIs disabled\"}\n503";
  CHECK(Curl("-X POST '" + s.url +
             "/api/v1/admin/tsdb/delete_series?match[]=bar'") == off);
  CHECK(Curl("-X POST " + s.url + "/api/v1/admin/tsdb/clean_tombstones") ==
        off);
  CHECK(Curl("'" + s.url + "/api/v1/query?query=count(bar)'").find(",\"1\"]") !=
        std::string::npos);
}

}  // namespace
