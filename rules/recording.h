// -----------------------------------------------------------------------------
// File: recording.h
// -----------------------------------------------------------------------------
//
// A recording rule (Prometheus's rules/recording.go): evaluates its
// expression and renames the result to the record name, adding the rule's
// labels. Appending the result is the Group's job.
//
// Thread-compatible: Eval is called by one group thread at a time.
#ifndef VIGIL_RULES_RECORDING_H_
#define VIGIL_RULES_RECORDING_H_

#include "absl/status/statusor.h"
#include "promql/value.h"
#include "rules/rule_file.h"
#include "rules/seams.h"

namespace vigil::rules {

class RecordingRule {
 public:
  // REQUIRES: def.kind == kRecording and def.expr non-null.
  explicit RecordingRule(Rule def);

  // Queries at t - ctx.query_offset_ms; every sample gets __name__ = the
  // record name and the rule labels (overriding). Errors: the query's error;
  // InvalidArgument "vector contains metrics with the same labelset after
  // applying rule labels"; ResourceExhausted "exceeded limit of N with M
  // series" when ctx.limit > 0 and the result has more series.
  absl::StatusOr<promql::Vector> Eval(Timestamp t,
                                      const EvalContext& ctx) const;

  const Rule& def() const { return def_; }

 private:
  Rule def_;
  std::string text_;  // canonical expression text
};

}  // namespace vigil::rules

#endif  // VIGIL_RULES_RECORDING_H_
