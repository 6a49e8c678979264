// Type checking of a parsed tree, in the order of Prometheus's checkAST so
// that the first reported error is the same.
#include <cctype>

#include "core/go/strconv.h"
#include "core/labels.h"
#include "fmt/format.h"
#include "promql/internal/parser.h"

namespace vigil::promql::internal {
namespace {

bool IsSpaceByte(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

}  // namespace

void Parser::ExpectType(Expr* e, ValueType want, std::string_view context) {
  ValueType t = Check(e);
  if (t != want) {
    Fail(e->pos,
         fmt::format("expected type {} in {}, got {}", DocumentedTypeName(want),
                     context, DocumentedTypeName(t)));
  }
}

// The operator's position: from the end of the lhs to the start of the rhs,
// without surrounding white space.
PosRange Parser::OperatorRange(const BinaryExpr& b) const {
  PosRange r{b.lhs->pos.end, b.rhs->pos.start - 1};
  int n = static_cast<int>(in_.size());
  while (r.start < n && IsSpaceByte(in_[r.start])) ++r.start;
  while (r.end > 0 && r.end < n && IsSpaceByte(in_[r.end])) --r.end;
  return r;
}

ValueType Parser::Check(Expr* e) {
  if (failed()) return ValueType::kNone;
  ValueType type = Type(*e);
  switch (e->kind) {
    case NodeKind::kAggregate: {
      auto& a = e->As<AggregateExpr>();
      ExpectType(a.expr.get(), ValueType::kVector, "aggregation expression");
      switch (a.op) {
        case AggOp::kTopK:
        case AggOp::kBottomK:
        case AggOp::kQuantile:
        case AggOp::kLimitK:
        case AggOp::kLimitRatio:
          ExpectType(a.param.get(), ValueType::kScalar,
                     "aggregation parameter");
          break;
        case AggOp::kCountValues:
          ExpectType(a.param.get(), ValueType::kString,
                     "aggregation parameter");
          break;
        default:
          break;
      }
      break;
    }
    case NodeKind::kBinary:
      CheckBinary(&e->As<BinaryExpr>());
      break;
    case NodeKind::kCall:
      CheckCall(&e->As<Call>());
      break;
    case NodeKind::kParen:
      Check(e->As<ParenExpr>().expr.get());
      break;
    case NodeKind::kUnary: {
      ValueType t = Check(e->As<UnaryExpr>().expr.get());
      if (t != ValueType::kScalar && t != ValueType::kVector) {
        Fail(e->pos,
             fmt::format("unary expression only allowed on expressions of "
                         "type scalar or instant vector, got {}",
                         go::Quote(DocumentedTypeName(t))));
      }
      break;
    }
    case NodeKind::kSubquery: {
      ValueType t = Check(e->As<SubqueryExpr>().expr.get());
      if (t != ValueType::kVector) {
        Fail(e->pos,
             fmt::format("subquery is only allowed on instant vector, got {} "
                         "instead",
                         ValueTypeName(t)));
      }
      break;
    }
    case NodeKind::kMatrixSelector:
      Check(e->As<MatrixSelector>().vs.get());
      break;
    case NodeKind::kVectorSelector: {
      auto& vs = e->As<VectorSelector>();
      if (!vs.name.empty()) {
        for (size_t i = 0; i + 1 < vs.matchers.size(); ++i) {
          if (vs.matchers[i].name() == kMetricName) {
            Fail(e->pos,
                 fmt::format("metric name must not be set twice: {} or {}",
                             go::Quote(vs.name),
                             go::Quote(vs.matchers[i].value())));
            break;
          }
        }
        break;
      }
      bool non_empty = vs.bypass_empty_matcher_check;
      for (const auto& m : vs.matchers) {
        if (!m.Matches("")) non_empty = true;
      }
      if (!non_empty) {
        Fail(e->pos,
             "vector selector must contain at least one non-empty matcher");
      }
      break;
    }
    case NodeKind::kNumberLiteral:
    case NodeKind::kStringLiteral:
      break;
  }
  return type;
}

void Parser::CheckBinary(BinaryExpr* b) {
  ValueType lt = Check(b->lhs.get());
  ValueType rt = Check(b->rhs.get());
  if (failed()) return;
  if (b->return_bool && !IsComparison(b->op)) {
    Fail(OperatorRange(*b),
         "bool modifier can only be used on comparison operators");
  }
  if (IsComparison(b->op) && !b->return_bool && lt == ValueType::kScalar &&
      rt == ValueType::kScalar) {
    Fail(OperatorRange(*b),
         "comparisons between scalars must use BOOL modifier");
  }
  auto& vm = *b->matching;
  if (IsSetOperator(b->op) && vm.card == Cardinality::kOneToOne) {
    vm.card = Cardinality::kManyToMany;
  }
  if (vm.on) {
    for (const auto& l1 : vm.matching_labels) {
      for (const auto& l2 : vm.include) {
        if (l1 == l2) {
          Fail(OperatorRange(*b),
               fmt::format(
                   "label {} must not occur in ON and GROUP clause at once",
                   go::Quote(l1)));
        }
      }
    }
  }
  if (lt != ValueType::kScalar && lt != ValueType::kVector) {
    Fail(b->lhs->pos,
         "binary expression must contain only scalar and instant vector types");
  }
  if (rt != ValueType::kScalar && rt != ValueType::kVector) {
    Fail(b->rhs->pos,
         "binary expression must contain only scalar and instant vector types");
  }
  if (lt != ValueType::kVector || rt != ValueType::kVector) {
    if (!vm.matching_labels.empty()) {
      Fail(b->pos, "vector matching only allowed between instant vectors");
    }
    b->matching.reset();
  } else if (IsSetOperator(b->op)) {
    if (vm.card == Cardinality::kOneToMany ||
        vm.card == Cardinality::kManyToOne) {
      Fail(b->pos, fmt::format("no grouping allowed for {} operation",
                               go::Quote(BinOpString(b->op))));
    }
    if (vm.card != Cardinality::kManyToMany) {
      Fail(b->pos, "set operations must always be many-to-many");
    }
  }
  if ((lt == ValueType::kScalar || rt == ValueType::kScalar) &&
      IsSetOperator(b->op)) {
    Fail(b->pos,
         fmt::format("set operator {} not allowed in binary scalar expression",
                     go::Quote(BinOpString(b->op))));
  }
}

void Parser::CheckCall(Call* c) {
  const Function& f = *c->func;
  int nargs = static_cast<int>(f.arg_types.size());
  int got = static_cast<int>(c->args.size());
  if (f.variadic == 0) {
    if (nargs != got) {
      Fail(c->pos, fmt::format("expected {} argument(s) in call to {}, got {}",
                               nargs, go::Quote(f.name), got));
    }
  } else {
    int min = nargs - 1;
    if (min > got) {
      Fail(c->pos,
           fmt::format("expected at least {} argument(s) in call to {}, got {}",
                       min, go::Quote(f.name), got));
    } else if (f.variadic > 0 && min + f.variadic < got) {
      Fail(c->pos,
           fmt::format("expected at most {} argument(s) in call to {}, got {}",
                       min + f.variadic, go::Quote(f.name), got));
    }
  }
  if (f.name == "info" && got > 1) {
    Expr* sel = c->args[1].get();
    ValueType t = Type(*sel);
    if (t != ValueType::kVector) {
      Fail(c->pos,
           fmt::format("expected type instant vector in call to function "
                       "\"info\", got {}",
                       DocumentedTypeName(t)));
    }
    if (sel->kind != NodeKind::kVectorSelector) {
      Fail(sel->pos, "expected label selectors only");
    } else if (!sel->As<VectorSelector>().name.empty()) {
      Fail(sel->pos,
           "expected label selectors only, got vector selector instead");
    } else {
      sel->As<VectorSelector>().bypass_empty_matcher_check = true;
    }
  }
  for (int i = 0; i < got; ++i) {
    int k = i;
    if (k >= nargs) {
      if (f.variadic == 0) break;
      k = nargs - 1;
    }
    ValueType t = Check(c->args[i].get());
    if (t != f.arg_types[k]) {
      Fail(c->args[i]->pos,
           fmt::format("expected type {} in call to function {}, got {}",
                       DocumentedTypeName(f.arg_types[k]), go::Quote(f.name),
                       DocumentedTypeName(t)));
    }
  }
}

}  // namespace vigil::promql::internal
