// -----------------------------------------------------------------------------
// File: core/sync.h
// -----------------------------------------------------------------------------
//
// vigil::Mutex, MutexLock, ReaderMutexLock, CondVar and Condition: the locks
// every Vigil component uses. In a normal build they are Abseil's
// (absl::Mutex and friends, with the same API). Under ThreadSanitizer
// (-fsanitize=thread) they are small classes of the same API over the
// standard library's std::shared_mutex and std::condition_variable_any:
// Debian's Abseil is not built with TSAN, so the happens-before edges of an
// absl::Mutex (an uninstrumented futex and atomics inside libabsl) are
// invisible to TSAN, which then reports every guarded access as a race.
// std::shared_mutex is pthread_rwlock, which TSAN intercepts. See
// docs/reliability.md ("ThreadSanitizer").
//
// Only the subset of absl::Mutex that Vigil uses exists in the TSAN build:
// Lock/Unlock, ReaderLock/ReaderUnlock, Await/AwaitWithTimeout, the
// Assert*Held no-ops, CondVar Wait/WaitWithTimeout/Signal/SignalAll, and
// Condition over a bool*, a member function, or a function and its argument.
#ifndef VIGIL_CORE_SYNC_H_
#define VIGIL_CORE_SYNC_H_

#if defined(__SANITIZE_THREAD__)
#define VIGIL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define VIGIL_TSAN 1
#endif
#endif

#ifndef VIGIL_TSAN

#include "absl/synchronization/mutex.h"

namespace vigil {
using Mutex = absl::Mutex;
using MutexLock = absl::MutexLock;
using ReaderMutexLock = absl::ReaderMutexLock;
using CondVar = absl::CondVar;
using Condition = absl::Condition;
}  // namespace vigil

#else  // VIGIL_TSAN

#include <chrono>
#include <condition_variable>
#include <functional>
#include <shared_mutex>
#include <type_traits>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace vigil {

class Condition {
 public:
  explicit Condition(const bool* flag) : eval_([flag] { return *flag; }) {}
  template <typename T>
  Condition(bool (*fn)(T*), T* arg) : eval_([fn, arg] { return fn(arg); }) {}
  template <typename T>
  Condition(T* obj, bool (T::*method)())
      : eval_([obj, method] { return (obj->*method)(); }) {}
  template <typename T>
  Condition(const T* obj, bool (T::*method)() const)
      : eval_([obj, method] { return (obj->*method)(); }) {}
  // A pointer to a callable (a lambda), as absl::Condition takes it.
  template <typename T, typename = std::enable_if_t<
                            std::is_invocable_r_v<bool, const T&> > >
  explicit Condition(const T* fn) : eval_([fn] { return (*fn)(); }) {}
  bool Eval() const { return eval_(); }

 private:
  std::function<bool()> eval_;
};

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  // Wakes every Await()er: the state they wait on may have changed.
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    changed_.notify_all();
    mu_.unlock();
  }
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() { mu_.lock_shared(); }
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock_shared(); }
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}
  void AssertReaderHeld() const ABSL_ASSERT_SHARED_LOCK() {}

  // REQUIRES: held exclusively.
  void Await(const Condition& cond) {
    while (!cond.Eval()) changed_.wait(mu_);
  }
  // True when `cond` holds on return, false on timeout.
  bool AwaitWithTimeout(const Condition& cond, absl::Duration timeout) {
    auto deadline =
        std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
    while (!cond.Eval()) {
      if (changed_.wait_until(mu_, deadline) == std::cv_status::timeout) {
        return cond.Eval();
      }
    }
    return true;
  }

 private:
  friend class CondVar;
  std::shared_mutex mu_;
  std::condition_variable_any changed_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

class ABSL_SCOPED_LOCKABLE ReaderMutexLock {
 public:
  explicit ReaderMutexLock(Mutex* mu) ABSL_SHARED_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->ReaderLock();
  }
  ~ReaderMutexLock() ABSL_UNLOCK_FUNCTION() { mu_->ReaderUnlock(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  Mutex* const mu_;
};

class CondVar {
 public:
  // REQUIRES: `mu` held exclusively.
  void Wait(Mutex* mu) {
    mu->changed_.notify_all();
    cv_.wait(mu->mu_);
  }
  // True on timeout (as absl::CondVar).
  bool WaitWithTimeout(Mutex* mu, absl::Duration timeout) {
    mu->changed_.notify_all();
    return cv_.wait_for(mu->mu_, absl::ToChronoNanoseconds(timeout)) ==
           std::cv_status::timeout;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable_any cv_;
};

}  // namespace vigil

#endif  // VIGIL_TSAN

#endif  // VIGIL_CORE_SYNC_H_
