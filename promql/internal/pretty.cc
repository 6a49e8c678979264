// Prometheus's Expr.Pretty (promql/parser/prettier.go), behind
// promql::Pretty in promql/ast.h. Each node decides for itself: if its
// one-line form fits, that is its text; otherwise it splits and its
// children decide at the next level. `level` is the indentation the node
// starts its first line with (its parent put it on a fresh line).
#include <string>

#include "promql/ast.h"
#include "promql/internal/parser.h"

namespace vigil::promql {
namespace {

class Prettifier {
 public:
  explicit Prettifier(int max_line) : max_line_(max_line) {}

  // Nested deeper than this many nodes, a subtree is printed on one line
  // (Format), unsplit. Vigil's own bound, not Prometheus's: only
  // machine-made queries nest this deep (the parser allows 10,000 levels,
  // and a 4 KiB query holds 4,000 unary signs), and past it the recursion
  // would grow the stack without bound and the indentation the output with
  // the square of the depth.
  static constexpr int kMaxDepth = 100;

  std::string Pretty(const Expr& e, int level) const {
    if (depth_ >= kMaxDepth) return Indent(level) + Format(e);
    struct Nest {
      explicit Nest(int* d) : d(d) { ++*d; }
      ~Nest() { --*d; }
      int* d;
    } nest(&depth_);
    switch (e.kind) {
      case NodeKind::kAggregate:
        return Aggregate(e.As<AggregateExpr>(), level);
      case NodeKind::kBinary:
        return Binary(e.As<BinaryExpr>(), level);
      case NodeKind::kCall:
        return CallExpr(e.As<Call>(), level);
      case NodeKind::kParen:
        return Paren(e.As<ParenExpr>(), level);
      case NodeKind::kSubquery: {
        const auto& sq = e.As<SubqueryExpr>();
        // As Prometheus: an unsplit subquery is not indented.
        if (!NeedsSplit(e)) return Format(e);
        std::string out = Pretty(*sq.expr, level);
        internal::WriteSubquerySuffix(&out, sq);
        return out;
      }
      case NodeKind::kUnary: {
        const auto& u = e.As<UnaryExpr>();
        // The operator takes the indentation; the operand's own is dropped.
        return Indent(level) + (u.op == UnaryOp::kMinus ? "-" : "+") +
               TrimSpace(Pretty(*u.expr, level));
      }
      case NodeKind::kNumberLiteral:
      case NodeKind::kStringLiteral:
      case NodeKind::kVectorSelector:
      case NodeKind::kMatrixSelector:
        return Indent(level) + Format(e);
    }
    return Indent(level) + Format(e);
  }

 private:
  static std::string Indent(int level) {
    return std::string(static_cast<size_t>(2 * level), ' ');
  }

  // Go's strings.TrimSpace for the ASCII whitespace a printed tree holds.
  static std::string TrimSpace(const std::string& s) {
    const char* ws = " \t\n\r\v\f";
    size_t b = s.find_first_not_of(ws);
    if (b == std::string::npos) return "";
    size_t e = s.find_last_not_of(ws);
    return s.substr(b, e - b + 1);
  }

  bool NeedsSplit(const Expr& e) const {
    return static_cast<int>(Format(e).size()) > max_line_;
  }

  std::string Aggregate(const AggregateExpr& a, int level) const {
    std::string out = Indent(level);
    if (!NeedsSplit(a)) return out + Format(a);
    internal::WriteAggregateHead(&out, a);
    out += "(\n";
    if (a.param) out += Pretty(*a.param, level + 1) + ",\n";
    out += Pretty(*a.expr, level + 1) + "\n" + Indent(level) + ")";
    return out;
  }

  std::string Binary(const BinaryExpr& b, int level) const {
    if (!NeedsSplit(b)) return Indent(level) + Format(b);
    std::string out = Pretty(*b.lhs, level + 1) + "\n" + Indent(level);
    out += BinOpString(b.op);
    internal::WriteBinaryModifiers(&out, b);
    out += "\n" + Pretty(*b.rhs, level + 1);
    return out;
  }

  std::string CallExpr(const Call& c, int level) const {
    std::string out = Indent(level);
    if (!NeedsSplit(c)) return out + Format(c);
    out += c.func ? std::string(c.func->name) : "<unknown>";
    out += "(\n";
    for (size_t i = 0; i < c.args.size(); ++i) {
      if (i > 0) out += ",\n";
      out += Pretty(*c.args[i], level + 1);
    }
    out += "\n" + Indent(level) + ")";
    return out;
  }

  std::string Paren(const ParenExpr& p, int level) const {
    std::string out = Indent(level);
    if (!NeedsSplit(p)) return out + Format(p);
    return out + "(\n" + Pretty(*p.expr, level + 1) + "\n" + Indent(level) +
           ")";
  }

  const int max_line_;
  mutable int depth_ = 0;  // Pretty calls under way
};

}  // namespace

std::string Pretty(const Expr& e, int max_line) {
  return Prettifier(max_line).Pretty(e, 0);
}

}  // namespace vigil::promql
