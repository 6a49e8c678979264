// Internal to promqltest: the parsed form of a test script.
#ifndef VIGIL_PROMQL_PROMQLTEST_SCRIPT_H_
#define VIGIL_PROMQL_PROMQLTEST_SCRIPT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/labels.h"

namespace vigil::promql::promqltest {

// One slot of a series' value list.
struct Slot {
  enum Kind { kFloat, kStale, kGap, kHistogram } kind = kFloat;
  double v = 0;
};

struct SeriesLine {
  Labels labels;
  std::vector<Slot> slots;
  bool start_timestamps = false;  // preceded by an `@st` line
};

struct LoadCmd {
  int64_t step = 0;
  bool nhcb = false;
  std::vector<SeriesLine> series;
};

struct AnnoExpect {
  enum Kind { kAny, kMsg, kRegex } kind = kAny;
  std::string text;
};

struct EvalCmd {
  int line = 0;
  bool range = false;
  int64_t at = 0;                        // instant
  int64_t start = 0, end = 0, step = 0;  // range
  std::string expr;
  bool fail = false;
  AnnoExpect fail_expect;
  bool ordered = false;
  std::vector<AnnoExpect> warn, info;
  bool no_warn = false, no_info = false;
  bool range_vector = false;
  int64_t rv_start = 0, rv_end = 0, rv_step = 0;
  std::optional<std::string> str;
  std::optional<double> scalar;
  std::vector<SeriesLine> expected;
  bool expects_histogram = false;
};

struct Command {
  enum Kind { kLoad, kClear, kEval } kind;
  LoadCmd load;
  EvalCmd eval;
};

// Parses a whole script (FORMAT.md §1-5). InvalidArgument "name:line: why".
absl::StatusOr<std::vector<Command>> ParseScript(std::string_view text,
                                                 const std::string& name);

// util/almost.Equal with the staleness-marker rule (FORMAT.md §6.2).
bool AlmostEqual(double expected, double actual);

}  // namespace vigil::promql::promqltest

#endif  // VIGIL_PROMQL_PROMQLTEST_SCRIPT_H_
