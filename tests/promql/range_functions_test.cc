// Range functions called directly on hand-made windows: the per-series
// state RangeSeries hands them (counter-reset index, extrapolation memo)
// must never change an answer.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "promql/internal/eval.h"

namespace vigil::promql::internal {
namespace {

bool WindowSameBits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

struct Window {
  std::vector<int64_t> t;
  std::vector<double> v;
  int64_t range_start, range_end;
};

// fn over `w`, with a fresh reset index and the given memo (or none).
double Call(RangeFn fn, const Window& w, ExtrapolationMemo* memo) {
  std::vector<uint32_t> resets;
  for (size_t j = 1; j < w.v.size(); ++j) {
    if (w.v[j] < w.v[j - 1]) resets.push_back(static_cast<uint32_t>(j));
  }
  RangeCall c{w.t.data(),
              w.v.data(),
              w.t.size(),
              w.range_end,
              w.range_start,
              w.range_end,
              double(w.range_end - w.range_start) / 1000,
              nullptr,
              nullptr,
              nullptr,
              nullptr,
              resets.data(),
              resets.data() + resets.size(),
              0,
              memo};
  double out = -1;
  REQUIRE(fn(c, &out));
  return out;
}

TEST_CASE("The extrapolation memo is keyed by the whole window shape",
          "[range]") {
  // Same offsets of first and last sample, different sample counts; then
  // different offsets; a counter reset; a window whose zero point moves
  // the start. Each through one memo, in turn, must equal a fresh call.
  const std::vector<Window> windows = {
      // 20 s before the first sample: beyond 1.1x the average gap of 15 s
      // (so extrapolated by half a gap), within 1.1x of 22.5 s (so not).
      {{15000, 30000, 45000, 60000}, {10, 20, 30, 40}, -5000, 60000},
      {{15000, 45000, 60000}, {10, 30, 40}, -5000, 60000},
      {{15000, 30000, 45000, 60000}, {10, 20, 30, 40}, -5000, 60000},
      {{14000, 30000, 45000, 59000}, {10, 20, 30, 40}, 0, 60000},
      {{15000, 30000, 45000, 60000}, {10, 20, 3, 40}, 0, 60000},
      {{15000, 30000, 45000, 60000}, {0.5, 20, 30, 40}, 0, 60000},
      {{15000, 30000, 45000, 60000}, {100, 101, 102, 103}, 0, 60000},
  };
  for (const char* name : {"rate", "increase", "delta"}) {
    INFO(name);
    RangeFn fn = LookupRangeFunction(name);
    REQUIRE(fn != nullptr);
    ExtrapolationMemo memo;
    for (size_t i = 0; i < windows.size(); ++i) {
      INFO("window " << i);
      double want = Call(fn, windows[i], nullptr);
      double got = Call(fn, windows[i], &memo);
      REQUIRE(WindowSameBits(got, want));
    }
  }
}

}  // namespace
}  // namespace vigil::promql::internal
