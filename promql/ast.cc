#include "promql/ast.h"

#include <algorithm>

#include "fmt/format.h"
#include "promql/internal/parser.h"

namespace vigil::promql {

std::string_view DocumentedTypeName(ValueType t) {
  switch (t) {
    case ValueType::kScalar:
      return "scalar";
    case ValueType::kString:
      return "string";
    case ValueType::kVector:
      return "instant vector";
    case ValueType::kMatrix:
      return "range vector";
    case ValueType::kNone:
      break;
  }
  return "none";
}

std::string_view ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kScalar:
      return "scalar";
    case ValueType::kString:
      return "string";
    case ValueType::kVector:
      return "vector";
    case ValueType::kMatrix:
      return "matrix";
    case ValueType::kNone:
      break;
  }
  return "none";
}

std::string FormatPosition(std::string_view query, int pos) {
  if (query.empty()) return "unknown position";
  if (pos < 0 || pos > static_cast<int>(query.size()))
    return "invalid position";
  int line = 1;
  int last_break = -1;
  for (int i = 0; i < pos; ++i) {
    if (query[i] == '\n') {
      last_break = i;
      ++line;
    }
  }
  return fmt::format("{}:{}", line, pos - last_break);
}

std::string_view BinOpString(BinOp op) {
  switch (op) {
    case BinOp::kAdd:
      return "+";
    case BinOp::kSub:
      return "-";
    case BinOp::kMul:
      return "*";
    case BinOp::kDiv:
      return "/";
    case BinOp::kMod:
      return "%";
    case BinOp::kPow:
      return "^";
    case BinOp::kAtan2:
      return "atan2";
    case BinOp::kEql:
      return "==";
    case BinOp::kNeq:
      return "!=";
    case BinOp::kGtr:
      return ">";
    case BinOp::kLss:
      return "<";
    case BinOp::kGte:
      return ">=";
    case BinOp::kLte:
      return "<=";
    case BinOp::kAnd:
      return "and";
    case BinOp::kOr:
      return "or";
    case BinOp::kUnless:
      return "unless";
    case BinOp::kTrimUpper:
      return "</";
    case BinOp::kTrimLower:
      return ">/";
  }
  return "?";
}

bool IsComparison(BinOp op) {
  switch (op) {
    case BinOp::kEql:
    case BinOp::kNeq:
    case BinOp::kGtr:
    case BinOp::kLss:
    case BinOp::kGte:
    case BinOp::kLte:
      return true;
    default:
      return false;
  }
}

bool IsSetOperator(BinOp op) {
  return op == BinOp::kAnd || op == BinOp::kOr || op == BinOp::kUnless;
}

std::string_view AggOpString(AggOp op) {
  switch (op) {
    case AggOp::kSum:
      return "sum";
    case AggOp::kAvg:
      return "avg";
    case AggOp::kCount:
      return "count";
    case AggOp::kMin:
      return "min";
    case AggOp::kMax:
      return "max";
    case AggOp::kGroup:
      return "group";
    case AggOp::kStddev:
      return "stddev";
    case AggOp::kStdvar:
      return "stdvar";
    case AggOp::kTopK:
      return "topk";
    case AggOp::kBottomK:
      return "bottomk";
    case AggOp::kQuantile:
      return "quantile";
    case AggOp::kCountValues:
      return "count_values";
    case AggOp::kLimitK:
      return "limitk";
    case AggOp::kLimitRatio:
      return "limit_ratio";
  }
  return "?";
}

bool AggOpHasParam(AggOp op) {
  switch (op) {
    case AggOp::kTopK:
    case AggOp::kBottomK:
    case AggOp::kQuantile:
    case AggOp::kCountValues:
    case AggOp::kLimitK:
    case AggOp::kLimitRatio:
      return true;
    default:
      return false;
  }
}

ValueType Type(const Expr& e) {
  switch (e.kind) {
    case NodeKind::kNumberLiteral:
      return ValueType::kScalar;
    case NodeKind::kStringLiteral:
      return ValueType::kString;
    case NodeKind::kVectorSelector:
      return ValueType::kVector;
    case NodeKind::kMatrixSelector:
      return ValueType::kMatrix;
    case NodeKind::kSubquery:
      return ValueType::kMatrix;
    case NodeKind::kCall: {
      const auto* f = e.As<Call>().func;
      return f ? f->return_type : ValueType::kNone;
    }
    case NodeKind::kAggregate:
      return ValueType::kVector;
    case NodeKind::kBinary: {
      const auto& b = e.As<BinaryExpr>();
      if (Type(*b.lhs) == ValueType::kScalar &&
          Type(*b.rhs) == ValueType::kScalar) {
        return ValueType::kScalar;
      }
      return ValueType::kVector;
    }
    case NodeKind::kUnary:
      return Type(*e.As<UnaryExpr>().expr);
    case NodeKind::kParen:
      return Type(*e.As<ParenExpr>().expr);
  }
  return ValueType::kNone;
}

const Function* LookupFunction(std::string_view name) {
  const auto& t = internal::FunctionTable();
  auto it = std::lower_bound(
      t.begin(), t.end(), name,
      [](const Function& f, std::string_view n) { return f.name < n; });
  if (it == t.end() || it->name != name) return nullptr;
  return &*it;
}

const std::vector<const Function*>& AllFunctions() {
  static const auto* all = [] {
    auto* v = new std::vector<const Function*>();
    for (const auto& f : internal::FunctionTable()) v->push_back(&f);
    return v;
  }();
  return *all;
}

std::string Format(const Expr& e) {
  std::string out;
  internal::WriteExpr(&out, e);
  return out;
}

}  // namespace vigil::promql
