// -----------------------------------------------------------------------------
// File: unittest.h
// -----------------------------------------------------------------------------
//
// Rule unit tests in promtool's format (`promtool test rules`,
// cmd/promtool/unittest.go): input series in expanding notation, the rule
// files evaluated from t=0 at every evaluation_interval up to the largest
// eval_time, alerts compared at each alert_rule_test's eval_time and PromQL
// expressions at theirs. Output and exit codes are promtool 2.42's:
//
//   Unit Testing:  tests/alerts_test.yml        (stdout)
//     SUCCESS                                   (stdout)
//
// or on failure "  FAILED:" and each error (stderr), one blank stdout line
// per error, then a blank line.
//
// Differences from promtool 2.42 (both follow later Prometheus releases): a
// test group without `interval` uses evaluation_interval (2.42 loads every
// sample at t=0), and `fuzzy_compare` is accepted (floats compare equal when
// one ULP apart).
//
// Thread-compatible: runs on the calling thread, no shared state.
#ifndef VIGIL_SERVER_CLI_UNITTEST_H_
#define VIGIL_SERVER_CLI_UNITTEST_H_

#include <string>
#include <vector>

namespace vigil::cli {

// What running test files printed, and the exit code promtool would give.
struct UnitTestReport {
  std::string out;    // what promtool writes to stdout
  std::string err;    // ... and to stderr
  int exit_code = 0;  // 0 all passed, 1 any failure
};

// Runs every file in order (paths as given; rule files are relative to
// their test file's directory).
UnitTestReport RunRuleUnitTests(const std::vector<std::string>& files);

// The failures of one test file, each formatted as promtool prints it
// (e.g. "    alertname: A, time: 10m, \n        exp:[...], \n        got:[]");
// empty when it passes. Warnings (unmatched rule_files patterns) are added
// to `warnings`, one line each.
std::vector<std::string> RunRuleUnitTestFile(const std::string& file,
                                             std::string* warnings);

}  // namespace vigil::cli

#endif  // VIGIL_SERVER_CLI_UNITTEST_H_
