// -----------------------------------------------------------------------------
// File: ast.h
// -----------------------------------------------------------------------------
//
// The PromQL abstract syntax tree produced by promql/parser.h, with the same
// node kinds and semantics as Prometheus's promql/parser/ast.go (Prometheus
// 3.x). Nodes are plain structs owned through std::unique_ptr<Expr>; walk
// them with `switch (e.kind)` and `As<T>()`. A tree is immutable once
// returned by the parser and may be read concurrently. It owns all its
// data (names, strings, matchers): it does not point into the query text,
// which may be freed after parsing; the only pointers it holds are
// Call::func entries of the function table, which live forever.
//
// Positions (`PosRange`) are byte offsets into the query text, half open,
// as Prometheus's posrange.PositionRange; FormatPosition() turns one into
// the "line:col" Prometheus prints in errors and annotations.
//
// Example:
//   auto e = ParseExpr("sum by (job) (rate(x[5m]))");
//   if (!e.ok()) return e.status();  // "1:..: parse error: ..."
//   const auto& agg = (*e)->As<AggregateExpr>();
#ifndef VIGIL_PROMQL_AST_H_
#define VIGIL_PROMQL_AST_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/matcher.h"

namespace vigil::promql {

// The four PromQL value types (plus kNone for "no type").
enum class ValueType { kNone, kScalar, kString, kVector, kMatrix };

// Prometheus's DocumentedType: "scalar", "string", "instant vector",
// "range vector", "none".
std::string_view DocumentedTypeName(ValueType t);
// Prometheus's raw ValueType string: "scalar", "string", "vector", "matrix".
std::string_view ValueTypeName(ValueType t);

struct PosRange {
  int start = 0;  // zero-based byte offset, inclusive
  int end = 0;    // exclusive
};

// "line:col" (both 1-based) of `pos` in `query`, as Prometheus prints it;
// "unknown position" for an empty query, "invalid position" if out of range.
std::string FormatPosition(std::string_view query, int pos);

// Binary operators. The order is not meaningful.
enum class BinOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kPow,
  kAtan2,
  kEql,
  kNeq,
  kGtr,
  kLss,
  kGte,
  kLte,  // comparisons
  kAnd,
  kOr,
  kUnless,  // set operators
  kTrimUpper,
  kTrimLower,  // native-histogram "</" and ">/"
};
std::string_view BinOpString(BinOp op);  // "+", "==", "and", "atan2", ...
bool IsComparison(BinOp op);
bool IsSetOperator(BinOp op);

enum class AggOp {
  kSum,
  kAvg,
  kCount,
  kMin,
  kMax,
  kGroup,
  kStddev,
  kStdvar,
  kTopK,
  kBottomK,
  kQuantile,
  kCountValues,
  kLimitK,
  kLimitRatio,  // experimental in Prometheus
};
std::string_view AggOpString(AggOp op);  // "sum", "count_values", ...
// True for topk, bottomk, quantile, count_values, limitk, limit_ratio.
bool AggOpHasParam(AggOp op);

enum class UnaryOp { kPlus, kMinus };

// Where an `@` modifier pins evaluation.
enum class AtKind { kNone, kTimestamp, kStart, kEnd };

// One entry of the function table (promql/internal/functions.cc; the
// functions below are implemented in promql/ast.cc), mirroring
// Prometheus's parser.Function. `variadic`: 0 = exactly arg_types.size()
// arguments; k > 0 = the last arg_types entry is optional and may repeat up
// to k times in total (e.g. hour(): 0 or 1 argument, round(): 1 or 2);
// -1 = the last entry may repeat without limit (label_join, sort_by_label).
struct Function {
  std::string_view name;
  std::vector<ValueType> arg_types;
  int variadic = 0;
  ValueType return_type = ValueType::kVector;
  // Behind --enable-feature=promql-experimental-functions in Prometheus.
  bool experimental = false;
  // Only meaningful on native histograms (histogram_count, ...): an
  // evaluator without native histograms should reject it as unsupported.
  bool native_histogram = false;
};
// Returns the table entry for `name`, or nullptr. Entries live forever.
const Function* LookupFunction(std::string_view name);
// All functions, sorted by name. The vector and its entries live forever.
const std::vector<const Function*>& AllFunctions();

enum class NodeKind {
  kNumberLiteral,
  kStringLiteral,
  kVectorSelector,
  kMatrixSelector,
  kSubquery,
  kCall,
  kAggregate,
  kBinary,
  kUnary,
  kParen,
};

struct Expr {
  explicit Expr(NodeKind k) : kind(k) {}
  virtual ~Expr() = default;
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;

  template <typename T>
  const T& As() const {
    return static_cast<const T&>(*this);
  }
  template <typename T>
  T& As() {
    return static_cast<T&>(*this);
  }

  const NodeKind kind;
  PosRange pos;
};
using ExprPtr = std::unique_ptr<Expr>;

struct NumberLiteral : Expr {
  static constexpr NodeKind kKind = NodeKind::kNumberLiteral;
  NumberLiteral() : Expr(kKind) {}
  double value = 0;
  // Written as a duration ("1h30m"); value is then in seconds. Only affects
  // printing.
  bool is_duration = false;
};

struct StringLiteral : Expr {
  static constexpr NodeKind kKind = NodeKind::kStringLiteral;
  StringLiteral() : Expr(kKind) {}
  std::string value;  // unquoted
};

// `offset` and `@` of a selector or subquery.
struct Modifiers {
  int64_t offset_ms = 0;  // positive = into the past; may be negative
  AtKind at = AtKind::kNone;
  int64_t at_ms = 0;  // valid when at == kTimestamp
};

// foo{a="b"} offset 5m @ 100. For a range selector the offset and `@` live
// on the inner VectorSelector, as in Prometheus.
struct VectorSelector : Expr {
  static constexpr NodeKind kKind = NodeKind::kVectorSelector;
  VectorSelector() : Expr(kKind) {}
  // The metric name written before the braces ("" for {__name__="x"} or
  // {"x"}: then the name is only a matcher).
  std::string name;
  // All matchers. When `name` is set, the last one is __name__="<name>".
  std::vector<Matcher> matchers;
  Modifiers mod;
  // The selector as written, without modifiers (e.g. `foo{a="b"}`).
  std::string original_text;
  // Set on info()'s label-selector argument, which may match everything.
  bool bypass_empty_matcher_check = false;
};

struct MatrixSelector : Expr {
  static constexpr NodeKind kKind = NodeKind::kMatrixSelector;
  MatrixSelector() : Expr(kKind) {}
  std::unique_ptr<VectorSelector> vs;  // never null; holds offset/@
  int64_t range_ms = 0;                // > 0
};

// expr[range:step] offset o @ t
struct SubqueryExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::kSubquery;
  SubqueryExpr() : Expr(kKind) {}
  ExprPtr expr;
  int64_t range_ms = 0;  // > 0
  int64_t step_ms = 0;   // 0 = the engine's default resolution
  Modifiers mod;
};

struct Call : Expr {
  static constexpr NodeKind kKind = NodeKind::kCall;
  Call() : Expr(kKind) {}
  const Function* func = nullptr;  // never null after a successful parse
  std::vector<ExprPtr> args;
};

struct AggregateExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::kAggregate;
  AggregateExpr() : Expr(kKind) {}
  AggOp op = AggOp::kSum;
  ExprPtr param;  // topk's k, quantile's φ, count_values' label; else null
  ExprPtr expr;
  std::vector<std::string> grouping;  // by/without labels, as written
  bool without = false;
};

enum class Cardinality { kOneToOne, kManyToOne, kOneToMany, kManyToMany };

struct VectorMatching {
  // Set operators are always kManyToMany; group_left = kManyToOne,
  // group_right = kOneToMany.
  Cardinality card = Cardinality::kOneToOne;
  std::vector<std::string> matching_labels;  // on(...) / ignoring(...)
  bool on = false;                           // on() rather than ignoring()
  std::vector<std::string> include;          // group_x(...) labels
};

struct BinaryExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::kBinary;
  BinaryExpr() : Expr(kKind) {}
  BinOp op = BinOp::kAdd;
  ExprPtr lhs;
  ExprPtr rhs;
  bool return_bool = false;
  // Present iff both operands are instant vectors.
  std::optional<VectorMatching> matching;
};

struct UnaryExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::kUnary;
  UnaryExpr() : Expr(kKind) {}
  UnaryOp op = UnaryOp::kMinus;
  ExprPtr expr;  // never a NumberLiteral: "-1" folds into the literal
};

struct ParenExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::kParen;
  ParenExpr() : Expr(kKind) {}
  ExprPtr expr;
};

// The value type `e` evaluates to (Prometheus's Expr.Type()).
ValueType Type(const Expr& e);

// Prometheus's canonical Expr.String(): `sum by (job) (rate(x[5m]))`,
// `a + on (b) group_left () c`, `foo @ 10.000 offset 1m`. Re-parsing the
// result yields an equivalent tree.
std::string Format(const Expr& e);

// Prometheus's Expr.Pretty(0) (promql/parser/prettier.go), what
// /api/v1/format_query answers: a node whose Format() fits in
// `max_line` characters is printed on one line; a longer one is split,
// its children on their own lines indented two spaces per level:
//   sum by (job) (
//     rate(http_requests_total{...}[5m])
//   )
// Binary operators put the operator on a line of its own between the
// operands; calls and aggregations put each argument on its own line.
// Default max_line: 100, as Prometheus.
std::string Pretty(const Expr& e, int max_line = 100);

}  // namespace vigil::promql

#endif  // VIGIL_PROMQL_AST_H_
