// -----------------------------------------------------------------------------
// File: testutil/wait.h
// -----------------------------------------------------------------------------
//
// Waiting for something another thread or process does: poll a predicate
// until it holds or a deadline passes. Tests use it instead of a fixed sleep
// or an immediate check, so a loaded machine (sanitizers, CI builds beside
// the tests) makes them slower, not flaky, and a condition that never comes
// still fails.
#ifndef VIGIL_TESTS_TESTUTIL_WAIT_H_
#define VIGIL_TESTS_TESTUTIL_WAIT_H_

#include <chrono>
#include <thread>

namespace vigil::testutil {

// True once `pred()` holds, checked every `poll_ms`; false if it still does
// not after `timeout_ms` (checked once more at the deadline).
template <typename Pred>
bool WaitUntil(Pred&& pred, int64_t timeout_ms, int64_t poll_ms = 10) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
  return true;
}

}  // namespace vigil::testutil

#endif  // VIGIL_TESTS_TESTUTIL_WAIT_H_
