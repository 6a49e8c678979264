// prometheus.yml's remote_write (server/config/remote_write.cc): defaults,
// every key, promtool's error texts, and `vigil check config` beside the
// real promtool 2.42 on the same files.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "server/config/config.h"
#include "server/remote_write_component.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::config::ParseConfig;
using vigil::config::RemoteWriteConfig;

std::string RemoteWriteErr(const std::string& yaml) {
  auto c = ParseConfig(yaml, "p.yml");
  return c.ok() ? "ok" : std::string(c.status().message());
}

RemoteWriteConfig OneRemoteWrite(const std::string& yaml) {
  auto c = ParseConfig(yaml, "p.yml");
  INFO((c.ok() ? std::string("ok") : std::string(c.status().message())));
  REQUIRE(c.ok());
  REQUIRE(c->remote_write.size() == 1);
  return c->remote_write[0];
}

const std::string kRW = "remote_write:\n  - url: http://a:9/api/v1/write\n";

}  // namespace

TEST_CASE("remote_write defaults are Prometheus's", "[remote][sender]") {
  const RemoteWriteConfig rw = OneRemoteWrite(kRW);
  CHECK(rw.url == "http://a:9/api/v1/write");
  CHECK(rw.name.empty());
  CHECK(rw.remote_timeout_ms == 30000);
  CHECK(rw.protobuf_message == "prometheus.WriteRequest");
  CHECK(rw.http.follow_redirects);
  CHECK_FALSE(rw.http.enable_http2);
  CHECK(rw.queue_config.capacity == 10000);
  CHECK(rw.queue_config.max_shards == 50);
  CHECK(rw.queue_config.min_shards == 1);
  CHECK(rw.queue_config.max_samples_per_send == 2000);
  CHECK(rw.queue_config.batch_send_deadline_ms == 5000);
  CHECK(rw.queue_config.min_backoff_ms == 30);
  CHECK(rw.queue_config.max_backoff_ms == 5000);
  CHECK_FALSE(rw.queue_config.retry_on_http_429);
  CHECK(rw.queue_config.sample_age_limit_ms == 0);
  CHECK(rw.metadata_config.send);
  CHECK(rw.metadata_config.send_interval_ms == 60000);
  CHECK(rw.metadata_config.max_samples_per_send == 2000);
}

TEST_CASE("remote_write decodes every key", "[remote][sender]") {
  const RemoteWriteConfig rw = OneRemoteWrite(
      kRW +
      "    name: mimir\n"
      "    remote_timeout: 10s\n"
      "    headers: {X-Scope-OrgID: t1, X-B: b}\n"
      "    write_relabel_configs:\n"
      "      - {source_labels: [__name__], regex: 'go_.*', action: drop}\n"
      "    basic_auth: {username: u, password: p}\n"
      "    tls_config: {insecure_skip_verify: true, server_name: s}\n"
      "    proxy_url: http://proxy:3128/\n"
      "    follow_redirects: false\n"
      "    send_exemplars: true\n"
      "    send_native_histograms: true\n"
      "    protobuf_message: io.prometheus.write.v2.Request\n"
      "    queue_config:\n"
      "      capacity: 100\n      max_shards: 4\n      min_shards: 2\n"
      "      max_samples_per_send: 10\n      batch_send_deadline: 1s\n"
      "      min_backoff: 10ms\n      max_backoff: 1s\n"
      "      retry_on_http_429: true\n      sample_age_limit: 5m\n"
      "    metadata_config: {send: false, send_interval: 30s, "
      "max_samples_per_send: 7}\n");
  CHECK(rw.name == "mimir");
  CHECK(rw.remote_timeout_ms == 10000);
  CHECK(rw.headers.size() == 2);
  CHECK(rw.headers.at("X-Scope-OrgID") == "t1");
  REQUIRE(rw.write_relabel_configs.size() == 1);
  CHECK(rw.write_relabel_configs[0].action == vigil::RelabelAction::kDrop);
  REQUIRE(rw.http.basic_auth.has_value());
  CHECK(rw.http.basic_auth->password == "p");
  CHECK(rw.http.tls_config.insecure_skip_verify);
  CHECK(rw.http.tls_config.server_name == "s");
  CHECK(rw.http.proxy_url == "http://proxy:3128/");
  CHECK_FALSE(rw.http.follow_redirects);
  CHECK(rw.send_exemplars);
  CHECK(rw.send_native_histograms);
  CHECK(rw.protobuf_message == "io.prometheus.write.v2.Request");
  const auto& q = rw.queue_config;
  CHECK(q.capacity == 100);
  CHECK(q.max_shards == 4);
  CHECK(q.min_shards == 2);
  CHECK(q.max_samples_per_send == 10);
  CHECK(q.batch_send_deadline_ms == 1000);
  CHECK(q.min_backoff_ms == 10);
  CHECK(q.max_backoff_ms == 1000);
  CHECK(q.retry_on_http_429);
  CHECK(q.sample_age_limit_ms == 300000);
  CHECK_FALSE(rw.metadata_config.send);
  CHECK(rw.metadata_config.send_interval_ms == 30000);
  CHECK(rw.metadata_config.max_samples_per_send == 7);
}

TEST_CASE("remote_write errors use promtool's texts", "[remote][sender]") {
  const std::string p = "parsing YAML file p.yml: ";
  CHECK(RemoteWriteErr("remote_write:\n  - name: a\n") ==
        p + "url for remote_write is empty");
  CHECK(RemoteWriteErr("remote_write:\n  -\n") ==
        p + "empty or null remote write config section");
  CHECK(RemoteWriteErr("remote_write:\n  - url: http://a/\n    name: x\n"
                       "  - url: http://b/\n    name: x\n") ==
        p + "found multiple remote write configs with job name \"x\"");
  CHECK(RemoteWriteErr(kRW + "    headers: {Authorization: x}\n") ==
        p + "authorization header must be changed via the basic_auth, "
            "authorization, oauth2, or sigv4 parameter");
  CHECK(RemoteWriteErr(kRW + "    headers: {User-Agent: x}\n") ==
        p + "User-Agent is a reserved header. It must not be changed");
  CHECK(RemoteWriteErr(kRW + "    write_relabel_configs: [null]\n") ==
        p + "empty or null relabeling rule in remote write config");
  CHECK(RemoteWriteErr(kRW + "    queue_config: {foo: 1}\n    bar: 2\n") ==
        p + "yaml: unmarshal errors:\n"
            "  line 3: field foo not found in type config.QueueConfig\n"
            "  line 4: field bar not found in type config.plain");
  CHECK(RemoteWriteErr(kRW + "    queue_config: {max_shards: x}\n") ==
        p + "yaml: unmarshal errors:\n"
            "  line 3: cannot unmarshal !!str `x` into int");
  CHECK(RemoteWriteErr(kRW + "    metadata_config: {send: maybe}\n") ==
        p + "yaml: unmarshal errors:\n"
            "  line 3: cannot unmarshal !!str `maybe` into bool");
  CHECK(RemoteWriteErr(kRW + "    remote_timeout: 5x\n") ==
        p + "not a valid duration string: \"5x\"");
  CHECK(RemoteWriteErr(kRW + "    write_relabel_configs: [{action: foo}]\n") ==
        p + "unknown relabel action \"foo\"");
  CHECK(RemoteWriteErr("remote_write: {url: x}\n") ==
        p + "yaml: unmarshal errors:\n"
            "  line 1: cannot unmarshal !!map into "
            "[]*config.RemoteWriteConfig");
}

TEST_CASE("remote_write rejects what Vigil does not support by name",
          "[remote][sender]") {
  const std::string p = "parsing YAML file p.yml: ";
  CHECK(RemoteWriteErr(kRW + "    sigv4: {region: x}\n") ==
        p + "line 3: sigv4 is not supported by vigil");
  CHECK(RemoteWriteErr(kRW + "    azuread: {cloud: AzurePublic}\n") ==
        p + "line 3: azuread is not supported by vigil");
  CHECK(RemoteWriteErr(kRW + "    oauth2: {client_id: x}\n") ==
        p + "line 3: oauth2 is not supported by vigil");
  CHECK(RemoteWriteErr(kRW + "    sigv4:\n") == "ok");  // null: not configured
  CHECK(RemoteWriteErr("remote_read:\n  - url: http://a/\n") ==
        p + "line 1: remote_read is not supported by vigil yet");
}

TEST_CASE("remote_write checks what Prometheus 3 checks", "[remote][sender]") {
  // Prometheus 2.42 accepts these and misbehaves at run time; current
  // Prometheus (and Vigil) refuse them.
  const std::string p = "parsing YAML file p.yml: ";
  CHECK(RemoteWriteErr(kRW +
                       "    queue_config: {max_shards: 1, min_shards: 3}\n") ==
        p + "remote write queue min_shards must not be greater than "
            "max_shards");
  CHECK(RemoteWriteErr(
            kRW + "    queue_config: {min_backoff: 10s, max_backoff: 1s}\n") ==
        p + "remote write queue max_backoff must not be less than "
            "min_backoff");
  CHECK(RemoteWriteErr(kRW + "    queue_config: {capacity: 0}\n") ==
        p + "remote write queue capacity must be positive");
  CHECK(RemoteWriteErr(kRW + "    queue_config: {capacity: -1}\n") ==
        p + "remote write queue capacity must be positive");
  CHECK(
      RemoteWriteErr(kRW + "    queue_config: {max_samples_per_send: -5}\n") ==
      p + "remote write queue max_samples_per_send must be positive");
  CHECK(RemoteWriteErr(kRW + "    protobuf_message: foo\n") ==
        p + "invalid protobuf_message value: unknown remote write protobuf "
            "message foo, supported: prometheus.WriteRequest, "
            "io.prometheus.write.v2.Request");
  CHECK(RemoteWriteErr("remote_write:\n  - url: ftp://a/\n") ==
        p + "remote_write url \"ftp://a/\": unsupported scheme (want http:// "
            "or https://)");
}

TEST_CASE("remote_write queue names: the name, else a stable config hash",
          "[remote][sender]") {
  using vigil::server::RemoteWriteComponent;
  CHECK(RemoteWriteComponent::QueueName(
            OneRemoteWrite(kRW + "    name: n\n")) == "n");
  const std::string a = RemoteWriteComponent::QueueName(OneRemoteWrite(kRW));
  CHECK(a.size() == 6);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(RemoteWriteComponent::QueueName(OneRemoteWrite(kRW)) == a);
  CHECK(RemoteWriteComponent::QueueName(
            OneRemoteWrite(kRW + "    remote_timeout: 1s\n")) != a);
  CHECK(RemoteWriteComponent::QueueName(OneRemoteWrite(
            "remote_write:\n  - url: http://b:9/api/v1/write\n")) != a);
}

TEST_CASE("remote_write relative secret files join the config's directory",
          "[remote][sender]") {
  vigil::testutil::TempDir dir;
  std::ofstream(dir.Sub("p.yml"))
      << kRW << "    basic_auth: {username: u, password_file: pw}\n";
  auto c = vigil::config::LoadConfigFile(dir.Sub("p.yml"));
  REQUIRE(c.ok());
  CHECK(c->remote_write[0].http.basic_auth->password_file == dir.Sub("pw"));
}

TEST_CASE("vigil check config reports remote_write errors as promtool",
          "[remote][sender]") {
  if (!vigil::testutil::HaveCommand("promtool")) return;
  vigil::testutil::TempDir dir;
  const std::vector<std::string> files = {
      kRW +
          "    name: x\n    headers: {X-Scope-OrgID: t}\n"
          "    queue_config: {capacity: 100, max_shards: 4}\n"
          "    metadata_config: {send: false}\n",
      "remote_write:\n  - name: a\n",
      "remote_write:\n  - url: http://a/\n    name: x\n"
      "  - url: http://b/\n    name: x\n",
      kRW + "    headers: {Content-Type: x}\n",
      kRW + "    queue_config: {max_shards: x, foo: 1}\n",
      kRW + "    remote_timeout: 5x\n",
  };
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string f = "c" + std::to_string(i) + ".yml";
    std::ofstream(dir.Sub(f)) << files[i];
    INFO(files[i]);
    auto run = [&](const std::string& tool) {
      return vigil::testutil::Run("cd '" + dir.path() + "' && " + tool +
                                  " check config " + f);
    };
    const auto v = run(std::string("'") + VIGIL_BINARY + "'");
    const auto p = run("promtool");
    CHECK(v.code == p.code);
    CHECK(v.out == p.out);
    CHECK(v.err == p.err);
  }
}

TEST_CASE("the config shown by the API hides remote_write secrets",
          "[remote][sender]") {
  const std::string yaml =
      "remote_write:\n"
      "  - url: http://a/\n"
      "    basic_auth:\n      username: u\n      password: hunter2\n"

      "  - url: http://b/\n    basic_auth: {username: u, password: \"p w\"}\n"
      "  - url: http://c/\n    bearer_token_file: /etc/tok\n"
      "  - url: http://d/\n"
      "    authorization: {type: Bearer, credentials: tok}\n";
  const std::string r = vigil::config::RedactSecrets(yaml);
  CHECK(r.find("hunter2") == std::string::npos);
  CHECK(r.find("tok}") == std::string::npos);
  CHECK(r.find("p w") == std::string::npos);
  CHECK(r.find("      password: <secret>\n") != std::string::npos);
  CHECK(r.find("credentials: <secret>}") != std::string::npos);
  CHECK(r.find("password: <secret>}") != std::string::npos);
  CHECK(r.find("username: u") != std::string::npos);
  CHECK(r.find("bearer_token_file: /etc/tok") != std::string::npos);
  // Still the same config.
  CHECK(vigil::config::ParseConfig(r, "p.yml").ok());
}
