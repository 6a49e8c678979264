// -----------------------------------------------------------------------------
// File: epoch.h
// -----------------------------------------------------------------------------
//
// Deferred freeing for memory that lock-free readers may still hold. The
// head hands out raw MemSeries pointers (queriers, appender batches) and
// symbol views without a lock; when it forgets a series (head GC), the
// memory may only go once every reader that could have found it is done.
//
// A reader pins the current epoch for as long as it uses such pointers
// (Pin() returns a guard). Retire(f) queues f on the current epoch and
// starts a new one; f runs once that epoch and every older one are
// unpinned, so no reader that started before the retirement still runs.
// Readers that start after the retirement cannot find what was retired
// (the caller unpublished it first).
//
// Epochs form a chain: each holds the next one alive, so an epoch's
// retired work waits for every older epoch too. Thread-safe.
#ifndef VIGIL_STORAGE_INTERNAL_EPOCH_H_
#define VIGIL_STORAGE_INTERNAL_EPOCH_H_

#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace vigil::storage::internal {

class EpochManager {
  struct Epoch;

 public:
  // Keeps an epoch pinned while alive. Movable; empty when default-made.
  class Guard {
   public:
    Guard() = default;
    bool pinned() const { return e_ != nullptr; }
    void Release() { e_.reset(); }

   private:
    friend class EpochManager;
    explicit Guard(std::shared_ptr<Epoch> e) : e_(std::move(e)) {}
    std::shared_ptr<Epoch> e_;
  };

  EpochManager() : current_(std::make_shared<Epoch>()) {}
  // Runs what is still retired (no reader may be left by then).
  ~EpochManager() = default;

  Guard Pin() {
    std::lock_guard<std::mutex> l(mu_);
    return Guard(current_);
  }

  // Queues `f` to run after every guard pinned before this call is
  // released (possibly at once, on this thread, when none is).
  void Retire(std::function<void()> f) {
    std::shared_ptr<Epoch> old;
    {
      std::lock_guard<std::mutex> l(mu_);
      old = std::move(current_);
      old->retired.push_back(std::move(f));
      current_ = std::make_shared<Epoch>();
      old->next = current_;
    }
    // Dropping our reference may run `old`'s work now (no reader left).
    Unchain(std::move(old));
  }

 private:
  struct Epoch {
    std::vector<std::function<void()>> retired;
    std::shared_ptr<Epoch> next;
    ~Epoch() {
      for (auto& f : retired) f();
      // A long chain of idle epochs is released iteratively by Unchain,
      // not by recursive destructors.
      Unchain(std::move(next));
    }
  };

  // Drops `e`; while that was the last reference, moves on to its
  // successor instead of letting the destructors recurse.
  static void Unchain(std::shared_ptr<Epoch> e) {
    while (e && e.use_count() == 1) {
      std::shared_ptr<Epoch> next = std::move(e->next);
      e.reset();  // runs its retired work
      e = std::move(next);
    }
  }

  std::mutex mu_;
  std::shared_ptr<Epoch> current_;
};

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_EPOCH_H_
