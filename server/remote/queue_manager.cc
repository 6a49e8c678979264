// The reader side of a remote_write queue: commit-log reads, series
// resolution, acknowledgement and resharding. The shards are in shards.cc.
#include "server/remote/queue_manager.h"

#include <algorithm>
#include <cmath>

#include "core/clock.h"
#include "core/relabel.h"
#include "core/thread_name.h"
#include "server/remote/queue_shard.h"

namespace vigil::remote {
namespace {

int64_t NowMs() { return Clock::Real()->NowMs(); }

}  // namespace

QueueManager::QueueManager(QueueOptions options,
                           std::unique_ptr<storage::CommitLogReader> reader,
                           std::unique_ptr<WriteClient> client, QueueMetrics m,
                           Logger* logger)
    : options_(std::move(options)),
      reader_(std::move(reader)),
      client_(std::move(client)),
      m_(m),
      logger_(logger),
      v2_(options_.config.protobuf_message ==
          "io.prometheus.write.v2.Request") {
  const config::RemoteWriteQueueConfig& q = options_.config.queue_config;
  m_.shards_min->Set(q.min_shards);
  m_.shards_max->Set(q.max_shards);
  m_.shard_capacity->Set(q.capacity);
  m_.max_samples_per_send->Set(q.max_samples_per_send);
  m_.shards_desired->Set(q.min_shards);
}

QueueManager::~QueueManager() { Stop(); }

void QueueManager::Start() {
  if (started_) return;
  started_ = true;
  pos_ = acked_pos_ = reader_->Position();
  last_ack_ms_ = last_reshard_ms_ = NowMs();
  StartShards(options_.config.queue_config.min_shards);
  reader_thread_ = std::thread([this] {
    SetCurrentThreadName("vigil-rw-read");
    ReadLoop();
  });
  if (options_.config.metadata_config.send && !v2_ && options_.metadata) {
    metadata_thread_ = std::thread([this] {
      SetCurrentThreadName("vigil-rw-meta");
      MetadataLoop();
    });
  }
}

void QueueManager::Stop() {
  if (!started_ || stop_.exchange(true)) return;
  {
    std::lock_guard<std::mutex> l(stop_mu_);
    stop_cv_.notify_all();
  }
  // The shards and the reader's enqueue wake up on their own within
  // 100 ms to see stop_; a send in flight ends now.
  client_->Cancel();
  if (reader_thread_.joinable()) reader_thread_.join();
  if (metadata_thread_.joinable()) metadata_thread_.join();
  StopShards();
  // What was delivered stays delivered.
  {
    std::lock_guard<std::mutex> l(chunks_mu_);
    while (!chunks_.empty() && chunks_.front().outstanding == 0) {
      acked_pos_ = chunks_.front().next;
      chunks_.pop_front();
      ++first_chunk_;
    }
  }
  if (absl::Status st = reader_->Acknowledge(acked_pos_); !st.ok()) {
    logger_->Warn(
        "remote write: acknowledging failed",
        {{"remote_name", options_.name}, {"err", std::string(st.message())}});
  }
}

void QueueManager::Sleep(int64_t ms) {
  std::unique_lock<std::mutex> l(stop_mu_);
  stop_cv_.wait_for(l, std::chrono::milliseconds(ms),
                    [this] { return stop_.load(); });
}

void QueueManager::ReadLoop() {
  while (!stop_.load()) {
    if (!ReadOnce()) Sleep(1000);
    AcknowledgeDone();
    MaybeReshard(NowMs());
  }
}

bool QueueManager::ReadOnce() {
  const config::RemoteWriteQueueConfig& q = options_.config.queue_config;
  const int64_t wait_ms = std::min<int64_t>(q.batch_send_deadline_ms, 1000);
  auto read = reader_->Read(pos_, static_cast<size_t>(q.max_samples_per_send),
                            absl::Milliseconds(wait_ms));
  if (!read.ok()) {
    if (read.status().code() == absl::StatusCode::kCancelled) {
      Sleep(1000);
      return true;
    }
    logger_->Error("remote write: reading the commit log failed",
                   {{"remote_name", options_.name},
                    {"err", std::string(read.status().message())}});
    return false;
  }
  if (read->lost_samples > 0 || read->lost_batches > 0) {
    m_.samples_dropped->Inc(static_cast<double>(read->lost_samples));
    logger_->Warn(
        "remote write: samples were deleted from the storage before they "
        "were sent (retention or the commit-log hold limit)",
        {{"remote_name", options_.name},
         {"batches", std::to_string(read->lost_batches)},
         {"samples", std::to_string(read->lost_samples)}});
  }
  if (read->batches.empty()) {
    // Nothing new: a chunk for the lost range (if any) is still a
    // position to acknowledge.
    if (read->next != pos_) {
      std::lock_guard<std::mutex> l(chunks_mu_);
      chunks_.push_back(Chunk{read->next, 0});
      pos_ = read->next;
    }
    return true;
  }
  const int64_t now = NowMs();
  const int64_t age_limit = q.sample_age_limit_ms;
  const size_t n_shards = shards_.size();
  std::vector<std::vector<Pending>> groups(n_shards);
  uint64_t chunk_id = 0;
  {
    std::lock_guard<std::mutex> l(chunks_mu_);
    chunk_id = first_chunk_ + chunks_.size();
  }
  int64_t kept = 0, dropped = 0, in = 0;
  for (const storage::CommittedBatch& b : read->batches) {
    for (const storage::CommittedSample& cs : b.samples) {
      ++in;
      highest_read_ = std::max(highest_read_, cs.t);
      std::shared_ptr<const Series> s = Resolve(cs.ref);
      if (s->dropped || (age_limit > 0 && cs.t < now - age_limit)) {
        ++dropped;
        continue;
      }
      groups[cs.ref % n_shards].push_back(Pending{s, cs.t, cs.v, chunk_id});
      ++kept;
    }
  }
  m_.samples_dropped->Inc(static_cast<double>(dropped));
  samples_per_batch_ = static_cast<double>(in) / read->batches.size();
  in_since_reshard_ += static_cast<uint64_t>(in);
  m_.samples_in->Inc(static_cast<double>(in));
  {
    std::lock_guard<std::mutex> l(chunks_mu_);
    chunks_.push_back(Chunk{read->next, kept});
  }
  pos_ = read->next;
  for (size_t i = 0; i < n_shards; ++i) {
    if (groups[i].empty()) continue;
    if (!shards_[i]->Enqueue(std::move(groups[i]), q.capacity,
                             q.max_samples_per_send, stop_, m_)) {
      return true;  // stopping
    }
  }
  return true;
}

std::shared_ptr<const QueueManager::Series> QueueManager::Resolve(
    storage::SeriesRef ref) {
  auto it = cache_.find(ref);
  if (it != cache_.end()) return it->second;
  if (cache_.size() >= options_.series_cache_limit) cache_.clear();
  auto s = std::make_shared<Series>();
  auto lbls = reader_->SeriesLabels(ref);
  if (!lbls.ok()) {
    s->dropped = true;
    logger_->Warn("remote write: a committed sample names an unknown series",
                  {{"remote_name", options_.name},
                   {"ref", std::to_string(ref)},
                   {"err", std::string(lbls.status().message())}});
  } else {
    Labels in = *std::move(lbls);
    if (!options_.external_labels.empty()) {
      LabelsBuilder b(in);
      for (const Label& l : options_.external_labels) {
        if (!in.Has(l.name)) b.Set(l.name, l.value);
      }
      in = b.Build();
    }
    const auto& rules = options_.config.write_relabel_configs;
    if (rules.empty()) {
      s->labels = std::move(in);
    } else if (!Process(in, rules, &s->labels) || s->labels.empty()) {
      s->dropped = true;
    }
  }
  cache_.emplace(ref, s);
  return s;
}

void QueueManager::ChunkDone(uint64_t chunk, int64_t n) {
  std::lock_guard<std::mutex> l(chunks_mu_);
  if (chunk < first_chunk_ || chunk - first_chunk_ >= chunks_.size()) return;
  chunks_[chunk - first_chunk_].outstanding -= n;
}

void QueueManager::AcknowledgeDone() {
  uint64_t pos = 0;
  {
    std::lock_guard<std::mutex> l(chunks_mu_);
    const uint64_t before = acked_pos_;
    while (!chunks_.empty() && chunks_.front().outstanding <= 0) {
      acked_pos_ = chunks_.front().next;
      chunks_.pop_front();
      ++first_chunk_;
    }
    if (acked_pos_ == before) return;
    pos = acked_pos_;
  }
  // Acknowledge is a small write; once a second is plenty (a crash
  // resends at most that much).
  const int64_t now = NowMs();
  if (now - last_ack_ms_ < 1000) return;
  last_ack_ms_ = now;
  if (absl::Status st = reader_->Acknowledge(pos); !st.ok()) {
    logger_->Warn(
        "remote write: acknowledging failed",
        {{"remote_name", options_.name}, {"err", std::string(st.message())}});
  }
}

int QueueManager::DesiredShards(int current, int min_shards, int max_shards,
                                double send_seconds_per_sample, double in_rate,
                                double backlog_samples) {
  double want = send_seconds_per_sample * (in_rate + 0.1 * backlog_samples);
  int desired = current;
  const double lo = current * 0.7, hi = current * 1.3;
  if (want < lo || want > hi) desired = static_cast<int>(std::ceil(want));
  return std::clamp(desired, min_shards, max_shards);
}

void QueueManager::MaybeReshard(int64_t now_ms) {
  const int64_t interval = now_ms - last_reshard_ms_;
  if (interval < options_.reshard_interval_ms) return;
  last_reshard_ms_ = now_ms;
  const config::RemoteWriteQueueConfig& q = options_.config.queue_config;
  const double secs = interval / 1000.0;
  const double in_rate = in_since_reshard_ / secs;
  in_since_reshard_ = 0;
  const int64_t sent = sent_samples_.exchange(0);
  const int64_t ns = send_ns_.exchange(0);
  if (sent == 0) return;  // nothing measured (idle, or the endpoint is down)
  // The backlog: what is read but not delivered, plus what the log holds
  // beyond it, estimated from the timestamps (the incoming rate times how
  // far delivery lags behind what was read).
  const double lag_s =
      std::max<double>(0, (highest_read_ - highest_sent_.load()) / 1000.0);
  const double backlog =
      in_rate * lag_s +
      static_cast<double>(reader_->End() - pos_) * samples_per_batch_;
  const int current = static_cast<int>(shards_.size());
  int desired =
      DesiredShards(current, q.min_shards, q.max_shards,
                    ns / 1e9 / static_cast<double>(sent), in_rate, backlog);
  m_.shards_desired->Set(desired);
  // More shards do not help an endpoint that is failing.
  if (desired > current &&
      now_ms - last_failure_ms_.load() < 2 * q.batch_send_deadline_ms) {
    return;
  }
  if (desired == current) return;
  logger_->Info("remote write: resharding", {{"remote_name", options_.name},
                                             {"from", std::to_string(current)},
                                             {"to", std::to_string(desired)}});
  StopShards();  // drains them: order per series holds
  if (!stop_.load()) StartShards(desired);
}

void QueueManager::StartShards(int n) {
  shards_.clear();
  for (int i = 0; i < n; ++i) shards_.push_back(std::make_unique<Shard>());
  for (auto& s : shards_) {
    Shard* sp = s.get();
    s->thread = std::thread([this, sp] {
      SetCurrentThreadName("vigil-rw-shard");
      ShardLoop(sp);
    });
  }
  num_shards_.store(n);
  m_.shards->Set(n);
}

void QueueManager::StopShards() {
  for (auto& s : shards_) {
    std::lock_guard<std::mutex> l(s->mu);
    s->closing = true;
    s->cv.notify_all();
  }
  for (auto& s : shards_) {
    if (s->thread.joinable()) s->thread.join();
  }
  shards_.clear();
}

}  // namespace vigil::remote
