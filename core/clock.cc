#include "core/clock.h"

#include <chrono>
#include <thread>

namespace vigil {

namespace {
class RealClock : public Clock {
 public:
  Timestamp NowMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  void SleepMs(int64_t ms) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
};
}  // namespace

Clock* Clock::Real() {
  static RealClock* clock = new RealClock();
  return clock;
}

}  // namespace vigil
