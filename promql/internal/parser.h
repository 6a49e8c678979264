// -----------------------------------------------------------------------------
// File: parser.h (internal)
// -----------------------------------------------------------------------------
//
// Hand-written recursive-descent (precedence climbing) PromQL parser that
// reproduces the accepted language, AST and first error of Prometheus's
// yacc grammar (promql/parser/generated_parser.y). Parsing stops at the first
// error; type checking (Check) runs only on a syntactically valid tree, as
// Prometheus's checkAST does. One Parser per input; not thread-safe.
#ifndef VIGIL_PROMQL_INTERNAL_PARSER_H_
#define VIGIL_PROMQL_INTERNAL_PARSER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "promql/ast.h"
#include "promql/internal/lexer.h"
#include "promql/parser.h"

namespace vigil::promql::internal {

// Prometheus's function table, sorted by name (functions.cc); behind
// promql::LookupFunction / AllFunctions in promql/ast.cc.
const std::vector<Function>& FunctionTable();

// Appends Prometheus's canonical text of `e` (printer.cc); behind
// promql::Format in promql/ast.cc.
void WriteExpr(std::string* out, const Expr& e);
// Pieces of WriteExpr for the pretty printer (pretty.cc).
void WriteAggregateHead(std::string* out, const AggregateExpr& a);
void WriteBinaryModifiers(std::string* out, const BinaryExpr& b);
void WriteSubquerySuffix(std::string* out, const SubqueryExpr& sq);

struct ParseError {
  PosRange pos;
  std::string msg;
};

// Formats as Prometheus's ParseErr: "<line:col>: parse error: <msg>".
absl::Status MakeParseError(std::string_view query, const ParseError& e);

class Parser {
 public:
  Parser(std::string_view input, const ParseOptions& options)
      : in_(input), lex_(input), opts_(options) {}

  // START_EXPRESSION: a full expression, type-checked.
  ExprPtr ParseExpression();
  // START_METRIC_SELECTOR: one vector selector, not type-checked.
  ExprPtr ParseSelectorOnly();

  const std::optional<ParseError>& error() const { return err_; }

 private:
  // Tokens (two-token lookahead, lexed lazily).
  const Token& Peek(int n = 0);
  Token Next();
  bool Fail(PosRange pos, std::string msg);
  // Prometheus's parser.unexpected(): "unexpected <tok>[ in ctx][, expected
  // x]".
  void Unexpected(std::string_view context, std::string_view expected);
  bool failed() const { return err_.has_value(); }
  // Fails (Vigil-specific message) if the tree would get deeper than the
  // recursive passes (check, print, destruction) can handle on the stack.
  bool CheckDepth(int extra);

  // Expressions (parser.cc).
  ExprPtr ParseBinary(int min_prec);
  ExprPtr ParseUnary();
  ExprPtr ParsePrimary();
  ExprPtr ParsePostfix(ExprPtr e);
  ExprPtr ParseAggregate();
  ExprPtr ParseCall();
  bool ParseCallArgs(std::vector<ExprPtr>* args);
  bool ParseBinaryModifiers(BinaryExpr* b, bool* fill);
  bool ParseGroupingLabels(std::vector<std::string>* out);

  // Selectors, ranges and modifiers (parser_selectors.cc).
  ExprPtr ParseVectorSelector();
  bool ParseLabelMatchers(std::vector<Matcher>* out);
  bool ParseMatcher(std::vector<Matcher>* out);
  ExprPtr ParseRangeOrSubquery(ExprPtr e);
  ExprPtr ParseOffset(ExprPtr e);
  ExprPtr ParseAt(ExprPtr e);
  // A literal duration inside [..] (positive) or after `offset`; seconds.
  bool ParseDurationLiteral(bool in_brackets, std::string_view ctx,
                            std::string_view expected, double* secs,
                            PosRange* pos);
  bool ExperimentalDurationStart();
  std::unique_ptr<NumberLiteral> ParseNumberToken();

  // Type checking (check.cc). Returns the node's type.
  ValueType Check(Expr* e);
  void ExpectType(Expr* e, ValueType want, std::string_view context);
  void CheckBinary(BinaryExpr* b);
  void CheckCall(Call* c);
  PosRange OperatorRange(const BinaryExpr& b) const;

  std::string_view in_;
  Lexer lex_;
  ParseOptions opts_;
  Token la_[2];
  int la_count_ = 0;
  int last_closing_ = 0;  // end of the last consumed closing token/number
  int agg_depth_ = 0;     // > 0 while inside an aggregation's modifiers/body
  int depth_ = 0;         // recursion depth, bounded by kMaxDepth
  std::optional<ParseError> err_;
};

}  // namespace vigil::promql::internal

#endif  // VIGIL_PROMQL_INTERNAL_PARSER_H_
