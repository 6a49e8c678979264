// -----------------------------------------------------------------------------
// File: clock.h
// -----------------------------------------------------------------------------
//
// Injected time source, so rule and scrape schedules can be tested with a
// fake clock. Implementations must be thread-safe.
#ifndef VIGIL_CORE_CLOCK_H_
#define VIGIL_CORE_CLOCK_H_

#include "core/time.h"

namespace vigil {

class Clock {
 public:
  virtual ~Clock() = default;
  // Current wall-clock time in milliseconds since the epoch.
  virtual Timestamp NowMs() const = 0;
  // Blocks the calling thread for `ms` milliseconds (a fake clock may
  // instead advance itself).
  virtual void SleepMs(int64_t ms) = 0;
  // The process-wide real clock. Never null.
  static Clock* Real();
};

}  // namespace vigil

#endif  // VIGIL_CORE_CLOCK_H_
