// Runs parsed test scripts against the engine (FORMAT.md §5-6).
#include "promql/promqltest/test.h"

#include <fstream>
#include <set>
#include <sstream>

#include "core/go/strconv.h"
#include "core/status_macros.h"
#include "fmt/format.h"
#include "promql/parser.h"
#include "promql/promqltest/script.h"
#include "promql/promqltest/storage.h"
#include "re2/re2.h"

namespace vigil::promql::promqltest {

namespace {

struct State {
  MemStorage storage;
  std::set<Labels> hist_series;  // series holding native histograms
  std::set<Labels> st_series;    // series loaded with start timestamps
};

void Load(const LoadCmd& l, State* st) {
  for (const SeriesLine& s : l.series) {
    int64_t t = 0;
    bool hist = false;
    for (const Slot& slot : s.slots) {
      if (slot.kind == Slot::kFloat) st->storage.Append(s.labels, t, slot.v);
      if (slot.kind == Slot::kStale)
        st->storage.Append(s.labels, t, StaleNaN());
      if (slot.kind == Slot::kHistogram) hist = true;
      t += l.step;
    }
    if (hist) st->hist_series.insert(s.labels);
    if (s.start_timestamps) st->st_series.insert(s.labels);
    if (l.nhcb) {
      std::string_view n = s.labels.MetricName();
      for (std::string_view suf : {"_bucket", "_count", "_sum"}) {
        if (n.size() > suf.size() && n.substr(n.size() - suf.size()) == suf) {
          st->hist_series.insert(
              LabelsBuilder(s.labels)
                  .Set(kMetricName, n.substr(0, n.size() - suf.size()))
                  .Del("le")
                  .Build());
        }
      }
    }
  }
}

// Experimental functions this engine implements.
bool EngineHasExperimental(std::string_view name) {
  for (std::string_view f :
       {"sort_by_label", "sort_by_label_desc", "mad_over_time",
        "ts_of_first_over_time", "ts_of_last_over_time", "ts_of_max_over_time",
        "ts_of_min_over_time", "double_exponential_smoothing", "min_of",
        "max_of", "start", "end", "range", "step", "histogram_quantiles"}) {
    if (f == name) return true;
  }
  return false;
}

// Walks `e`; returns a reason to skip, or "". Sets *experimental if `e`
// uses an experimental function that may run when `run_experimental`.
std::string SkipReason(const Expr& e, const State& st, bool run_experimental,
                       bool* experimental) {
  std::string reason;
  auto touches = [&](const VectorSelector& vs, const std::set<Labels>& set) {
    for (const Labels& l : set) {
      bool ok = true;
      for (const Matcher& m : vs.matchers)
        ok = ok && m.Matches(l.Get(m.name()));
      if (ok) return true;
    }
    return false;
  };
  std::function<void(const Expr&)> walk = [&](const Expr& n) {
    if (!reason.empty()) return;
    switch (n.kind) {
      case NodeKind::kVectorSelector: {
        const auto& vs = n.As<VectorSelector>();
        if (touches(vs, st.hist_series))
          reason = "needs native histograms";
        else if (touches(vs, st.st_series))
          reason = "needs start timestamps (@st)";
        return;
      }
      case NodeKind::kMatrixSelector:
        return walk(*n.As<MatrixSelector>().vs);
      case NodeKind::kSubquery:
        return walk(*n.As<SubqueryExpr>().expr);
      case NodeKind::kParen:
        return walk(*n.As<ParenExpr>().expr);
      case NodeKind::kUnary:
        return walk(*n.As<UnaryExpr>().expr);
      case NodeKind::kBinary:
        walk(*n.As<BinaryExpr>().lhs);
        return walk(*n.As<BinaryExpr>().rhs);
      case NodeKind::kAggregate: {
        const auto& a = n.As<AggregateExpr>();
        if (a.op == AggOp::kLimitK || a.op == AggOp::kLimitRatio) {
          reason = "experimental aggregation " + std::string(AggOpString(a.op));
          return;
        }
        if (a.param) walk(*a.param);
        return walk(*a.expr);
      }
      case NodeKind::kCall: {
        const auto& c = n.As<Call>();
        if (c.func->experimental) {
          if (!run_experimental || !EngineHasExperimental(c.func->name)) {
            reason = "experimental function " + std::string(c.func->name);
            return;
          }
          *experimental = true;
        }
        if (c.func->name == "info") {
          reason = "info() needs info metrics";
          return;
        }
        for (const auto& a : c.args) walk(*a);
        return;
      }
      default:
        return;
    }
  };
  walk(e);
  return reason;
}

bool MatchesExpect(const AnnoExpect& a, const std::string& text) {
  switch (a.kind) {
    case AnnoExpect::kAny:
      return true;
    case AnnoExpect::kMsg:
      return text == a.text;
    case AnnoExpect::kRegex:
      return RE2::PartialMatch(text, a.text);
  }
  return false;
}

// Checks annotations of one kind (FORMAT.md §6.6); "" if fine.
std::string CheckAnnos(const std::vector<AnnoExpect>& exp, bool none,
                       const std::vector<std::string>& got, const char* kind) {
  if (none && !got.empty())
    return fmt::format("unexpected {}: {}", kind, got[0]);
  if (exp.empty()) return "";
  if (got.empty()) return fmt::format("expected {} annotation, got none", kind);
  for (const auto& e : exp) {
    bool ok = false;
    for (const auto& g : got) ok = ok || MatchesExpect(e, g);
    if (!ok)
      return fmt::format("no {} matches {}; got: {}", kind, e.text, got[0]);
  }
  for (const auto& g : got) {
    bool ok = false;
    for (const auto& e : exp) ok = ok || MatchesExpect(e, g);
    if (!ok) return fmt::format("unexpected {}: {}", kind, g);
  }
  return "";
}

std::string Num(double v) { return go::FormatFloatG(v); }

// Compares a vector (instant) result with the expected lines.
std::string CheckVector(const EvalCmd& ev, const Vector& vec, bool ordered) {
  if (ev.scalar) return "expected scalar, got vector";
  if (vec.size() != ev.expected.size()) {
    return fmt::format(
        "expected {} samples, got {}: {}", ev.expected.size(), vec.size(),
        vec.empty() ? "" : vec[0].metric.ToString() + " " + Num(vec[0].v));
  }
  for (size_t i = 0; i < vec.size(); i++) {
    const SeriesLine* match = nullptr;
    if (ordered) {
      if (ev.expected[i].labels == vec[i].metric) match = &ev.expected[i];
    } else {
      for (const auto& e : ev.expected) {
        if (e.labels == vec[i].metric) match = &e;
      }
    }
    if (!match) return "unexpected series " + vec[i].metric.ToString();
    if (match->slots.size() != 1 || match->slots[0].kind == Slot::kGap) {
      return "bad expected value for " + vec[i].metric.ToString();
    }
    double want =
        match->slots[0].kind == Slot::kStale ? StaleNaN() : match->slots[0].v;
    if (!AlmostEqual(want, vec[i].v)) {
      return fmt::format("{}: expected {}, got {}", vec[i].metric.ToString(),
                         Num(want), Num(vec[i].v));
    }
  }
  return "";
}

std::string CheckMatrix(const EvalCmd& ev, const Matrix& m, int64_t start,
                        int64_t step) {
  if (ev.scalar) return "expected scalar, got matrix";
  for (size_t i = 1; i < m.size(); i++) {
    if (!(m[i - 1].metric < m[i].metric)) return "matrix not sorted";
  }
  if (m.size() != ev.expected.size()) {
    return fmt::format("expected {} series, got {}{}", ev.expected.size(),
                       m.size(),
                       m.empty() ? "" : ": " + m[0].metric.ToString());
  }
  for (const Series& s : m) {
    const SeriesLine* match = nullptr;
    for (const auto& e : ev.expected) {
      if (e.labels == s.metric) match = &e;
    }
    if (!match) return "unexpected series " + s.metric.ToString();
    std::vector<std::pair<int64_t, double>> want;
    for (size_t i = 0; i < match->slots.size(); i++) {
      const Slot& sl = match->slots[i];
      if (sl.kind == Slot::kGap) continue;
      want.push_back({start + static_cast<int64_t>(i) * step,
                      sl.kind == Slot::kStale ? StaleNaN() : sl.v});
    }
    if (want.size() != s.ts.size()) {
      return fmt::format("{}: expected {} points, got {}", s.metric.ToString(),
                         want.size(), s.ts.size());
    }
    for (size_t i = 0; i < want.size(); i++) {
      if (want[i].first != s.ts[i] || !AlmostEqual(want[i].second, s.vs[i])) {
        return fmt::format("{}: point {}: expected {}@{}, got {}@{}",
                           s.metric.ToString(), i, Num(want[i].second),
                           want[i].first, Num(s.vs[i]), s.ts[i]);
      }
    }
  }
  return "";
}

struct Runner {
  const RunOptions& opts;
  Engine engine;
  State* st;

  // Runs one query and checks it against `ev`; "" if it satisfies it.
  std::string Check(const EvalCmd& ev, const Expr& expr,
                    const std::string& text, int64_t t) {
    absl::StatusOr<Result> r =
        ev.range
            ? engine.Exec(&st->storage, expr, text, ev.start, ev.end, ev.step)
            : engine.Exec(&st->storage, expr, text, t, t, 0);
    if (ev.fail) {
      if (r.ok()) return "expected failure, query succeeded";
      std::string msg(r.status().message());
      if (!MatchesExpect(ev.fail_expect, msg)) return "wrong error: " + msg;
      return "";
    }
    if (!r.ok()) return "error: " + std::string(r.status().message());
    if (auto s = CheckAnnos(ev.warn, ev.no_warn, r->warnings, "warning");
        !s.empty())
      return s;
    if (auto s = CheckAnnos(ev.info, ev.no_info, r->infos, "info"); !s.empty())
      return s;
    const Value& v = r->value;
    if (ev.range) return CheckMatrix(ev, v.matrix, ev.start, ev.step);
    switch (v.type) {
      case ValueType::kScalar:
        if (!ev.scalar) return "unexpected scalar " + Num(v.scalar.v);
        if (!AlmostEqual(*ev.scalar, v.scalar.v)) {
          return fmt::format("expected scalar {}, got {}", Num(*ev.scalar),
                             Num(v.scalar.v));
        }
        return "";
      case ValueType::kString:
        if (!ev.str || *ev.str != v.string.v)
          return "unexpected string " + v.string.v;
        return "";
      case ValueType::kMatrix:
        if (!ev.range_vector) return "unexpected range vector result";
        return CheckMatrix(ev, v.matrix, ev.rv_start, ev.rv_step);
      case ValueType::kVector:
        return CheckVector(ev, v.vector, ev.ordered);
      default:
        return "no value";
    }
  }

  // The range-mode cross-check of an instant query at `t`.
  std::string CrossCheck(const EvalCmd& ev, const Expr& expr,
                         const std::string& text, int64_t t) {
    auto r = engine.Exec(&st->storage, expr, text, t - 60000, t + 60000, 60000);
    if (!r.ok())
      return "range cross-check error: " + std::string(r.status().message());
    if (ev.ordered) return "";
    Vector vec;
    for (const Series& s : r->value.matrix) {
      for (size_t i = 0; i < s.ts.size(); i++) {
        if (s.ts[i] == t) vec.push_back({s.metric, t, s.vs[i]});
      }
    }
    if (ev.scalar) {
      if (vec.empty()) return "range cross-check: no scalar point";
      if (!AlmostEqual(*ev.scalar, vec[0].v))
        return "range cross-check: scalar mismatch";
      return "";
    }
    std::string s = CheckVector(ev, vec, false);
    return s.empty() ? "" : "range cross-check: " + s;
  }

  EvalOutcome Run(const EvalCmd& ev) {
    EvalOutcome o;
    o.line = ev.line;
    o.expr = ev.expr;
    auto skip = [&](std::string why) {
      o.kind = EvalOutcome::kSkipped;
      o.reason = std::move(why);
      return o;
    };
    auto fail = [&](std::string why) {
      o.kind = EvalOutcome::kFailed;
      o.reason = std::move(why);
      return o;
    };
    auto parsed = ParseExpr(ev.expr);
    if (!parsed.ok()) {
      std::string msg(parsed.status().message());
      for (const char* kw :
           {"anchored", "smoothed", "fill", "step()", "range()", "start()",
            "end()", "duration", "experimental"}) {
        if (ev.expr.find(kw) != std::string::npos ||
            msg.find(kw) != std::string::npos) {
          return skip("unsupported syntax: " + msg);
        }
      }
      return fail("parse error: " + msg);
    }
    if (ev.expects_histogram) return skip("expects native histograms");
    if (std::string why =
            SkipReason(**parsed, *st, opts.run_experimental, &o.experimental);
        !why.empty()) {
      o.experimental = false;
      return skip(why);
    }
    int64_t t = ev.range_vector ? ev.rv_end : ev.at;
    if (auto s = Check(ev, **parsed, ev.expr, t); !s.empty()) return fail(s);
    if (ev.range) return o;
    bool cross = opts.extra_checks && !ev.range_vector && !ev.str && !ev.fail;
    for (const char* f : {"start()", "end()", "range()", "step()"}) {
      if (ev.expr.find(f) != std::string::npos) cross = false;
    }
    if (cross) {
      if (auto s = CrossCheck(ev, **parsed, ev.expr, t); !s.empty())
        return fail(s);
    }
    if (!opts.extra_checks) return o;
    if (CallsAny(**parsed,
                 {"time", "timestamp", "start", "end", "range", "step", "hour",
                  "minute", "month", "year", "day_of_month", "day_of_week",
                  "day_of_year", "days_in_month", "predict_linear"})) {
      return o;
    }
    // @-pinned variants.
    auto pinned = ParseExpr(ev.expr);
    Pin(pinned->get(), t);
    std::string text = Format(**pinned);
    auto reparsed = ParseExpr(text);
    if (!reparsed.ok()) return fail("pinned variant does not parse: " + text);
    std::vector<int64_t> times =
        t == 0 ? std::vector<int64_t>{-1000, 0, 1000}
               : std::vector<int64_t>{-10 * t, 0, t / 5, t, 10 * t};
    for (int64_t at : times) {
      if (auto s = Check(ev, **reparsed, text, at); !s.empty()) {
        return fail(fmt::format("@-variant `{}` at {}: {}", text, at, s));
      }
      if (cross) {
        if (auto s = CrossCheck(ev, **reparsed, text, at); !s.empty()) {
          return fail(fmt::format("@-variant `{}` at {}: {}", text, at, s));
        }
      }
    }
    return o;
  }

  // True if `e` calls one of `names`.
  static bool CallsAny(const Expr& e,
                       std::initializer_list<std::string_view> names) {
    switch (e.kind) {
      case NodeKind::kMatrixSelector:
      case NodeKind::kVectorSelector:
      case NodeKind::kNumberLiteral:
      case NodeKind::kStringLiteral:
        return false;
      case NodeKind::kSubquery:
        return CallsAny(*e.As<SubqueryExpr>().expr, names);
      case NodeKind::kParen:
        return CallsAny(*e.As<ParenExpr>().expr, names);
      case NodeKind::kUnary:
        return CallsAny(*e.As<UnaryExpr>().expr, names);
      case NodeKind::kBinary:
        return CallsAny(*e.As<BinaryExpr>().lhs, names) ||
               CallsAny(*e.As<BinaryExpr>().rhs, names);
      case NodeKind::kAggregate:
        return (e.As<AggregateExpr>().param &&
                CallsAny(*e.As<AggregateExpr>().param, names)) ||
               CallsAny(*e.As<AggregateExpr>().expr, names);
      case NodeKind::kCall: {
        const auto& c = e.As<Call>();
        for (std::string_view n : names) {
          if (c.func->name == n) return true;
        }
        for (const auto& a : c.args) {
          if (CallsAny(*a, names)) return true;
        }
        return false;
      }
    }
    return false;
  }

  static void Pin(Expr* e, int64_t t) {
    auto pin = [t](Modifiers* m) {
      if (m->at == AtKind::kNone) {
        m->at = AtKind::kTimestamp;
        m->at_ms = t;
      }
    };
    switch (e->kind) {
      case NodeKind::kVectorSelector:
        return pin(&e->As<VectorSelector>().mod);
      case NodeKind::kMatrixSelector:
        return pin(&e->As<MatrixSelector>().vs->mod);
      case NodeKind::kSubquery:
        return pin(&e->As<SubqueryExpr>().mod);
      case NodeKind::kParen:
        return Pin(e->As<ParenExpr>().expr.get(), t);
      case NodeKind::kUnary:
        return Pin(e->As<UnaryExpr>().expr.get(), t);
      case NodeKind::kBinary:
        Pin(e->As<BinaryExpr>().lhs.get(), t);
        return Pin(e->As<BinaryExpr>().rhs.get(), t);
      case NodeKind::kAggregate:
        if (e->As<AggregateExpr>().param)
          Pin(e->As<AggregateExpr>().param.get(), t);
        return Pin(e->As<AggregateExpr>().expr.get(), t);
      case NodeKind::kCall:
        for (auto& a : e->As<Call>().args) Pin(a.get(), t);
        return;
      default:
        return;
    }
  }
};

}  // namespace

absl::StatusOr<FileResult> RunScript(std::string_view script,
                                     const std::string& name,
                                     const RunOptions& options) {
  VIGIL_ASSIGN_OR_RETURN(auto cmds, ParseScript(script, name));
  EngineOptions eo = options.engine;
  eo.lookback_delta_ms = 300000;
  eo.default_subquery_step_ms = 60000;
  eo.max_samples = options.engine.max_samples;
  State st;
  Runner runner{options, Engine(eo), &st};
  FileResult res;
  res.name = name;
  for (const Command& c : cmds) {
    switch (c.kind) {
      case Command::kClear:
        st = State();
        break;
      case Command::kLoad:
        Load(c.load, &st);
        break;
      case Command::kEval:
        res.evals.push_back(runner.Run(c.eval));
        break;
    }
  }
  return res;
}

absl::StatusOr<FileResult> RunFile(const std::string& path,
                                   const RunOptions& options) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string name = path.substr(path.find_last_of('/') + 1);
  return RunScript(ss.str(), name, options);
}

}  // namespace vigil::promql::promqltest
