// /api/v1/format_query against the real thing: each query of
// tests/promql/testdata/pretty/ posted to a running Prometheus (the Debian
// package, 2.42) and to vigil; the answers must be the same bytes. Then
// every expression of the upstream PromQL suite (written for Prometheus 3),
// where the answers differ only as the two Prometheus versions do.
#include <rapidjson/document.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "tests/server/alerting_peers_testutil.h"
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

// The expressions of the `eval` lines of the upstream suite's files.
std::vector<std::string> ConformanceExprs(const std::string& dir) {
  std::set<std::string> out;
  std::regex eval(
      R"(^\s*eval\w* (?:instant at \S+|range from \S+ to \S+ step \S+) (.+)$)");
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    if (f.path().extension() != ".test") continue;
    std::ifstream in(f.path());
    std::smatch m;
    for (std::string l; std::getline(in, l);) {
      if (std::regex_match(l, m, eval)) out.insert(m[1].str());
    }
  }
  return {out.begin(), out.end()};
}

// Every number written as its shortest round-trip digits: Prometheus 3
// prints number literals as strconv.FormatFloat(v, 'f', -1, 64)
// ("12340000", "0.000001"), 2.42 as fmt.Sprint(v) ("1.234e+07", "1e-06").
std::string SameNumbers(const std::string& s) {
  static const std::regex num(
      R"((^|[^\w.])(\d+(?:\.\d+)?(?:e[+-]?\d+)?)(?![\w.]))");
  std::string out;
  auto begin = std::sregex_iterator(s.begin(), s.end(), num);
  size_t at = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    const size_t pos = size_t(m.position(2));
    out.append(s, at, pos - at);
    out += fmt::format("{}", std::strtod(m[2].str().c_str(), nullptr));
    at = pos + size_t(m.length(2));
  }
  out.append(s, at, std::string::npos);
  return out;
}

struct FormatAnswer {
  bool ok = false;
  std::string text;  // the formatted query, or the error
};

FormatAnswer AskFormat(vigil::net::HttpClient* c, const std::string& base,
                       const std::string& q) {
  std::string body = "query=";
  for (unsigned char ch : q) {
    if (std::isalnum(ch) || ch == '_' || ch == '.' || ch == '-') {
      body += char(ch);
    } else {
      body += fmt::format("%{:02X}", ch);
    }
  }
  auto r = vigil::testing::Http(c, "POST", base + "/api/v1/format_query", body,
                                "application/x-www-form-urlencoded");
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  FormatAnswer a;
  if (!d.IsObject() || !d.HasMember("status")) {
    a.text = "no JSON: " + r.error + " " + r.body;
    return a;
  }
  a.ok = std::string(d["status"].GetString()) == "success";
  a.text = a.ok ? d["data"].GetString() : d["error"].GetString();
  return a;
}

TEST_CASE(
    "format_query agrees with a live Prometheus 2.42 on every upstream "
    "expression both accept, but for Prometheus 3's number printing",
    "[server][promql][pretty][shared]") {
  const std::string dir = std::string(VIGIL_SHARED_DIR) + "/conformance/promql";
  if (!vigil::testutil::HaveCommand("prometheus") ||
      !std::filesystem::exists(dir)) {
    WARN("prometheus or " + dir + " missing: test skipped");
    return;
  }
  vigil::testutil::TempDir tmp;
  std::ofstream(tmp.Sub("prometheus.yml")) << "global: {}\n";
  const std::string prom =
      "http://127.0.0.1:" + std::to_string(vigil::testutil::FreePort());
  const std::string self =
      "http://127.0.0.1:" + std::to_string(vigil::testutil::FreePort());
  vigil::testutil::Process p(
      {"prometheus", "--config.file=" + tmp.Sub("prometheus.yml"),
       "--storage.tsdb.path=" + tmp.Sub("prom"),
       "--web.listen-address=" + prom.substr(7)},
      tmp.Sub("prom.log"));
  vigil::testutil::Process v(
      {VIGIL_BINARY, "--config.file=" + tmp.Sub("prometheus.yml"),
       "--storage.tsdb.path=" + tmp.Sub("data"),
       "--web.listen-address=" + self.substr(7)},
      tmp.Sub("vigil.log"));
  REQUIRE(vigil::testutil::WaitHttp(prom + "/-/ready"));
  REQUIRE(vigil::testutil::WaitHttp(self + "/-/ready"));

  const auto exprs = ConformanceExprs(dir);
  REQUIRE(exprs.size() > 1000);
  vigil::net::HttpClient client;
  int same = 0, numbers = 0, newer = 0, both_refuse = 0;
  for (const std::string& q : exprs) {
    INFO(q);
    const FormatAnswer pa = AskFormat(&client, prom, q);
    const FormatAnswer va = AskFormat(&client, self, q);
    REQUIRE(pa.text.rfind("no JSON", 0) != 0);
    REQUIRE(va.text.rfind("no JSON", 0) != 0);
    // What 2.42 accepts, Vigil accepts.
    if (pa.ok) CHECK(va.ok);
    if (pa.ok && va.ok) {
      if (pa.text == va.text) {
        ++same;
      } else {
        ++numbers;
        CHECK(SameNumbers(pa.text) == SameNumbers(va.text));
      }
    } else if (va.ok) {
      ++newer;  // syntax 2.42 predates (e.g. limitk, </, duration arithmetic)
    } else {
      ++both_refuse;
    }
  }
  std::cout << "[format_query] " << exprs.size()
            << " upstream expressions against prometheus 2.42: " << same
            << " the same bytes, " << numbers
            << " differing only in number printing, " << newer
            << " refused by 2.42 only, " << both_refuse << " refused by both\n";
  CHECK(same > 1000);
}

}  // namespace
