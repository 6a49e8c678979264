// -----------------------------------------------------------------------------
// File: calibrate/output.h
// -----------------------------------------------------------------------------
//
// What `vigil calibrate` prints and writes: the table (text or JSON), the
// rule file with the proposed thresholds and `for` durations, and the
// threshold ledger entry (the source article's 阈值台账; format in
// docs/calibration.md).
#ifndef VIGIL_SERVER_CALIBRATE_OUTPUT_H_
#define VIGIL_SERVER_CALIBRATE_OUTPUT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "rules/rule_file.h"
#include "server/calibrate/calibrate.h"

namespace vigil::calibrate {

std::string FormatTable(const Calibration& c);
std::string FormatJson(const Calibration& c);

// `groups` (as parsed) with every proposed threshold and `for` put in, as
// rule-file YAML (comments of the original are not kept).
std::string ProposedRuleFile(const std::vector<rules::RuleGroup>& groups,
                             const Calibration& c);

struct LedgerEntry {
  std::string who;
  int64_t when_ms = 0;
  std::string rule_file;  // what was calibrated
  std::string written;    // the proposed file
};
// One YAML sequence item (appending it keeps the file a YAML list).
std::string LedgerYaml(const Calibration& c, const LedgerEntry& e);

}  // namespace vigil::calibrate

#endif  // VIGIL_SERVER_CALIBRATE_OUTPUT_H_
