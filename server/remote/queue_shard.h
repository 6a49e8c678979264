// One shard of a remote_write queue (queue_manager.h): the samples handed
// to it, in order, and the thread that batches and sends them.
#ifndef VIGIL_SERVER_REMOTE_QUEUE_SHARD_H_
#define VIGIL_SERVER_REMOTE_QUEUE_SHARD_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "server/remote/codec.h"
#include "server/remote/queue_manager.h"

namespace vigil::remote {

struct QueueManager::Series {
  bool dropped = false;  // relabelled away, or unknown to the storage
  Labels labels;         // as sent: external labels added, relabelled
};

class QueueManager::Shard {
 public:
  // Appends `samples` (one chunk's, in order) once fewer than `capacity`
  // are pending; waits for room meanwhile (counting enqueue retries).
  // False if `stop` was set while waiting (the samples are not queued).
  bool Enqueue(std::vector<Pending> samples, int capacity, int wake_at,
               const std::atomic<bool>& stop, const QueueMetrics& m);

  std::mutex mu;
  std::condition_variable cv;        // samples arrived, or closing
  std::condition_variable space_cv;  // samples were taken
  std::deque<Pending> pending;
  int64_t first_pending_ms = 0;  // when the oldest pending sample came
  bool closing = false;          // send everything, then end
  std::thread thread;
};

}  // namespace vigil::remote

#endif  // VIGIL_SERVER_REMOTE_QUEUE_SHARD_H_
