#include "server/web/api/v1/ast_json.h"

#include "core/go/strconv.h"

namespace vigil::web::api {
namespace {

using namespace promql;  // NOLINT: the node types

std::string_view CardName(Cardinality c) {
  switch (c) {
    case Cardinality::kOneToOne:
      return "one-to-one";
    case Cardinality::kManyToOne:
      return "many-to-one";
    case Cardinality::kOneToMany:
      return "one-to-many";
    case Cardinality::kManyToMany:
      return "many-to-many";
  }
  return "";
}

void Matchers(JsonWriter& w, const std::vector<Matcher>& ms) {
  w.StartArray();
  for (const Matcher& m : ms) {
    w.StartObject();
    w.Key("name");
    w.String(m.name());
    w.Key("type");
    w.String(MatchTypeString(m.type()));
    w.Key("value");
    w.String(m.value());
    w.EndObject();
  }
  w.EndArray();
}

// "offset", "offsetExpr", then the `@` fields, written by the callers in
// key order around their own keys.
void TimestampFields(JsonWriter& w, const Modifiers& m) {
  w.Key("timestamp");
  if (m.at == AtKind::kTimestamp) {
    w.Int(m.at_ms);
  } else {
    w.Null();
  }
}

void StartOrEnd(JsonWriter& w, const Modifiers& m) {
  w.Key("startOrEnd");
  if (m.at == AtKind::kStart) {
    w.String("start");
  } else if (m.at == AtKind::kEnd) {
    w.String("end");
  } else {
    w.Null();
  }
}

void Strings(JsonWriter& w, const std::vector<std::string>& v) {
  w.StringArray(v);
}

void Selector(JsonWriter& w, const VectorSelector& vs,
              const MatrixSelector* ms) {
  w.StartObject();
  w.Key("anchored");
  w.Bool(false);
  w.Key("matchers");
  Matchers(w, vs.matchers);
  w.Key("name");
  w.String(vs.name);
  w.Key("offset");
  w.Int(vs.mod.offset_ms);
  w.Key("offsetExpr");
  w.Null();
  if (ms != nullptr) {
    w.Key("range");
    w.Int(ms->range_ms);
    w.Key("rangeExpr");
    w.Null();
  }
  w.Key("smoothed");
  w.Bool(false);
  StartOrEnd(w, vs.mod);
  TimestampFields(w, vs.mod);
  w.Key("type");
  w.String(ms != nullptr ? "matrixSelector" : "vectorSelector");
  w.EndObject();
}

}  // namespace

void WriteAstJson(JsonWriter& w, const Expr& e) {
  switch (e.kind) {
    case NodeKind::kAggregate: {
      const auto& n = e.As<AggregateExpr>();
      w.StartObject();
      w.Key("expr");
      WriteAstJson(w, *n.expr);
      w.Key("grouping");
      Strings(w, n.grouping);
      w.Key("op");
      w.String(AggOpString(n.op));
      w.Key("param");
      if (n.param) {
        WriteAstJson(w, *n.param);
      } else {
        w.Null();
      }
      w.Key("type");
      w.String("aggregation");
      w.Key("without");
      w.Bool(n.without);
      w.EndObject();
      return;
    }
    case NodeKind::kBinary: {
      const auto& n = e.As<BinaryExpr>();
      w.StartObject();
      w.Key("bool");
      w.Bool(n.return_bool);
      w.Key("lhs");
      WriteAstJson(w, *n.lhs);
      w.Key("matching");
      if (n.matching) {
        const VectorMatching& m = *n.matching;
        w.StartObject();
        w.Key("card");
        w.String(CardName(m.card));
        w.Key("fillValues");
        w.StartObject();
        w.Key("lhs");
        w.Null();
        w.Key("rhs");
        w.Null();
        w.EndObject();
        w.Key("include");
        Strings(w, m.include);
        w.Key("labels");
        Strings(w, m.matching_labels);
        w.Key("on");
        w.Bool(m.on);
        w.EndObject();
      } else {
        w.Null();
      }
      w.Key("op");
      w.String(BinOpString(n.op));
      w.Key("rhs");
      WriteAstJson(w, *n.rhs);
      w.Key("type");
      w.String("binaryExpr");
      w.EndObject();
      return;
    }
    case NodeKind::kCall: {
      const auto& n = e.As<Call>();
      w.StartObject();
      w.Key("args");
      w.StartArray();
      for (const ExprPtr& a : n.args) WriteAstJson(w, *a);
      w.EndArray();
      w.Key("func");
      w.StartObject();
      w.Key("argTypes");
      w.StartArray();
      for (ValueType t : n.func->arg_types) w.String(ValueTypeName(t));
      w.EndArray();
      w.Key("name");
      w.String(n.func->name);
      w.Key("returnType");
      w.String(ValueTypeName(n.func->return_type));
      w.Key("variadic");
      w.Int(n.func->variadic);
      w.EndObject();
      w.Key("type");
      w.String("call");
      w.EndObject();
      return;
    }
    case NodeKind::kMatrixSelector: {
      const auto& n = e.As<MatrixSelector>();
      Selector(w, *n.vs, &n);
      return;
    }
    case NodeKind::kVectorSelector:
      Selector(w, e.As<VectorSelector>(), nullptr);
      return;
    case NodeKind::kSubquery: {
      const auto& n = e.As<SubqueryExpr>();
      w.StartObject();
      w.Key("expr");
      WriteAstJson(w, *n.expr);
      w.Key("offset");
      w.Int(n.mod.offset_ms);
      w.Key("offsetExpr");
      w.Null();
      w.Key("range");
      w.Int(n.range_ms);
      w.Key("rangeExpr");
      w.Null();
      StartOrEnd(w, n.mod);
      w.Key("step");
      w.Int(n.step_ms);
      w.Key("stepExpr");
      w.Null();
      TimestampFields(w, n.mod);
      w.Key("type");
      w.String("subquery");
      w.EndObject();
      return;
    }
    case NodeKind::kNumberLiteral:
      w.StartObject();
      w.Key("type");
      w.String("numberLiteral");
      w.Key("val");
      w.String(go::FormatFloat(e.As<NumberLiteral>().value, 'f', -1));
      w.EndObject();
      return;
    case NodeKind::kParen:
      w.StartObject();
      w.Key("expr");
      WriteAstJson(w, *e.As<ParenExpr>().expr);
      w.Key("type");
      w.String("parenExpr");
      w.EndObject();
      return;
    case NodeKind::kStringLiteral:
      w.StartObject();
      w.Key("type");
      w.String("stringLiteral");
      w.Key("val");
      w.String(e.As<StringLiteral>().value);
      w.EndObject();
      return;
    case NodeKind::kUnary: {
      const auto& n = e.As<UnaryExpr>();
      w.StartObject();
      w.Key("expr");
      WriteAstJson(w, *n.expr);
      w.Key("op");
      w.String(n.op == UnaryOp::kMinus ? "-" : "+");
      w.Key("type");
      w.String("unaryExpr");
      w.EndObject();
      return;
    }
  }
}

}  // namespace vigil::web::api
