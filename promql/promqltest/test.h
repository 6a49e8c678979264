// -----------------------------------------------------------------------------
// File: test.h
// -----------------------------------------------------------------------------
//
// Runs Prometheus's PromQL test-script language (`*.test` files: load,
// clear, eval instant|range with expectations) against the Vigil engine,
// including the upstream runner's extra checks: every instant eval is
// re-run with `@`-pinned selectors at other evaluation times, and as a
// range query around its time. See /work/shared/conformance/promql/FORMAT.md.
//
// Evals that need something the engine does not implement (native
// histograms, experimental functions or syntax, start timestamps) are
// skipped with the reason; all others are "core" and count as passed or
// failed.
#ifndef VIGIL_PROMQL_PROMQLTEST_TEST_H_
#define VIGIL_PROMQL_PROMQLTEST_TEST_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "promql/engine.h"

namespace vigil::promql::promqltest {

struct EvalOutcome {
  int line = 0;      // 1-based line of the eval command
  std::string expr;  // the query
  enum Kind { kPassed, kFailed, kSkipped } kind = kPassed;
  std::string reason;  // why it failed / was skipped
  // Uses an experimental function the engine implements; run only with
  // RunOptions::run_experimental, and never counted as core.
  bool experimental = false;
};

struct FileResult {
  std::string name;
  std::vector<EvalOutcome> evals;
  int passed() const { return Count(EvalOutcome::kPassed, false); }
  int failed() const { return Count(EvalOutcome::kFailed, false); }
  int skipped() const { return Count(EvalOutcome::kSkipped, false); }
  int experimental_passed() const { return Count(EvalOutcome::kPassed, true); }
  int experimental_failed() const { return Count(EvalOutcome::kFailed, true); }

 private:
  int Count(EvalOutcome::Kind k, bool experimental) const {
    int n = 0;
    for (const auto& e : evals)
      n += e.kind == k && e.experimental == experimental;
    return n;
  }
};

struct RunOptions {
  RunOptions() {
    engine.max_samples = 10000;
    engine.enable_delayed_name_removal = true;
  }
  // Engine settings; the runner forces lookback 5 m and a 1 m default
  // subquery step as the upstream test engine does, whose sample limit
  // (10000) and delayed __name__ removal (on) are also the defaults here.
  EngineOptions engine;
  // Also run the @-pinned variants and the range-mode cross-check.
  // Default: true
  bool extra_checks = true;
  // Run evals that use experimental functions the engine implements
  // (sort_by_label, mad_over_time, ...) instead of skipping them; they are
  // reported apart from the core counts.
  // Default: false
  bool run_experimental = false;
};

// Parses and runs one script. InvalidArgument ("name:line: ...") if the
// script does not parse; failed evals are reported in the result.
absl::StatusOr<FileResult> RunScript(std::string_view script,
                                     const std::string& name,
                                     const RunOptions& options);
// Reads `path` and runs it.
absl::StatusOr<FileResult> RunFile(const std::string& path,
                                   const RunOptions& options);

}  // namespace vigil::promql::promqltest

#endif  // VIGIL_PROMQL_PROMQLTEST_TEST_H_
