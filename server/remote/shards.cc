// The sending side of a remote_write queue: each shard's batching loop and
// its retries, and the periodic metadata sends of Remote-Write 1.0.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "core/clock.h"
#include "server/remote/codec.h"
#include "server/remote/queue_manager.h"
#include "server/remote/queue_shard.h"

namespace vigil::remote {
namespace {

int64_t ShardsNowMs() { return Clock::Real()->NowMs(); }
constexpr auto kPoll = std::chrono::milliseconds(100);

}  // namespace

bool QueueManager::Shard::Enqueue(std::vector<Pending> samples, int capacity,
                                  int wake_at, const std::atomic<bool>& stop,
                                  const QueueMetrics& m) {
  std::unique_lock<std::mutex> l(mu);
  bool counted = false;
  while (pending.size() >= static_cast<size_t>(capacity)) {
    if (stop.load()) return false;
    if (!counted) m.enqueue_retries->Inc();
    counted = true;
    space_cv.wait_for(l, kPoll);
  }
  if (pending.empty()) first_pending_ms = ShardsNowMs();
  m.samples_pending->Add(static_cast<double>(samples.size()));
  for (Pending& p : samples) pending.push_back(std::move(p));
  if (pending.size() >= static_cast<size_t>(wake_at)) cv.notify_one();
  return true;
}

void QueueManager::ShardLoop(Shard* s) {
  const config::RemoteWriteQueueConfig& q = options_.config.queue_config;
  const size_t max_send = static_cast<size_t>(q.max_samples_per_send);
  std::vector<Pending> batch;
  batch.reserve(max_send);
  while (!stop_.load()) {
    {
      std::unique_lock<std::mutex> l(s->mu);
      // Wait for a full batch, the batch deadline, or the end.
      while (!stop_.load()) {
        if (s->pending.size() >= max_send) break;
        if (!s->pending.empty() &&
            (s->closing ||
             ShardsNowMs() - s->first_pending_ms >= q.batch_send_deadline_ms)) {
          break;
        }
        if (s->pending.empty() && s->closing) return;
        s->cv.wait_for(l, kPoll);
      }
      if (stop_.load()) return;
      const size_t n = std::min(max_send, s->pending.size());
      for (size_t i = 0; i < n; ++i) {
        batch.push_back(std::move(s->pending.front()));
        s->pending.pop_front();
      }
      s->first_pending_ms = ShardsNowMs();
    }
    s->space_cv.notify_all();
    const double n = static_cast<double>(batch.size());
    SendBatch(s, &batch);
    m_.samples_pending->Add(-n);
    batch.clear();
  }
}

void QueueManager::SendBatch(Shard* s, std::vector<Pending>* batch) {
  (void)s;
  const config::RemoteWriteQueueConfig& q = options_.config.queue_config;
  // Samples past sample_age_limit by now are dropped rather than sent.
  std::vector<std::pair<uint64_t, int64_t>> done;  // (chunk, samples) runs
  auto note_done = [&done](uint64_t chunk) {
    if (!done.empty() && done.back().first == chunk) {
      ++done.back().second;
    } else {
      done.emplace_back(chunk, 1);
    }
  };
  WireRequest req;
  absl::flat_hash_map<const Series*, size_t> index;
  const int64_t now = ShardsNowMs();
  int64_t aged = 0, n = 0;
  Timestamp highest = 0;
  for (const Pending& p : *batch) {
    note_done(p.chunk);
    if (q.sample_age_limit_ms > 0 && p.t < now - q.sample_age_limit_ms) {
      ++aged;
      continue;
    }
    auto [it, added] = index.try_emplace(p.series.get(), req.series.size());
    if (added) {
      req.series.emplace_back();
      req.series.back().labels = p.series->labels;
    }
    req.series[it->second].samples.push_back(WireSample{p.v, p.t});
    highest = std::max(highest, p.t);
    ++n;
  }
  auto finish = [&] {
    for (const auto& [chunk, k] : done) ChunkDone(chunk, k);
  };
  if (aged > 0) m_.samples_dropped->Inc(static_cast<double>(aged));
  if (n == 0) return finish();
  const std::string body =
      EncodeWriteRequest(req, v2_ ? ProtoMessage::kV2 : ProtoMessage::kV1);
  int64_t backoff = q.min_backoff_ms;
  while (!stop_.load()) {
    const auto start = std::chrono::steady_clock::now();
    SendResult r = client_->Send(body);
    const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count();
    if (r.kind == SendResult::kCancelled) return;
    m_.samples_total->Inc(static_cast<double>(n));
    m_.bytes_total->Inc(static_cast<double>(body.size()));
    m_.sent_batch_duration->Observe(ns / 1e9);
    send_ns_.fetch_add(ns);
    sent_samples_.fetch_add(n);
    if (r.kind == SendResult::kDelivered) {
      delivered_.fetch_add(static_cast<uint64_t>(n));
      Timestamp prev = highest_sent_.load();
      while (highest > prev &&
             !highest_sent_.compare_exchange_weak(prev, highest)) {
      }
      m_.highest_sent->Set(std::max(prev, highest) / 1000.0);
      return finish();
    }
    if (r.kind == SendResult::kFailed) {
      m_.samples_failed->Inc(static_cast<double>(n));
      logger_->Error(
          "remote write: non-recoverable error, the batch is dropped",
          {{"remote_name", options_.name},
           {"url", options_.config.url},
           {"count", std::to_string(n)},
           {"err", r.message}});
      return finish();
    }
    m_.samples_retried->Inc(static_cast<double>(n));
    last_failure_ms_.store(ShardsNowMs());
    const int64_t wait = r.retry_after_ms > 0 ? r.retry_after_ms : backoff;
    logger_->Warn("remote write: failed to send batch, retrying",
                  {{"remote_name", options_.name},
                   {"url", options_.config.url},
                   {"retry_in_ms", std::to_string(wait)},
                   {"err", r.message}});
    Sleep(wait);
    backoff = std::min(backoff * 2, q.max_backoff_ms);
  }
}

void QueueManager::MetadataLoop() {
  const config::RemoteWriteMetadataConfig& mc = options_.config.metadata_config;
  const config::RemoteWriteQueueConfig& q = options_.config.queue_config;
  const int64_t interval = std::max<int64_t>(mc.send_interval_ms, 1000);
  // The first send comes one interval after start (Prometheus likewise
  // waits for its first tick).
  Sleep(interval);
  while (!stop_.load()) {
    auto all = options_.metadata();
    const size_t per =
        static_cast<size_t>(std::max(1, mc.max_samples_per_send));
    for (size_t i = 0; i < all.size() && !stop_.load(); i += per) {
      WireRequest req;
      for (size_t j = i; j < std::min(all.size(), i + per); ++j) {
        req.metadata.push_back(WireMetricFamilyMetadata{
            all[j].first, WireMetadata{all[j].second.type, all[j].second.help,
                                       all[j].second.unit}});
      }
      const double n = static_cast<double>(req.metadata.size());
      const std::string body = EncodeWriteRequest(req, ProtoMessage::kV1);
      int64_t backoff = q.min_backoff_ms;
      while (!stop_.load()) {
        SendResult r = client_->Send(body);
        if (r.kind == SendResult::kCancelled) return;
        m_.metadata_total->Inc(n);
        m_.metadata_bytes_total->Inc(static_cast<double>(body.size()));
        if (r.kind == SendResult::kDelivered) break;
        if (r.kind == SendResult::kFailed) {
          m_.metadata_failed->Inc(n);
          logger_->Error("remote write: non-recoverable error sending metadata",
                         {{"remote_name", options_.name}, {"err", r.message}});
          break;
        }
        m_.metadata_retried->Inc(n);
        Sleep(r.retry_after_ms > 0 ? r.retry_after_ms : backoff);
        backoff = std::min(backoff * 2, q.max_backoff_ms);
      }
    }
    Sleep(interval);
  }
}

}  // namespace vigil::remote
