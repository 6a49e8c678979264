#include "server/remote_write_component.h"

#include <set>

#include "fmt/format.h"
#include "server/http_config.h"

namespace vigil::server {

std::string RemoteWriteComponent::QueueName(
    const config::RemoteWriteConfig& rw) {
  return rw.name.empty() ? config::RemoteWriteHashName(rw) : rw.name;
}

absl::StatusOr<std::unique_ptr<RemoteWriteComponent>>
RemoteWriteComponent::Create(RemoteWriteComponentOptions options) {
  std::unique_ptr<RemoteWriteComponent> c(
      new RemoteWriteComponent(std::move(options)));
  storage::DB* db = c->o_.db;
  auto m = remote::RemoteMetrics::Create(c->o_.registry, [db] {
    return static_cast<double>(db->Stats().max_time);
  });
  if (!m.ok()) return m.status();
  c->metrics_ = *std::move(m);
  return c;
}

RemoteWriteComponent::~RemoteWriteComponent() { Stop(); }

absl::StatusOr<std::function<void()>> RemoteWriteComponent::Prepare(
    const LoadedConfig& cfg) {
  std::vector<Planned> plan;
  std::set<std::string> hashes, names;
  for (const config::RemoteWriteConfig& rw : cfg.config.remote_write) {
    const std::string hash = config::RemoteWriteHashName(rw) + rw.name;
    if (!hashes.insert(hash).second) {
      return absl::InvalidArgumentError(fmt::format(
          "duplicate remote write configs are not allowed, found duplicate "
          "for URL: {}",
          rw.url));
    }
    Planned p;
    p.name = QueueName(rw);
    if (!names.insert(p.name).second) {
      // Two unnamed entries whose hashes collide, or a name equal to
      // another entry's hash.
      return absl::InvalidArgumentError(fmt::format(
          "remote write queue name {} is used twice (set distinct `name`s)",
          p.name));
    }
    auto tmpl = FetchTemplate(rw.http);
    if (!tmpl.ok()) return tmpl.status();
    for (const auto& [k, v] : rw.headers) tmpl->headers.emplace_back(k, v);
    p.client.url = rw.url;
    p.client.request_template = *std::move(tmpl);
    p.client.timeout_ms = rw.remote_timeout_ms;
    p.client.v2 = rw.protobuf_message == "io.prometheus.write.v2.Request";
    p.client.retry_on_http_429 = rw.queue_config.retry_on_http_429;
    p.client.user_agent = std::string("Vigil/") + VIGIL_VERSION;
    p.queue.name = p.name;
    p.queue.config = rw;
    p.queue.external_labels = cfg.config.global.external_labels;
    p.queue.reshard_interval_ms = o_.reshard_interval_ms;
    storage::DB* db = o_.db;
    p.queue.metadata = [db] { return db->GetMetadata(); };
    // What the queue sends and how: the entry, the secrets as read now,
    // and the external labels.
    const net::FetchRequest& t = p.client.request_template;
    p.fingerprint =
        fmt::format("{}|{}|{}|{}|{}", config::RemoteWriteHashName(rw), rw.name,
                    p.queue.external_labels.ToString(),
                    t.basic_username + ":" + t.basic_password, t.bearer_token);
    for (const auto& [k, v] : t.headers) p.fingerprint += "|" + k + "=" + v;
    plan.push_back(std::move(p));
  }
  return std::function<void()>(
      [this, plan = std::move(plan)]() mutable { Apply(std::move(plan)); });
}

void RemoteWriteComponent::Apply(std::vector<Planned> plan) {
  std::lock_guard<std::mutex> l(mu_);
  std::set<std::string> wanted;
  for (const Planned& p : plan) wanted.insert(p.name);
  // Stop removed and changed queues first: a changed one reopens its
  // reader by the same name.
  for (auto it = queues_.begin(); it != queues_.end();) {
    const Planned* p = nullptr;
    for (const Planned& q : plan) {
      if (q.name == it->first) p = &q;
    }
    if (p != nullptr && p->fingerprint == it->second.fingerprint) {
      ++it;
      continue;
    }
    it->second.queue->Stop();
    it->second.queue.reset();
    metrics_->Remove(it->first, it->second.url);
    it = queues_.erase(it);
  }
  // Readers registered for remotes no longer configured (also those
  // removed while Vigil was down) would hold the log forever.
  for (const std::string& name : o_.db->CommitLogReaders()) {
    if (wanted.count(name) != 0) continue;
    if (absl::Status st = o_.db->DropCommitLogReader(name); !st.ok()) {
      o_.logger->Warn(
          "remote write: dropping a commit-log reader failed",
          {{"remote_name", name}, {"err", std::string(st.message())}});
    } else {
      o_.logger->Info("remote write: removed queue's commit-log reader dropped",
                      {{"remote_name", name}});
    }
  }
  for (Planned& p : plan) {
    if (queues_.count(p.name) != 0) continue;
    auto reader = o_.db->OpenCommitLogReader(p.name);
    if (!reader.ok()) {
      o_.logger->Error(
          "remote write: opening the commit-log reader failed; "
          "this remote sends nothing",
          {{"remote_name", p.name},
           {"err", std::string(reader.status().message())}});
      continue;
    }
    const std::string url = p.client.url;
    auto client =
        std::make_unique<remote::WriteClient>(std::move(p.client), o_.client);
    auto q = std::make_unique<remote::QueueManager>(
        std::move(p.queue), *std::move(reader), std::move(client),
        metrics_->ForQueue(p.name, url), o_.logger);
    if (started_) q->Start();
    o_.logger->Info("remote write: queue started",
                    {{"remote_name", p.name}, {"url", url}});
    queues_[p.name] = Running{p.fingerprint, url, std::move(q)};
  }
}

void RemoteWriteComponent::Start() {
  std::lock_guard<std::mutex> l(mu_);
  started_ = true;
  for (auto& [name, r] : queues_) r.queue->Start();
}

void RemoteWriteComponent::Stop() {
  std::lock_guard<std::mutex> l(mu_);
  started_ = false;
  for (auto& [name, r] : queues_) r.queue->Stop();
  queues_.clear();
}

std::vector<std::string> RemoteWriteComponent::QueueNames() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::string> out;
  for (const auto& [name, r] : queues_) out.push_back(name);
  return out;
}

}  // namespace vigil::server
