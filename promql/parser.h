// -----------------------------------------------------------------------------
// File: parser.h
// -----------------------------------------------------------------------------
//
// The PromQL parser: text -> promql/ast.h tree, with Prometheus 3's grammar,
// type checking and error messages. Thread-safe (no shared mutable state).
//
// Errors are InvalidArgument with Prometheus's text, position first:
//   "1:14: parse error: unexpected <op:+>"
//   "1:6: parse error: expected type range vector in call to function
//    \"rate\", got instant vector"
// Only the first error is reported (Prometheus also prints only the first).
//
// Not supported (always an error, with Prometheus's wording for a disabled
// feature): duration arithmetic in ranges/offsets (`[5m+1m]`, `step()`),
// `anchored`/`smoothed`, and `fill()` binary modifiers.
#ifndef VIGIL_PROMQL_PARSER_H_
#define VIGIL_PROMQL_PARSER_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/matcher.h"
#include "promql/ast.h"

namespace vigil::promql {

struct ParseOptions {
  // Accept the experimental functions and aggregations (sort_by_label,
  // mad_over_time, limitk, ...). When false they fail as in Prometheus:
  // `function "x" is not enabled`.
  // Default: true
  bool enable_experimental_functions = true;
};

// Parses and type-checks a PromQL expression. The caller owns the tree;
// it does not refer to `input`, which may be freed afterwards.
// InvalidArgument (see above) on any syntax or type error.
absl::StatusOr<std::unique_ptr<Expr>> ParseExpr(std::string_view input,
                                                const ParseOptions& options);
absl::StatusOr<std::unique_ptr<Expr>> ParseExpr(std::string_view input);

// Parses a bare series selector (`foo{a="b"}`, `{__name__=~"x.*"}`) as used
// by the `match[]` API parameter; returns its matchers (the metric name is
// the last, as __name__="foo"). Like Prometheus this does not reject
// selectors whose matchers all match the empty string: callers check that.
// InvalidArgument on a syntax error or anything that is not a selector.
absl::StatusOr<std::vector<Matcher>> ParseMetricSelector(
    std::string_view input);

}  // namespace vigil::promql

#endif  // VIGIL_PROMQL_PARSER_H_
