// Internal to rules/: the decoded form of a promtool rule unit-test file
// (cmd/promtool/unittest.go's unitTestFile), read with yaml.v2's strict
// decoding and its error texts ("yaml: unmarshal errors:\n  line 2: field
// foo not found in type main.unitTestFile").
#ifndef VIGIL_SERVER_CLI_UNITTEST_FILE_H_
#define VIGIL_SERVER_CLI_UNITTEST_FILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/labels.h"

namespace vigil::cli {

struct UtSeries {
  std::string series;  // `series:` in PromQL series notation
  std::string values;  // `values:` in expanding notation ("0+10x100")
};

struct UtAlert {
  std::map<std::string, std::string> exp_labels;
  std::map<std::string, std::string> exp_annotations;
};

struct UtAlertTest {
  int64_t eval_time_ms = 0;
  std::string alertname;
  std::vector<UtAlert> exp_alerts;
};

struct UtSample {
  std::string labels;
  double value = 0;
};

struct UtExprTest {
  std::string expr;
  int64_t eval_time_ms = 0;
  std::vector<UtSample> exp_samples;
};

struct UtTestGroup {
  int64_t interval_ms = 0;  // 0 = the file's evaluation_interval
  std::vector<UtSeries> input_series;
  std::vector<UtAlertTest> alert_rule_tests;
  std::vector<UtExprTest> expr_tests;
  Labels external_labels;
  std::string external_url;
  std::string name;
};

struct UtFile {
  std::vector<std::string> rule_files;
  int64_t evaluation_interval_ms = 0;  // 0 = 1m
  std::vector<std::string> group_eval_order;
  std::vector<UtTestGroup> tests;
  bool fuzzy_compare = false;
};

// InvalidArgument with go-yaml's text on syntax or type errors.
absl::StatusOr<UtFile> DecodeUnitTestFile(std::string_view yaml);

}  // namespace vigil::cli

#endif  // VIGIL_SERVER_CLI_UNITTEST_FILE_H_
