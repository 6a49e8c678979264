#include "core/parallel.h"

#include <algorithm>
#include <deque>
#include <system_error>
#include <thread>

#include "core/thread_name.h"

namespace vigil::parallel_internal {

namespace {

// Helper threads, started when a job finds none idle (up to
// kMaxHelperThreads, enough for a few concurrent queries on a small
// machine) and kept until the process exits.
class HelperPool {
 public:
  bool Start(HelperJob* job) {
    std::unique_lock<std::mutex> l(mu_);
    if (idle_ == 0) {
      if (threads_ >= kMaxHelperThreads) return false;
      try {
        std::thread(&HelperPool::Loop, this).detach();
      } catch (const std::system_error&) {
        return false;  // no thread to be had (process limits)
      }
      ++threads_;
      ++idle_;
    }
    --idle_;  // reserved for this job
    queue_.push_back(job);
    l.unlock();
    cv_.notify_one();
    return true;
  }

  int started() {
    std::lock_guard<std::mutex> l(mu_);
    return threads_;
  }

  bool Withdraw(HelperJob* job) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = std::find(queue_.begin(), queue_.end(), job);
    if (it == queue_.end()) return false;
    queue_.erase(it);
    ++idle_;
    return true;
  }

 private:
  void Loop() {
    SetCurrentThreadName("vigil-helper");
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      cv_.wait(l, [this] { return !queue_.empty(); });
      HelperJob* job = queue_.front();
      queue_.pop_front();
      l.unlock();
      job->Run();  // the caller waits for it: `job` is valid until then
      l.lock();
      ++idle_;
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<HelperJob*> queue_;
  int threads_ = 0;
  int idle_ = 0;  // threads neither running nor reserved for a queued job
};

HelperPool* Pool() {
  // Never destroyed: its threads may be waiting when the process exits.
  static HelperPool* const pool = new HelperPool();
  return pool;
}

}  // namespace

void HelperJob::Run() {
  fn_();
  // Notified under the lock: Finish() cannot return (and the job go away)
  // before this thread has let go of it.
  std::lock_guard<std::mutex> l(mu_);
  done_ = true;
  cv_.notify_one();
}

void HelperJob::Finish() {
  if (Withdraw(this)) return;
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [this] { return done_; });
}

bool StartOnHelper(HelperJob* job) {
  if (std::thread::hardware_concurrency() < 2) return false;
  return Pool()->Start(job);
}

bool Withdraw(HelperJob* job) { return Pool()->Withdraw(job); }

int HelperThreadsStarted() { return Pool()->started(); }

}  // namespace vigil::parallel_internal
