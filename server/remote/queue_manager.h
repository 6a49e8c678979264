// -----------------------------------------------------------------------------
// File: remote/queue_manager.h
// -----------------------------------------------------------------------------
//
// One remote_write queue. A reader thread reads committed batches from the
// storage's commit log (storage::CommitLogReader, registered under the
// remote's name), resolves each series once (SeriesLabels, external_labels,
// write_relabel_configs; the outcome cached per series ref, the cache
// bounded) and hands samples to shards by series ref, so each series stays
// in order. Each shard batches up to max_samples_per_send samples or
// batch_send_deadline, encodes them (remote/codec.h) and sends them with
// retries (min_backoff doubling to max_backoff, Retry-After honoured).
//
// Nothing is copied out of the storage beyond what the shards hold: a full
// shard (queue_config.capacity samples) stops the reader, so memory stays
// bounded however long the endpoint is down; the log keeps the rest on
// disk. A read batch is acknowledged (CommitLogReader::Acknowledge) once
// every one of its samples was delivered or definitively dropped (a 4xx,
// relabelled away, older than sample_age_limit), so a restart resumes
// where delivery stopped: at-least-once.
//
// Shards scale between min_shards and max_shards every 10 s with the
// backlog (see QueueManager::DesiredShards). Resharding waits until the
// shards are empty, so per-series order holds across it.
//
// Thread-safe: Start/Stop from one thread; the rest from any.
#ifndef VIGIL_SERVER_REMOTE_QUEUE_MANAGER_H_
#define VIGIL_SERVER_REMOTE_QUEUE_MANAGER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/labels.h"
#include "core/logger.h"
#include "server/config/config.h"
#include "server/remote/metrics.h"
#include "server/remote/write_client.h"
#include "storage/commit_log.h"
#include "storage/db.h"

namespace vigil::remote {

struct QueueOptions {
  std::string name;  // the remote's name (or its config hash)
  config::RemoteWriteConfig config;
  Labels external_labels;
  // Series whose resolved labels are cached; beyond it the cache starts
  // over. Default: 1<<20.
  size_t series_cache_limit = 1 << 20;
  // Metric metadata for Remote-Write 1.0's periodic metadata sends and
  // 2.0's per-series metadata (the storage's GetMetadata). May be empty.
  std::function<std::vector<std::pair<std::string, storage::Metadata>>()>
      metadata;
  // How often the shard count is reconsidered. Default: 10s (Prometheus).
  int64_t reshard_interval_ms = 10000;
};

class QueueManager {
 public:
  // Takes the reader (its name is the queue's). `client`, `logger` must
  // outlive it; `m` stays valid while the queue runs.
  QueueManager(QueueOptions options,
               std::unique_ptr<storage::CommitLogReader> reader,
               std::unique_ptr<WriteClient> client, QueueMetrics m,
               Logger* logger);
  ~QueueManager();  // Stop()s

  void Start();
  // Stops reading, abandons sends in flight (unacknowledged samples are
  // read again by the next reader of this name) and acknowledges what was
  // delivered. Idempotent.
  void Stop();

  const std::string& name() const { return options_.name; }
  int shards() const { return num_shards_.load(); }
  // Samples delivered (2xx) so far.
  uint64_t delivered() const { return delivered_.load(); }

  struct Series;  // a resolved series (labels to send, or dropped)
  struct Pending {
    std::shared_ptr<const Series> series;
    Timestamp t;
    double v;
    uint64_t chunk;  // which read chunk it came from (for acknowledgement)
  };
  class Shard;

  // The shard count Prometheus's idea asks for: the time sending takes
  // per sample times the samples to send per second (the incoming rate
  // plus a tenth of the backlog), within a 30% dead band of `current`,
  // clamped to [min, max]. Exposed for tests.
  static int DesiredShards(int current, int min_shards, int max_shards,
                           double send_seconds_per_sample, double in_rate,
                           double backlog_samples);

 private:
  void ReadLoop();
  void ShardLoop(Shard* s);
  void MetadataLoop();
  // Reads one chunk and distributes it; false when stopping or on a read
  // error (logged, retried after a pause).
  bool ReadOnce();
  std::shared_ptr<const Series> Resolve(storage::SeriesRef ref);
  void ChunkDone(uint64_t chunk, int64_t n);
  void AcknowledgeDone();
  void MaybeReshard(int64_t now_ms);
  void StartShards(int n);
  void StopShards();
  // Sends one batch until delivered, failed or stopping.
  void SendBatch(Shard* s, std::vector<Pending>* batch);
  void Sleep(int64_t ms);

  const QueueOptions options_;
  std::unique_ptr<storage::CommitLogReader> reader_;
  std::unique_ptr<WriteClient> client_;
  QueueMetrics m_;
  Logger* logger_;
  const bool v2_;

  std::atomic<bool> stop_{false};
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  std::thread reader_thread_, metadata_thread_;
  bool started_ = false;

  // Reader-thread state.
  uint64_t pos_ = 0;
  absl::flat_hash_map<storage::SeriesRef, std::shared_ptr<const Series>> cache_;
  int64_t last_ack_ms_ = 0, last_reshard_ms_ = 0;
  uint64_t in_since_reshard_ = 0;
  Timestamp highest_read_ = 0;
  double samples_per_batch_ = 0;  // in the last read

  // Shards (replaced whole on a reshard, by the reader thread).
  std::vector<std::unique_ptr<Shard>> shards_;
  std::atomic<int> num_shards_{0};

  // Chunks read and not yet acknowledged, oldest first.
  struct Chunk {
    uint64_t next = 0;        // the log position after it
    int64_t outstanding = 0;  // samples not yet delivered or dropped
  };
  std::mutex chunks_mu_;
  std::deque<Chunk> chunks_;  // chunks_[i] has id first_chunk_ + i
  uint64_t first_chunk_ = 0;
  uint64_t acked_pos_ = 0;  // the position everything before is done

  std::atomic<uint64_t> delivered_{0};
  std::atomic<int64_t> send_ns_{0}, sent_samples_{0};
  std::atomic<int64_t> last_failure_ms_{0};
  std::atomic<Timestamp> highest_sent_{0};
};

}  // namespace vigil::remote

#endif  // VIGIL_SERVER_REMOTE_QUEUE_MANAGER_H_
