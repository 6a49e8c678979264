// Internal to rules/: comparison and printing of alerts and samples exactly
// as cmd/promtool/unittest.go does (labelsAndAnnotations.String(),
// parsedSample.String(), indentLines).
#ifndef VIGIL_SERVER_CLI_UNITTEST_FORMAT_H_
#define VIGIL_SERVER_CLI_UNITTEST_FORMAT_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"

namespace vigil::cli {

struct LabelsAndAnnotations {
  Labels labels;
  Labels annotations;
};

struct ParsedSample {
  Labels labels;
  double value = 0;
};

// Prefixes every line but the first with `indent`.
std::string IndentLines(std::string_view lines, std::string_view indent);

// Sorts by labels, then annotations.
void SortAlerts(std::vector<LabelsAndAnnotations>* v);
// Sorts by labels (the sort promtool uses is not stable; ours is).
void SortSamples(std::vector<ParsedSample>* v);

// "[]" or "[\n0:\n  Labels:{...}\n  Annotations:{...},\n1:...\n]".
std::string AlertsString(const std::vector<LabelsAndAnnotations>& v);
// "nil" or "{__name__=\"x\"} 1E+00, ...".
std::string SamplesString(const std::vector<ParsedSample>& v);

// Equality as reflect.DeepEqual (NaN never equal) or, when `fuzzy`, floats
// also equal one ULP apart.
bool AlertsEqual(const std::vector<LabelsAndAnnotations>& a,
                 const std::vector<LabelsAndAnnotations>& b);
bool SamplesEqual(const std::vector<ParsedSample>& a,
                  const std::vector<ParsedSample>& b, bool fuzzy);

// Go's strconv.FormatFloat(v, 'E', -1, 64): "1E+00", "1.5E-07", "+Inf".
std::string FormatFloatE(double v);

}  // namespace vigil::cli

#endif  // VIGIL_SERVER_CLI_UNITTEST_FORMAT_H_
