// The long-running server (`vigil` with no command): flags, start-up, rules
// against the live storage, all-or-nothing reload on SIGHUP, clean stop.
#include "server/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "server/flags.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::server::ParseServerFlags;
using vigil::testutil::Process;
using vigil::testutil::ReadFile;
using vigil::testutil::TempDir;
using vigil::testutil::WaitForLog;
using vigil::testutil::WriteFile;

using vigil::testutil::FreePort;

// `curl` against the server: the response body, and the HTTP code on the
// last line.
vigil::testutil::RunResult CurlResult(const std::string& args) {
  return vigil::testutil::Run("curl -s -w '\\n%{http_code}' " + args);
}

TEST_CASE("server flags: Prometheus's names, defaults and syntax",
          "[server][flags]") {
  auto d = ParseServerFlags({});
  REQUIRE(d.ok());
  CHECK(d->flags.config_file == "prometheus.yml");
  CHECK(d->flags.storage_path == "data/");
  CHECK(d->flags.listen_address == "127.0.0.1:9090");
  CHECK(d->flags.retention_ms == 15LL * 86400 * 1000);
  CHECK(d->flags.query_timeout_ms == 120000);
  CHECK(d->flags.query_max_concurrency == 20);
  CHECK_FALSE(d->flags.enable_lifecycle);

  auto f = ParseServerFlags(
      {"--config.file=/etc/p.yml", "--storage.tsdb.path", "/d",
       "--storage.tsdb.retention.time=30d",
       "--storage.tsdb.retention.size=512MB", "--web.enable-lifecycle",
       "--no-web.enable-admin-api", "--query.timeout=30s",
       "--query.max-samples=1000", "--log.format=json",
       "--enable-feature=promql-delayed-name-removal,foo", "--enable-feature",
       "bar", "--scrape.tolerate-invalid-lines=true"});
  REQUIRE(f.ok());
  CHECK(f->flags.config_file == "/etc/p.yml");
  CHECK(f->flags.storage_path == "/d");
  CHECK(f->flags.retention_ms == 30LL * 86400 * 1000);
  CHECK(f->flags.retention_bytes == 512LL << 20);
  CHECK(f->flags.enable_lifecycle);
  CHECK_FALSE(f->flags.enable_admin_api);
  CHECK(f->flags.query_timeout_ms == 30000);
  CHECK(f->flags.query_max_samples == 1000);
  CHECK(f->flags.log_format == "json");
  CHECK(f->flags.features ==
        std::vector<std::string>{"promql-delayed-name-removal", "foo", "bar"});
  CHECK(f->flags.scrape_tolerate_invalid_lines);
  CHECK(ParseServerFlags({"--help"})->help);
}

TEST_CASE("server flags: bad input is an error naming it", "[server][flags]") {
  auto msg = [](std::vector<std::string> a) {
    auto r = ParseServerFlags(a);
    return r.ok() ? std::string("ok") : std::string(r.status().message());
  };
  CHECK(msg({"--foo"}) == "unknown long flag '--foo'");
  CHECK(msg({"--no-config.file"}) == "unknown long flag '--no-config.file'");
  CHECK(msg({"--query.timeout=abc"}) == "not a valid duration string: \"abc\"");
  CHECK(msg({"--query.timeout"}) ==
        "expected argument for flag '--query.timeout'");
  CHECK(msg({"--web.enable-lifecycle=maybe"}) == "unexpected maybe");
  CHECK(msg({"positional"}) == "unexpected positional");
  CHECK(msg({"--storage.tsdb.retention.size=12XB"}) ==
        "units: unknown unit XB in 12XB");
  CHECK(msg({"--log.level=loud"}) ==
        "enum value must be one of debug,info,warn,error, got 'loud'");
  CHECK(msg({"--query.max-concurrency=-1"}).find("invalid syntax") !=
        std::string::npos);
}

TEST_CASE("vigil with no command: rules on live storage, HTTP API, reload",
          "[server]") {
  TempDir dir;
  const std::string cfg = dir.Sub("prometheus.yml");
  const std::string rules = dir.Sub("rules.yml");
  const std::string data = dir.Sub("data");
  const std::string log = dir.Sub("vigil.log");
  const int port = FreePort();
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  WriteFile(cfg,
            "global:\n  evaluation_interval: 1s\n  external_labels: {site: t}\n"
            "rule_files: [rules.yml]\n");
  WriteFile(rules,
            "groups:\n- name: g\n  rules:\n  - record: vigil_test:one\n"
            "    expr: vector(1)\n  - alert: Always\n    expr: vector(1)\n"
            "    labels: {severity: page}\n");
  Process p(
      {VIGIL_BINARY, "--config.file=" + cfg, "--storage.tsdb.path=" + data,
       "--web.listen-address=127.0.0.1:" + std::to_string(port),
       "--web.enable-lifecycle", "--web.enable-admin-api"},
      log);
  REQUIRE(p.started());
  REQUIRE(WaitForLog(log, "Server is ready", 10000));
  CHECK(CurlResult(url + "/-/healthy").out ==
        "Vigil Server is Healthy.\n\n200");
  CHECK(CurlResult(url + "/-/ready").out == "Vigil Server is Ready.\n\n200");

  // A broken rule file on SIGHUP: logged, the old rules keep running.
  const std::string good_rules = ReadFile(rules);
  WriteFile(rules,
            "groups:\n- name: g\n  rules:\n  - record: 'bad name'\n"
            "    expr: vector(1)\n");
  p.Signal(SIGHUP);
  REQUIRE(WaitForLog(log, "Error reloading config", 5000));
  CHECK(ReadFile(log).find("bad name") != std::string::npos);
  CHECK(p.Wait(0) == -1);  // still running
  // A broken config through POST /-/reload: 500 with the reason, and
  // prometheus_config_last_reload_successful 0.
  WriteFile(rules, good_rules);
  const std::string good_cfg = ReadFile(cfg);
  WriteFile(cfg, "global:\n  evaluation_interval: 1s\nbogus_key: 1\n");
  auto r = CurlResult("-X POST " + url + "/-/reload");
  CHECK(r.out.find("failed to reload config") != std::string::npos);
  CHECK(r.out.find("field bogus_key not found") != std::string::npos);
  CHECK(r.out.substr(r.out.size() - 3) == "500");
  CHECK(CurlResult(url + "/metrics")
            .out.find("prometheus_config_last_reload_successful 0") !=
        std::string::npos);
  WriteFile(cfg, good_cfg);
  CHECK(CurlResult("-X POST " + url + "/-/reload").out == "\n200");
  CHECK(CurlResult(url + "/-/reload").out.substr(0, 18) ==
        "Method Not Allowed");

  // Give the group time for a few evaluations (the first ALERTS come after
  // the restore at the second).
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  auto q = CurlResult(url + "/api/v1/query?query=vigil_test:one");
  INFO(q.out);
  CHECK(q.out.find("\"status\":\"success\"") != std::string::npos);
  CHECK(q.out.find("\"__name__\":\"vigil_test:one\"") != std::string::npos);
  CHECK(q.out.find(",\"1\"]") != std::string::npos);
  auto bad = CurlResult("'" + url + "/api/v1/query?query=sum%28'");
  CHECK(bad.out.find("\"errorType\":\"bad_data\"") != std::string::npos);
  CHECK(bad.out.substr(bad.out.size() - 3) == "400");
  auto rules_json = CurlResult(url + "/api/v1/rules");
  CHECK(rules_json.out.find("\"name\":\"Always\"") != std::string::npos);
  CHECK(rules_json.out.find("\"state\":\"firing\"") != std::string::npos);
  auto metrics = CurlResult(url + "/metrics").out;
  CHECK(metrics.find("prometheus_config_last_reload_successful 1") !=
        std::string::npos);
  CHECK(metrics.find("prometheus_tsdb_head_series ") != std::string::npos);
  CHECK(metrics.find("process_resident_memory_bytes ") != std::string::npos);
  // The head's allocator (empty in sanitizer builds, which use malloc).
  for (const char* name :
       {"vigil_slab_resident_bytes ", "vigil_slab_object_bytes ",
        "vigil_slab_moves_total "}) {
    INFO(name);
    CHECK(metrics.find(name) != std::string::npos);
  }
  CHECK(metrics.find("prometheus_http_requests_total{code=\"400\","
                     "handler=\"/api/v1/*rest\"} 1") != std::string::npos);
  if (vigil::testutil::HaveCommand("promtool")) {
    auto pt = vigil::testutil::Run("promtool query instant " + url +
                                   " 'vigil_test:one'");
    INFO(pt.err);
    CHECK(pt.code == 0);
    CHECK(pt.out.find("vigil_test:one => 1 @[") != std::string::npos);
  } else {
    WARN("promtool not installed: promtool query against vigil skipped");
  }

  // An admin snapshot: a copy of the storage under snapshots/.
  auto snap = CurlResult("-X POST " + url + "/api/v1/admin/tsdb/snapshot");
  INFO(snap.out);
  CHECK(snap.out.find("{\"status\":\"success\",\"data\":{\"name\":\"") == 0);
  size_t q1 = snap.out.find("\"name\":\"") + 8;
  std::string name = snap.out.substr(q1, snap.out.find('"', q1) - q1);
  CHECK(std::filesystem::exists(data + "/snapshots/" + name + "/CURRENT"));
  CHECK(CurlResult("-X POST " + url + "/api/v1/admin/tsdb/delete_series")
            .out.find("no match[] parameter provided") != std::string::npos);

  // POST /-/quit stops the server cleanly.
  CHECK(CurlResult("-X POST " + url + "/-/quit").out.find("Goodbye") !=
        std::string::npos);
  REQUIRE(p.Wait(10000) == 0);
  CHECK(ReadFile(log).find("See you next time!") != std::string::npos);

  auto a = vigil::testutil::Run(std::string(VIGIL_BINARY) +
                                " query instant ALERTS"
                                " --storage.tsdb.path=" +
                                data);
  CHECK(a.out.find("alertname=\"Always\"") != std::string::npos);
  CHECK(a.out.find("alertstate=\"firing\"") != std::string::npos);
}

TEST_CASE("the lifecycle endpoints need --web.enable-lifecycle", "[server]") {
  TempDir dir;
  const std::string cfg = dir.Sub("prometheus.yml");
  const std::string log = dir.Sub("vigil.log");
  const int port = FreePort();
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  WriteFile(cfg, "global: {}\n");
  Process p({VIGIL_BINARY, "--config.file=" + cfg,
             "--storage.tsdb.path=" + dir.Sub("data"),
             "--web.listen-address=127.0.0.1:" + std::to_string(port)},
            log);
  REQUIRE(WaitForLog(log, "Server is ready", 10000));
  auto r = CurlResult("-X POST " + url + "/-/quit");
  CHECK(r.out == "Lifecycle API is not enabled.\n403");
  CHECK(CurlResult("-X POST " + url + "/-/reload").out ==
        "Lifecycle API is not enabled.\n403");
  CHECK(CurlResult("-X POST " + url + "/api/v1/admin/tsdb/snapshot").out ==
        "{\"status\":\"error\",\"errorType\":\"unavailable\",\"error\":"
        "\"admin APIs disabled\"}\n503");
  p.Signal(SIGTERM);
  CHECK(p.Wait(10000) == 0);
}

TEST_CASE("server start-up failures exit 1 with the reason logged",
          "[server]") {
  TempDir dir;
  const std::string log = dir.Sub("vigil.log");
  Process missing({VIGIL_BINARY, "--config.file=" + dir.Sub("nope.yml"),
                   "--storage.tsdb.path=" + dir.Sub("data")},
                  log);
  CHECK(missing.Wait(10000) == 1);
  CHECK(ReadFile(log).find("Error loading config") != std::string::npos);
  CHECK(ReadFile(log).find("nope.yml") != std::string::npos);

  auto bad = vigil::testutil::Run(std::string(VIGIL_BINARY) + " --bogus");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("unknown long flag '--bogus'") != std::string::npos);
}

}  // namespace
