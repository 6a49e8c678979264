// The remote_write sender in process (server/remote_write_component.h over a
// real storage::DB and a real HTTP receiver): what is sent and how,
// batching, retries and their absence, resuming from the persisted
// position, and dropping the reader of a removed remote.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/logger.h"
#include "server/config/config.h"
#include "server/net/http_client.h"
#include "server/remote_write_component.h"
#include "storage/db.h"
#include "tests/server/remote_write_testutil.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::Labels;
using vigil::Timestamp;
using vigil::net::HeaderList;
using vigil::server::LoadedConfig;
using vigil::server::RemoteWriteComponent;
using vigil::testutil::MetricValue;
using vigil::testutil::RemoteWriteReceiver;

struct Env {
  vigil::testutil::TempDir dir;
  std::unique_ptr<vigil::storage::DB> db;
  vigil::net::HttpClient client;
  vigil::metrics::Registry registry;
  vigil::Logger logger{stderr, vigil::LogLevel::kError};
  std::unique_ptr<RemoteWriteComponent> rw;

  Env() { Reopen(); }
  void Reopen() {
    rw.reset();
    db.reset();
    auto d = vigil::storage::DB::Open({}, dir.Sub("data"));
    REQUIRE(d.ok());
    db = *std::move(d);
  }
  // Applies `yaml` (a whole prometheus.yml) and starts the component.
  void Run(const std::string& yaml) {
    auto c = vigil::config::ParseConfig(yaml, "p.yml");
    INFO((c.ok() ? "" : std::string(c.status().message())));
    REQUIRE(c.ok());
    if (!rw) {
      vigil::server::RemoteWriteComponentOptions o;
      o.db = db.get();
      o.client = &client;
      o.registry = &registry;
      o.logger = &logger;
      auto made = RemoteWriteComponent::Create(o);
      REQUIRE(made.ok());
      rw = *std::move(made);
    }
    auto commit = rw->Prepare(LoadedConfig{"p.yml", *c});
    REQUIRE(commit.ok());
    (*commit)();
    rw->Start();
  }
  // Appends `n` samples to each of `series` metrics named m0, m1, ...,
  // one commit per timestamp.
  void Append(int series, int n, Timestamp t0, Timestamp step = 1000) {
    for (int i = 0; i < n; ++i) {
      auto app = db->NewAppender();
      for (int s = 0; s < series; ++s) {
        Labels l({{"__name__", "m" + std::to_string(s)}, {"job", "j"}});
        REQUIRE(app->Append(0, l, t0 + i * step, s * 1000 + i).ok());
      }
      REQUIRE(app->Commit().ok());
    }
  }
  double Metric(const std::string& name) {
    return MetricValue(registry, "prometheus_remote_storage_" + name);
  }
};

// One remote named "r" at `url`; `queue` adds queue_config keys ("k: v,
// "), `extra` keys of the entry.
std::string Config(const std::string& url, const std::string& extra = "",
                   const std::string& queue = "") {
  return "global: {external_labels: {site: edge}}\n"
         "remote_write:\n  - url: " +
         url +
         "\n    name: r\n"
         "    queue_config: {" +
         queue +
         "batch_send_deadline: 100ms, min_backoff: 50ms, "
         "max_backoff: 200ms, max_samples_per_send: 10}\n" +
         extra;
}

std::string QueueHeader(const HeaderList& h, const std::string& name) {
  for (const auto& [k, v] : h) {
    if (k == name) return v;
  }
  return "";
}

const Timestamp kQueueT0 = vigil::Clock::Real()->NowMs() - 60000;

}  // namespace

TEST_CASE("remote write sends committed samples with Prometheus's headers",
          "[remote][sender][concurrency]") {
  RemoteWriteReceiver recv;
  Env env;
  env.Run(Config(recv.url(),
                 "    write_relabel_configs:\n"
                 "      - {source_labels: [__name__], regex: m2, action: "
                 "drop}\n"));
  env.Append(3, 25, kQueueT0);
  REQUIRE(recv.WaitFor([&] { return recv.total() == 50; }));
  const auto got = recv.samples();
  REQUIRE(got.size() == 2);
  const auto& m0 = got.at("{__name__=\"m0\", job=\"j\", site=\"edge\"}");
  REQUIRE(m0.size() == 25);
  for (int i = 0; i < 25; ++i) {
    CHECK(m0[i].timestamp == kQueueT0 + i * 1000);  // in order, every one
    CHECK(m0[i].value == i);
  }
  for (const auto& r : recv.requests()) {
    CHECK(r.samples <= 10);  // max_samples_per_send
    CHECK(QueueHeader(r.headers, "content-encoding") == "snappy");
    CHECK(QueueHeader(r.headers, "content-type") == "application/x-protobuf");
    CHECK(QueueHeader(r.headers, "user-agent") ==
          std::string("Vigil/") + VIGIL_VERSION);
    CHECK(QueueHeader(r.headers, "x-prometheus-remote-write-version") ==
          "0.1.0");
  }
  CHECK(env.Metric("samples_total") == 50);
  CHECK(env.Metric("samples_dropped_total") == 25);  // relabelled away
  CHECK(env.Metric("samples_failed_total") == 0);
  CHECK(env.Metric("queue_highest_sent_timestamp_seconds") ==
        Approx((kQueueT0 + 24000) / 1000.0));
  CHECK(env.Metric("shards") == 1);
}

TEST_CASE("remote write 2.0 says so in its headers", "[remote][sender]") {
  RemoteWriteReceiver recv;
  Env env;
  env.Run(Config(recv.url(),
                 "    protobuf_message: io.prometheus.write.v2.Request\n"
                 "    headers: {X-Scope-OrgID: tenant-1}\n"));
  env.Append(2, 3, kQueueT0);
  REQUIRE(recv.WaitFor([&] { return recv.total() == 6; }));
  for (const auto& r : recv.requests()) {
    CHECK(QueueHeader(r.headers, "content-type") ==
          "application/x-protobuf;proto=io.prometheus.write.v2.Request");
    CHECK(QueueHeader(r.headers, "x-prometheus-remote-write-version") ==
          "2.0.0");
    CHECK(QueueHeader(r.headers, "x-scope-orgid") == "tenant-1");
  }
}

TEST_CASE("remote write drops a batch on 4xx without retrying it",
          "[remote][sender]") {
  RemoteWriteReceiver recv([](int n) {
    return std::pair<int, HeaderList>{n == 0 ? 400 : 200, {}};
  });
  Env env;
  env.Run(Config(recv.url()));
  env.Append(1, 10, kQueueT0);  // one batch: refused
  REQUIRE(
      recv.WaitFor([&] { return env.Metric("samples_failed_total") == 10; }));
  env.Append(1, 5, kQueueT0 + 10000);  // the next goes through
  REQUIRE(recv.WaitFor([&] { return recv.total() == 5; }));
  CHECK(recv.requests().size() == 2);  // the refused batch came once
  CHECK(env.Metric("samples_retried_total") == 0);
}

TEST_CASE("remote write retries 5xx with doubling backoff",
          "[remote][sender][concurrency]") {
  RemoteWriteReceiver recv([](int n) {
    return std::pair<int, HeaderList>{n < 3 ? 503 : 200, {}};
  });
  Env env;
  env.Run(Config(recv.url()));
  env.Append(1, 10, kQueueT0);
  REQUIRE(recv.WaitFor([&] { return recv.total() == 10; }));
  const auto reqs = recv.requests();
  REQUIRE(reqs.size() == 4);
  // min_backoff 50ms doubling: 50, 100, 200.
  CHECK(reqs[1].at_ms - reqs[0].at_ms >= 45);
  CHECK(reqs[2].at_ms - reqs[1].at_ms >= 95);
  CHECK(reqs[3].at_ms - reqs[2].at_ms >= 195);
  CHECK(env.Metric("samples_retried_total") == 30);
  CHECK(env.Metric("samples_failed_total") == 0);
}

TEST_CASE("remote write retries 429 after Retry-After when asked to",
          "[remote][sender]") {
  RemoteWriteReceiver recv([](int n) {
    return std::pair<int, HeaderList>{
        n == 0 ? 429 : 200,
        n == 0 ? HeaderList{{"Retry-After", "1"}} : HeaderList{}};
  });
  Env env;
  env.Run(Config(recv.url(), "", "retry_on_http_429: true, "));
  env.Append(1, 10, kQueueT0);
  REQUIRE(recv.WaitFor([&] { return recv.total() == 10; }));
  const auto reqs = recv.requests();
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[1].at_ms - reqs[0].at_ms >= 950);  // Retry-After: 1, not 50ms
  CHECK(env.Metric("samples_retried_total") == 10);
}

TEST_CASE("remote write treats 429 as final without retry_on_http_429",
          "[remote][sender]") {
  RemoteWriteReceiver recv([](int n) {
    return std::pair<int, HeaderList>{n == 0 ? 429 : 200, {}};
  });
  Env env;
  env.Run(Config(recv.url()));
  env.Append(1, 10, kQueueT0);
  REQUIRE(
      recv.WaitFor([&] { return env.Metric("samples_failed_total") == 10; }));
  CHECK(recv.requests().size() == 1);
}

TEST_CASE("remote write drops samples older than sample_age_limit, counted",
          "[remote][sender]") {
  RemoteWriteReceiver recv;
  Env env;
  env.Run(Config(recv.url(), "", "sample_age_limit: 10m, "));
  const Timestamp now = vigil::Clock::Real()->NowMs();
  env.Append(1, 3, now - 3600 * 1000);  // an hour old
  env.Append(1, 4, now - 1000);
  REQUIRE(recv.WaitFor([&] { return recv.total() == 4; }));
  REQUIRE(
      recv.WaitFor([&] { return env.Metric("samples_dropped_total") == 3; }));
}

TEST_CASE("remote write resumes from its persisted position after a restart",
          "[remote][sender][concurrency]") {
  RemoteWriteReceiver recv;
  Env env;
  env.Run(Config(recv.url()));
  env.Append(2, 10, kQueueT0);
  REQUIRE(recv.WaitFor([&] { return recv.total() == 20; }));
  env.rw->Stop();
  // Committed while no queue runs: still sent once it is back.
  env.Append(2, 10, kQueueT0 + 10000);
  env.Reopen();
  env.Run(Config(recv.url()));
  REQUIRE(recv.WaitFor([&] { return recv.total() >= 40; }));
  for (const auto& [series, samples] : recv.samples()) {
    INFO(series);
    std::set<Timestamp> ts;
    for (const auto& s : samples) ts.insert(s.timestamp);
    CHECK(ts.size() == 20);  // every one (resends allowed, none missing)
  }
}

TEST_CASE("remote write drops the reader of a removed remote",
          "[remote][sender]") {
  RemoteWriteReceiver recv;
  Env env;
  env.Run(Config(recv.url()));
  CHECK(env.db->CommitLogReaders() == std::vector<std::string>{"r"});
  CHECK(env.rw->QueueNames() == std::vector<std::string>{"r"});
  env.Run("global: {}\n");
  CHECK(env.db->CommitLogReaders().empty());
  CHECK(env.rw->QueueNames().empty());
}

TEST_CASE("remote write shard policy follows the backlog",
          "[remote][sender][concurrency]") {
  using vigil::remote::QueueManager;
  // 1 ms per sample, 10k samples/s in: 10 shards.
  CHECK(QueueManager::DesiredShards(1, 1, 50, 0.001, 10000, 0) == 10);
  // Within 30% of the current count: unchanged.
  CHECK(QueueManager::DesiredShards(10, 1, 50, 0.001, 11000, 0) == 10);
  // A backlog asks for more, clamped to max_shards.
  CHECK(QueueManager::DesiredShards(10, 1, 50, 0.001, 10000, 1e6) == 50);
  // Idle: down to min_shards.
  CHECK(QueueManager::DesiredShards(10, 2, 50, 0.001, 0, 0) == 2);
}
