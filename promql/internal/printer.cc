// Prometheus's canonical Expr.String() (promql/parser/printer.go), behind
// promql::Format in promql/ast.cc.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "core/go/strconv.h"
#include "core/labels.h"
#include "core/time.h"
#include "fmt/format.h"
#include "promql/ast.h"
#include "promql/internal/parser.h"

namespace vigil::promql {
namespace {

void Write(std::string* out, const Expr& e);

// Label names in by/on/group lists are quoted unless legacy-valid.
void WriteLabelList(std::string* out, const std::vector<std::string>& ls) {
  for (size_t i = 0; i < ls.size(); ++i) {
    if (i > 0) out->append(", ");
    if (IsValidLabelName(ls[i])) {
      out->append(ls[i]);
    } else {
      go::AppendQuote(out, ls[i]);
    }
  }
}

// labels.Matcher.String(): the name is quoted unless [a-zA-Z_][a-zA-Z0-9_]*.
std::string MatcherString(const Matcher& m) {
  std::string out;
  bool quote = m.name().empty();
  for (size_t i = 0; i < m.name().size(); ++i) {
    char c = m.name()[i];
    bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) quote = true;
  }
  if (quote) {
    go::AppendQuote(&out, m.name());
  } else {
    out.append(m.name());
  }
  out.append(MatchTypeString(m.type()));
  go::AppendQuote(&out, m.value());
  return out;
}

// strconv.FormatFloat(v, 'f', -1, 64): the shortest round-trip digits,
// padded with zeros (1e300 prints as "1" and 300 zeros).
std::string FormatFloatF(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto res =
      std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string_view sci(buf, res.ptr - buf);
  std::string out;
  if (sci.front() == '-') {
    out.push_back('-');
    sci.remove_prefix(1);
  }
  size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int exp = std::stoi(std::string(sci.substr(e + 1)));
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int point = exp + 1;  // digits before the decimal point
  int n = static_cast<int>(digits.size());
  if (point <= 0) {
    out += "0." + std::string(-point, '0') + digits;
  } else if (point >= n) {
    out += digits + std::string(point - n, '0');
  } else {
    out += digits.substr(0, point) + "." + digits.substr(point);
  }
  return out;
}

// model.Duration(ms).String(), with a leading '-' for negative values.
std::string DurationString(int64_t ms) {
  if (ms < 0) return "-" + FormatDurationMs(-ms);
  return FormatDurationMs(ms);
}

void WriteModifiers(std::string* out, const Modifiers& m) {
  switch (m.at) {
    case AtKind::kTimestamp:
      out->append(
          fmt::format(" @ {:.3f}", static_cast<double>(m.at_ms) / 1000.0));
      break;
    case AtKind::kStart:
      out->append(" @ start()");
      break;
    case AtKind::kEnd:
      out->append(" @ end()");
      break;
    case AtKind::kNone:
      break;
  }
  if (m.offset_ms != 0) {
    out->append(" offset ");
    out->append(DurationString(m.offset_ms));
  }
}

void WriteSelectorBody(std::string* out, const VectorSelector& vs) {
  std::vector<std::string> parts;
  for (const auto& m : vs.matchers) {
    if (m.name() == kMetricName && m.type() == MatchType::kEqual &&
        m.value() == vs.name && !m.value().empty()) {
      continue;
    }
    parts.push_back(MatcherString(m));
  }
  out->append(vs.name);
  // The empty selector info() takes as its second argument prints as `{}`
  // (upstream prints nothing, and `info(m, )` does not parse again).
  if (parts.empty()) {
    if (vs.name.empty()) out->append("{}");
    return;
  }
  std::sort(parts.begin(), parts.end());
  out->push_back('{');
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out->push_back(',');
    out->append(parts[i]);
  }
  out->push_back('}');
}

// " bool on (a) group_left (b)": what follows the operator.
void WriteBinaryModifiers(std::string* out, const BinaryExpr& b) {
  if (b.return_bool) out->append(" bool");
  if (b.matching) {
    const auto& vm = *b.matching;
    bool grouped = vm.card == Cardinality::kManyToOne ||
                   vm.card == Cardinality::kOneToMany;
    if (!vm.matching_labels.empty() || vm.on || grouped) {
      out->append(vm.on ? " on (" : " ignoring (");
      WriteLabelList(out, vm.matching_labels);
      out->push_back(')');
    }
    if (grouped) {
      out->append(vm.card == Cardinality::kManyToOne ? " group_left ("
                                                     : " group_right (");
      WriteLabelList(out, vm.include);
      out->push_back(')');
    }
  }
}

void WriteBinary(std::string* out, const BinaryExpr& b) {
  Write(out, *b.lhs);
  out->push_back(' ');
  out->append(BinOpString(b.op));
  WriteBinaryModifiers(out, b);
  out->push_back(' ');
  Write(out, *b.rhs);
}

// "sum by (job) " / "sum without (a) " / "sum": everything before '('.
void WriteAggregateHead(std::string* out, const AggregateExpr& a) {
  out->append(AggOpString(a.op));
  if (a.without || !a.grouping.empty()) {
    out->append(a.without ? " without (" : " by (");
    WriteLabelList(out, a.grouping);
    out->append(") ");
  }
}

// "[5m:1m] @ 10.000 offset 1m" of a subquery.
void WriteSubquerySuffix(std::string* out, const SubqueryExpr& sq) {
  out->push_back('[');
  out->append(FormatDurationMs(sq.range_ms));
  out->push_back(':');
  if (sq.step_ms != 0) out->append(FormatDurationMs(sq.step_ms));
  out->push_back(']');
  WriteModifiers(out, sq.mod);
}

void Write(std::string* out, const Expr& e) {
  switch (e.kind) {
    case NodeKind::kNumberLiteral: {
      const auto& n = e.As<NumberLiteral>();
      if (n.is_duration) {
        // model.Duration(v*1e9): truncation to ns, printed in ms units.
        auto ns = static_cast<int64_t>(n.value * 1e9);
        out->append(DurationString(ns / 1000000));
      } else {
        out->append(FormatFloatF(n.value));
      }
      return;
    }
    case NodeKind::kStringLiteral:
      go::AppendQuote(out, e.As<StringLiteral>().value);
      return;
    case NodeKind::kVectorSelector: {
      const auto& vs = e.As<VectorSelector>();
      WriteSelectorBody(out, vs);
      WriteModifiers(out, vs.mod);
      return;
    }
    case NodeKind::kMatrixSelector: {
      const auto& ms = e.As<MatrixSelector>();
      WriteSelectorBody(out, *ms.vs);
      out->push_back('[');
      out->append(FormatDurationMs(ms.range_ms));
      out->push_back(']');
      WriteModifiers(out, ms.vs->mod);
      return;
    }
    case NodeKind::kSubquery: {
      const auto& sq = e.As<SubqueryExpr>();
      Write(out, *sq.expr);
      WriteSubquerySuffix(out, sq);
      return;
    }
    case NodeKind::kCall: {
      const auto& c = e.As<Call>();
      out->append(c.func ? c.func->name : "<unknown>");
      out->push_back('(');
      for (size_t i = 0; i < c.args.size(); ++i) {
        if (i > 0) out->append(", ");
        Write(out, *c.args[i]);
      }
      out->push_back(')');
      return;
    }
    case NodeKind::kAggregate: {
      const auto& a = e.As<AggregateExpr>();
      WriteAggregateHead(out, a);
      out->push_back('(');
      if (a.param) {
        Write(out, *a.param);
        out->append(", ");
      }
      Write(out, *a.expr);
      out->push_back(')');
      return;
    }
    case NodeKind::kBinary:
      WriteBinary(out, e.As<BinaryExpr>());
      return;
    case NodeKind::kUnary: {
      const auto& u = e.As<UnaryExpr>();
      out->push_back(u.op == UnaryOp::kMinus ? '-' : '+');
      Write(out, *u.expr);
      return;
    }
    case NodeKind::kParen:
      out->push_back('(');
      Write(out, *e.As<ParenExpr>().expr);
      out->push_back(')');
      return;
  }
}

}  // namespace

namespace internal {
void WriteExpr(std::string* out, const Expr& e) { Write(out, e); }
void WriteAggregateHead(std::string* out, const AggregateExpr& a) {
  vigil::promql::WriteAggregateHead(out, a);
}
void WriteBinaryModifiers(std::string* out, const BinaryExpr& b) {
  vigil::promql::WriteBinaryModifiers(out, b);
}
void WriteSubquerySuffix(std::string* out, const SubqueryExpr& sq) {
  vigil::promql::WriteSubquerySuffix(out, sq);
}
}  // namespace internal

}  // namespace vigil::promql
