// -----------------------------------------------------------------------------
// File: spinlock.h
// -----------------------------------------------------------------------------
//
// A one-byte lock for per-series state. Critical sections under it are a
// few hundred nanoseconds (append one sample, copy one chunk), so spinning
// with a yield beats a futex; and vigil::Mutex, besides being 8 bytes, lets a
// debug-built Abseil register every mutex in its deadlock graph, which cost
// ~650 bytes per series in the head-memory benchmark.
#ifndef VIGIL_STORAGE_INTERNAL_SPINLOCK_H_
#define VIGIL_STORAGE_INTERNAL_SPINLOCK_H_

#include <atomic>
#include <thread>

#include "absl/base/thread_annotations.h"

namespace vigil::storage::internal {

class ABSL_LOCKABLE SpinLock {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    while (flag_.exchange(true, std::memory_order_acquire)) {
      while (flag_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    flag_.store(false, std::memory_order_release);
  }

 private:
  std::atomic<bool> flag_{false};
};

class ABSL_SCOPED_LOCKABLE SpinLockHolder {
 public:
  explicit SpinLockHolder(SpinLock* l) ABSL_EXCLUSIVE_LOCK_FUNCTION(l) : l_(l) {
    l_->Lock();
  }
  ~SpinLockHolder() ABSL_UNLOCK_FUNCTION() { l_->Unlock(); }
  SpinLockHolder(const SpinLockHolder&) = delete;
  SpinLockHolder& operator=(const SpinLockHolder&) = delete;

 private:
  SpinLock* l_;
};

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_SPINLOCK_H_
