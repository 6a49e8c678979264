#include "promql/parser.h"

#include "promql/internal/parser.h"

namespace vigil::promql {

absl::StatusOr<std::unique_ptr<Expr>> ParseExpr(std::string_view input,
                                                const ParseOptions& options) {
  internal::Parser p(input, options);
  ExprPtr e = p.ParseExpression();
  if (p.error()) return internal::MakeParseError(input, *p.error());
  return e;
}

absl::StatusOr<std::unique_ptr<Expr>> ParseExpr(std::string_view input) {
  return ParseExpr(input, ParseOptions{});
}

absl::StatusOr<std::vector<Matcher>> ParseMetricSelector(
    std::string_view input) {
  internal::Parser p(input, ParseOptions{});
  ExprPtr e = p.ParseSelectorOnly();
  if (p.error()) return internal::MakeParseError(input, *p.error());
  return std::move(e->As<VectorSelector>().matchers);
}

}  // namespace vigil::promql
