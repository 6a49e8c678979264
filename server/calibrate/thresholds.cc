// Finding the threshold comparisons of alerting rules, classifying their
// metrics, and parsing --window values.
#include <algorithm>
#include <cctype>

#include "core/time.h"
#include "fmt/format.h"
#include "promql/ast.h"
#include "server/calibrate/calibrate.h"

namespace vigil::calibrate {

namespace {

bool IsThresholdOp(promql::BinOp op) {
  using promql::BinOp;
  return op == BinOp::kGtr || op == BinOp::kLss || op == BinOp::kGte ||
         op == BinOp::kLte;
}

std::string Flip(promql::BinOp op) {
  using promql::BinOp;
  switch (op) {
    case BinOp::kGtr:
      return "<";
    case BinOp::kLss:
      return ">";
    case BinOp::kGte:
      return "<=";
    default:
      return ">=";
  }
}

const promql::NumberLiteral* AsNumber(const promql::Expr* e) {
  while (e && e->kind == promql::NodeKind::kParen)
    e = e->As<promql::ParenExpr>().expr.get();
  if (e && e->kind == promql::NodeKind::kNumberLiteral)
    return &e->As<promql::NumberLiteral>();
  return nullptr;
}

struct Found {
  std::string op;
  double value;
  std::string metric;
  int start, end;
};

void Walk(const promql::Expr* e, std::vector<Found>* out) {
  using promql::NodeKind;
  if (!e) return;
  switch (e->kind) {
    case NodeKind::kBinary: {
      const auto& b = e->As<promql::BinaryExpr>();
      if (IsThresholdOp(b.op) && !b.return_bool) {
        const auto* rn = AsNumber(b.rhs.get());
        const auto* ln = AsNumber(b.lhs.get());
        if (rn && !ln) {
          out->push_back({std::string(promql::BinOpString(b.op)), rn->value,
                          promql::Format(*b.lhs), rn->pos.start, rn->pos.end});
          return;
        }
        if (ln && !rn) {
          out->push_back({Flip(b.op), ln->value, promql::Format(*b.rhs),
                          ln->pos.start, ln->pos.end});
          return;
        }
      }
      Walk(b.lhs.get(), out);
      Walk(b.rhs.get(), out);
      return;
    }
    case NodeKind::kParen:
      Walk(e->As<promql::ParenExpr>().expr.get(), out);
      return;
    case NodeKind::kUnary:
      Walk(e->As<promql::UnaryExpr>().expr.get(), out);
      return;
    case NodeKind::kCall:
      for (const auto& a : e->As<promql::Call>().args) Walk(a.get(), out);
      return;
    case NodeKind::kAggregate:
      Walk(e->As<promql::AggregateExpr>().expr.get(), out);
      return;
    case NodeKind::kSubquery:
      Walk(e->As<promql::SubqueryExpr>().expr.get(), out);
      return;
    default:
      return;
  }
}

std::string Lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool HasAny(const std::string& s, std::initializer_list<const char*> words) {
  for (const char* w : words) {
    if (s.find(w) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

std::string_view MetricClassName(MetricClass c) {
  switch (c) {
    case MetricClass::kLatency:
      return "latency";
    case MetricClass::kCapacity:
      return "capacity";
    case MetricClass::kHardware:
      return "hardware";
    default:
      return "other";
  }
}

MetricClass ClassOf(const std::string& metric, const std::string& alert) {
  std::string s = Lower(metric + " " + alert);
  if (HasAny(s, {"dcgm", "gpu", "ecc", "xid", "temp", "throttl"}))
    return MetricClass::kHardware;
  if (HasAny(s, {"ttft", "tpot", "latency", "_seconds", "duration"}))
    return MetricClass::kLatency;
  if (HasAny(s, {"kv", "cache_usage", "queue", "waiting", "running",
                 "token_usage"}))
    return MetricClass::kCapacity;
  return MetricClass::kOther;
}

std::vector<Threshold> FindThresholds(
    const std::vector<rules::RuleGroup>& groups,
    std::vector<std::string>* skipped) {
  std::vector<Threshold> out;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t r = 0; r < groups[g].rules.size(); ++r) {
      const rules::Rule& rule = groups[g].rules[r];
      if (rule.kind != rules::RuleKind::kAlerting || !rule.expr) continue;
      std::vector<Found> found;
      Walk(rule.expr.get(), &found);
      if (found.empty()) {
        if (skipped)
          skipped->push_back(
              fmt::format("{}: no `EXPR > N` / `< N` comparison in {}",
                          rule.name, promql::Format(*rule.expr)));
        continue;
      }
      for (const Found& f : found) {
        Threshold t;
        t.alert = rule.name;
        t.group = groups[g].name;
        t.severity = std::string(rule.labels.Get("severity"));
        t.critical = t.severity == "critical" || t.severity == "page";
        t.op = f.op;
        t.value = f.value;
        t.metric = f.metric;
        t.for_ms = rule.for_ms;
        t.cls = ClassOf(f.metric, rule.name);
        t.group_index = g;
        t.rule_index = r;
        t.literal_start = f.start;
        t.literal_end = f.end;
        out.push_back(std::move(t));
      }
    }
  }
  return out;
}

absl::StatusOr<Window> ParseWindow(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(fmt::format(
        "--window \"{}\": {} (want NAME=START..END, times as RFC 3339 or "
        "Unix seconds)",
        text, why));
  };
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) return bad("no '=' after the name");
  Window w;
  w.name = std::string(text.substr(0, eq));
  if (w.name.empty()) return bad("empty name");
  for (char c : w.name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' &&
        c != '.' && c != '%')
      return bad(
          fmt::format("name has a '{}' (letters, digits, _ - . % only)", c));
  }
  std::string_view range = text.substr(eq + 1);
  size_t dots = range.find("..");
  if (dots == std::string_view::npos) return bad("no '..' between the times");
  auto start = ParseTime(range.substr(0, dots));
  if (!start.ok())
    return bad(fmt::format("start: {}", std::string(start.status().message())));
  auto end = ParseTime(range.substr(dots + 2));
  if (!end.ok())
    return bad(fmt::format("end: {}", std::string(end.status().message())));
  if (*end <= *start) return bad("end is not after start");
  w.start = *start;
  w.end = *end;
  return w;
}

}  // namespace vigil::calibrate
