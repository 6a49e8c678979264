// Running a calibration: query every compared expression over every window,
// summarise, find the capacity point and the SLO breach level, propose.
#include "server/calibrate/calibrate.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/time.h"
#include "fmt/format.h"
#include "promql/parser.h"

namespace vigil::calibrate {

namespace {

bool Valid(double v) { return !std::isnan(v) && !std::isinf(v); }

// `text` with every selector of a recording rule that has no other
// matcher and no modifier replaced by the rule's expression; "" when
// nothing was replaced.
std::string Inline(const std::string& text,
                   const std::map<std::string, std::string>& recording) {
  auto e = promql::ParseExpr(text);
  if (!e.ok()) return "";
  std::vector<std::pair<promql::PosRange, std::string>> subs;
  std::vector<const promql::Expr*> stack = {e->get()};
  while (!stack.empty()) {
    const promql::Expr* x = stack.back();
    stack.pop_back();
    using promql::NodeKind;
    switch (x->kind) {
      case NodeKind::kVectorSelector: {
        const auto& vs = x->As<promql::VectorSelector>();
        auto it = recording.find(vs.name);
        if (it != recording.end() && vs.matchers.size() == 1 &&
            vs.mod.offset_ms == 0 && vs.mod.at == promql::AtKind::kNone)
          subs.push_back({x->pos, "(" + it->second + ")"});
        break;
      }
      case NodeKind::kBinary:
        stack.push_back(x->As<promql::BinaryExpr>().lhs.get());
        stack.push_back(x->As<promql::BinaryExpr>().rhs.get());
        break;
      case NodeKind::kParen:
        stack.push_back(x->As<promql::ParenExpr>().expr.get());
        break;
      case NodeKind::kUnary:
        stack.push_back(x->As<promql::UnaryExpr>().expr.get());
        break;
      case NodeKind::kCall:
        for (const auto& a : x->As<promql::Call>().args)
          stack.push_back(a.get());
        break;
      case NodeKind::kAggregate:
        stack.push_back(x->As<promql::AggregateExpr>().expr.get());
        break;
      default:
        break;
    }
  }
  if (subs.empty()) return "";
  std::sort(subs.begin(), subs.end(), [](const auto& a, const auto& b) {
    return a.first.start > b.first.start;
  });
  std::string out = text;
  for (const auto& [pos, repl] : subs)
    out.replace(size_t(pos.start), size_t(pos.end - pos.start), repl);
  return out;
}

// One expression over every window.
struct Series {
  std::string queried;
  std::map<std::string, promql::Matrix> by_window;
  std::string error;
};

int64_t StepFor(const Window& w, int64_t step) {
  return std::max(step, (w.end - w.start) / 10000 + 1);
}

Series QueryAll(const std::string& expr, const Options& opts,
                QuerySource* src) {
  Series s;
  auto run = [&](const std::string& e) {
    s.queried = e;
    s.by_window.clear();
    size_t points = 0;
    for (const Window& w : opts.windows) {
      auto m = src->RangeQuery(e, w.start, w.end, StepFor(w, opts.step_ms));
      if (!m.ok()) {
        s.error = std::string(m.status().message());
        return size_t(0);
      }
      for (const auto& x : *m) points += x.size();
      s.by_window[w.name] = *std::move(m);
    }
    return points;
  };
  if (run(expr) > 0 || !s.error.empty()) return s;
  // Nothing stored under the recorded names: evaluate the rules' own
  // expressions instead.
  std::string inl = Inline(expr, opts.recording);
  if (!inl.empty()) run(inl);
  if (!s.error.empty() && inl.empty()) s.queried = expr;
  return s;
}

Stats Summarise(const promql::Matrix& m) {
  Stats st;
  std::vector<double> v;
  for (const auto& s : m) {
    bool any = false;
    for (double x : s.vs) {
      if (!Valid(x)) continue;
      v.push_back(x);
      any = true;
    }
    if (any) st.series++;
  }
  st.samples = v.size();
  if (v.empty()) return st;
  st.p50 = Quantile(0.5, &v);
  st.p95 = Quantile(0.95, &v);
  st.p99 = Quantile(0.99, &v);
  st.max = v.back();
  return st;
}

// Pairs every point of `m` with the value of `ref` at the same time: of the
// same instance when both carry one, else the fleet's maximum.
std::vector<std::pair<double, double>> Pair(const promql::Matrix& m,
                                            const promql::Matrix& ref) {
  std::map<std::string, std::map<int64_t, double>> by_inst;
  std::map<int64_t, double> fleet;
  for (const auto& s : ref) {
    std::string inst(s.metric.Get("instance"));
    for (size_t i = 0; i < s.size(); ++i) {
      if (!Valid(s.vs[i])) continue;
      if (!inst.empty()) by_inst[inst][s.ts[i]] = s.vs[i];
      auto [it, fresh] = fleet.emplace(s.ts[i], s.vs[i]);
      if (!fresh) it->second = std::max(it->second, s.vs[i]);
    }
  }
  std::vector<std::pair<double, double>> out;
  for (const auto& s : m) {
    std::string inst(s.metric.Get("instance"));
    auto bi = inst.empty() ? by_inst.end() : by_inst.find(inst);
    const auto& look = bi != by_inst.end() ? bi->second : fleet;
    for (size_t i = 0; i < s.size(); ++i) {
      if (!Valid(s.vs[i])) continue;
      auto it = look.find(s.ts[i]);
      if (it != look.end()) out.push_back({s.vs[i], it->second});
    }
  }
  return out;
}

std::optional<double> MedianWhere(
    const std::vector<std::pair<double, double>>& pairs, double lo, double hi) {
  std::vector<double> v;
  for (const auto& [x, r] : pairs) {
    if (r >= lo && r <= hi) v.push_back(x);
  }
  if (v.empty()) return std::nullopt;
  return Quantile(0.5, &v);
}

}  // namespace

double Quantile(double q, std::vector<double>* v) {
  if (v->empty()) return std::nan("");
  std::sort(v->begin(), v->end());
  if (q <= 0) return v->front();
  if (q >= 1) return v->back();
  double rank = q * double(v->size() - 1);
  size_t lo = size_t(std::floor(rank));
  size_t hi = std::min(lo + 1, v->size() - 1);
  double w = rank - double(lo);
  return (*v)[lo] * (1 - w) + (*v)[hi] * w;
}

std::string FormatNumber(double v) { return fmt::format("{:.4g}", v); }

double RoundThreshold(double v) {
  if (v == 0 || !Valid(v)) return v;
  double mag = std::pow(10, std::floor(std::log10(std::fabs(v))) - 2);
  return std::round(v / mag) * mag;
}

absl::StatusOr<Calibration> Run(const std::vector<rules::RuleGroup>& groups,
                                const Options& opts, QuerySource* src) {
  if (opts.windows.empty())
    return absl::InvalidArgumentError(
        "no --window given (want at least one NAME=START..END)");
  std::set<std::string> names;
  for (const Window& w : opts.windows) {
    if (!names.insert(w.name).second)
      return absl::InvalidArgumentError(
          fmt::format("--window name \"{}\" given twice", w.name));
  }
  Calibration c;
  c.source = src->Describe();
  c.windows = opts.windows;
  c.baseline = opts.baseline.empty() ? opts.windows[0].name : opts.baseline;
  if (!names.count(c.baseline))
    return absl::InvalidArgumentError(fmt::format(
        "--baseline \"{}\" is not the name of a --window", c.baseline));
  if (opts.warning_fraction < 0.7 || opts.warning_fraction > 0.8)
    return absl::InvalidArgumentError(fmt::format(
        "--warning-fraction {} is outside 0.7..0.8 (the source article's "
        "rule: warning at 0.7-0.8 of the way to the SLO line)",
        opts.warning_fraction));

  std::vector<Threshold> ts = FindThresholds(groups, &c.skipped);
  std::map<std::string, Series> cache;
  auto series = [&](const std::string& expr) -> const Series& {
    auto it = cache.find(expr);
    if (it == cache.end())
      it = cache.emplace(expr, QueryAll(expr, opts, src)).first;
    return it->second;
  };
  auto all = [](const Series& s) {
    promql::Matrix out;
    for (const auto& [w, m] : s.by_window)
      out.insert(out.end(), m.begin(), m.end());
    return out;
  };
  const Series& kv = series(opts.capacity_metric);
  promql::Matrix kv_all = all(kv);
  double lo = opts.capacity_level - 0.05, hi = opts.capacity_level + 0.05;
  if (kv.error.empty()) {
    const Series& conc = series(opts.concurrency_metric);
    if (conc.error.empty())
      c.design_concurrency = MedianWhere(Pair(all(conc), kv_all), lo, hi);
  }

  for (const Threshold& t : ts) {
    Row r;
    r.t = t;
    const Series& s = series(t.metric);
    r.queried = s.queried;
    r.error = s.error;
    for (const auto& [w, m] : s.by_window) r.by_window[w] = Summarise(m);
    if (r.error.empty() && !kv_all.empty())
      r.at_capacity = MedianWhere(Pair(all(s), kv_all), lo, hi);
    c.rows.push_back(std::move(r));
  }

  // The line of a metric without a capacity rule: --slo, else its critical
  // alert's threshold, else its own.
  auto current_line = [&](const Row& r) -> std::pair<double, std::string> {
    for (const auto& key : {r.t.alert, r.t.metric}) {
      if (auto it = opts.slo.find(key); it != opts.slo.end())
        return {it->second, "--slo " + key};
    }
    for (const Row& o : c.rows) {
      if (o.t.metric == r.t.metric && o.t.op == r.t.op && o.t.critical)
        return {o.t.value, "SLO line = " + o.t.alert + "'s threshold"};
    }
    return {r.t.value, "SLO line = current threshold"};
  };

  // Latency lines, then the capacity metrics' level where they broke.
  std::vector<std::pair<const Row*, double>> slo_lines;
  for (Row& r : c.rows) {
    if (r.t.cls != MetricClass::kLatency || !r.error.empty()) continue;
    if (r.t.op != ">" && r.t.op != ">=") continue;
    slo_lines.push_back({&r, current_line(r).first});
  }
  for (Row& r : c.rows) {
    if (r.t.cls != MetricClass::kCapacity || !r.error.empty()) continue;
    promql::Matrix m = all(series(r.t.metric));
    for (const auto& [lat, line] : slo_lines) {
      auto v = MedianWhere(Pair(m, all(series(lat->t.metric))), line,
                           std::numeric_limits<double>::infinity());
      if (v && (!r.at_breach || *v < *r.at_breach)) r.at_breach = v;
    }
  }

  for (Row& r : c.rows) {
    if (!r.error.empty()) {
      r.evidence = "query failed";
      continue;
    }
    const Stats& b = r.by_window[c.baseline];
    if (b.samples == 0) {
      r.evidence = "no data in the baseline window " + c.baseline;
      continue;
    }
    double base = b.p95;
    auto [line, why] = current_line(r);
    if (r.t.cls == MetricClass::kCapacity && !why.starts_with("--slo")) {
      if (r.at_breach) {
        line = *r.at_breach;
        why = "SLO line = level where latency SLO breached";
      } else if (r.at_capacity && (r.t.op[0] == '>' ? *r.at_capacity > base
                                                    : *r.at_capacity < base)) {
        line = *r.at_capacity;
        why = fmt::format("SLO line = value at KV {}%",
                          FormatNumber(opts.capacity_level * 100));
      }
    }
    r.line = line;
    bool up = r.t.op[0] == '>';
    if (up ? line <= base : line >= base) {
      r.evidence = fmt::format(
          "{} {}; baseline p95 {} is already past it: fix capacity or the "
          "SLO first, threshold kept",
          why, FormatNumber(line), FormatNumber(base));
      continue;
    }
    double v =
        r.t.critical ? line : base + opts.warning_fraction * (line - base);
    r.proposed = RoundThreshold(v);
    switch (r.t.cls) {
      case MetricClass::kLatency:
        r.proposed_for_ms = 600000;
        break;
      case MetricClass::kCapacity:
        r.proposed_for_ms = r.t.critical ? 300000 : 600000;
        break;
      case MetricClass::kHardware:
        r.proposed_for_ms = 0;
        break;
      default:
        r.proposed_for_ms = r.t.for_ms;
    }
    r.evidence =
        r.t.critical
            ? fmt::format("critical at the line: {} {}", why,
                          FormatNumber(line))
            : fmt::format("{} {}; warning = p95({}) {} + {} x (line - p95)",
                          why, FormatNumber(line), c.baseline,
                          FormatNumber(base),
                          FormatNumber(opts.warning_fraction));
  }
  return c;
}

}  // namespace vigil::calibrate
