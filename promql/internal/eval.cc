// The evaluator: the node dispatch, the deadline and sample-limit checks,
// and the shared helpers (annotations, step cursors, output builders).
#include "promql/internal/eval.h"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "core/go/strconv.h"
#include "core/status_macros.h"
#include "core/time.h"
#include "fmt/format.h"
#include "promql/parser.h"

namespace vigil::promql {
namespace internal {

// ---- Annotations
// -------------------------------------------------------------

void Annotations::Add(bool info, std::string msg, PosRange pos) {
  auto [it, inserted] = entries_.try_emplace(msg);
  if (!inserted) return;
  it->second.info = info;
  it->second.pos = pos;
  order_.push_back(std::move(msg));
}

void Annotations::MergeFrom(const Annotations& other) {
  for (const std::string& msg : other.order_) {
    auto [it, inserted] = entries_.try_emplace(msg, other.entries_.at(msg));
    if (inserted) order_.push_back(msg);
  }
}

void Annotations::ForcedMonotonicity(const std::string& metric, PosRange pos,
                                     int64_t ts, double min_bucket,
                                     double max_bucket, double max_diff) {
  std::string msg =
      "input to histogram_quantile needed to be fixed for monotonicity (see "
      "https://prometheus.io/docs/prometheus/latest/querying/functions/"
      "#histogram_quantile)";
  if (!metric.empty()) msg += " for metric name " + go::Quote(metric);
  auto [it, inserted] = entries_.try_emplace(msg);
  Entry& e = it->second;
  if (inserted) {
    e.info = true;
    e.pos = pos;
    e.monotonicity = true;
    e.min_ts = e.max_ts = ts;
    e.min_bucket = min_bucket;
    e.max_bucket = max_bucket;
    e.max_diff = max_diff;
    order_.push_back(msg);
    return;
  }
  e.min_ts = std::min(e.min_ts, ts);
  e.max_ts = std::max(e.max_ts, ts);
  e.min_bucket = std::min(e.min_bucket, min_bucket);
  e.max_bucket = std::max(e.max_bucket, max_bucket);
  e.max_diff = std::max(e.max_diff, max_diff);
  e.count++;
}

namespace {

// Go's %.2g.
std::string GoG2(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  snprintf(buf, sizeof(buf), "%.2g", v);
  return buf;
}

}  // namespace

void Annotations::Render(std::string_view query,
                         std::vector<std::string>* warnings,
                         std::vector<std::string>* infos) const {
  for (const std::string& msg : order_) {
    const Entry& e = entries_.at(msg);
    std::string text =
        std::string(e.info ? "PromQL info: " : "PromQL warning: ") + msg;
    if (e.monotonicity) {
      text += fmt::format(
          ", from buckets {} to {}, with a max diff of {}, over {} samples "
          "from {} to {}",
          go::FormatFloatG(e.min_bucket), go::FormatFloatG(e.max_bucket),
          GoG2(e.max_diff), e.count + 1, FormatRfc3339Seconds(e.min_ts),
          FormatRfc3339Seconds(e.max_ts));
    }
    text += " (" + FormatPosition(query, e.pos.start) + ")";
    (e.info ? infos : warnings)->push_back(std::move(text));
  }
}

// ---- builders and cursors
// ----------------------------------------------------

absl::Status DuplicateLabelsetError() {
  return absl::FailedPreconditionError(
      "vector cannot contain metrics with the same labelset");
}

absl::Status MatrixBuilder::Add(int64_t ts, OutSample s) {
  if (instant_) {
    points_++;
    Series ser;
    ser.metric = std::move(s.metric);
    ser.ts.push_back(ts);
    ser.vs.push_back(s.v);
    ser.drop_name = s.drop_name;
    out_.push_back(std::move(ser));
    return absl::OkStatus();
  }
  uint64_t h = s.metric.Hash();
  auto [it, inserted] = index_.try_emplace(h, static_cast<int>(out_.size()));
  if (inserted) {
    Series ser;
    ser.metric = std::move(s.metric);
    ser.drop_name = s.drop_name;
    out_.push_back(std::move(ser));
  }
  return Append(it->second, ts, s.v);
}

absl::Status MatrixBuilder::Append(int idx, int64_t ts, double v) {
  points_++;
  Series& ser = out_[idx];
  if (!ser.ts.empty() && ser.ts.back() == ts) return DuplicateLabelsetError();
  ser.ts.push_back(ts);
  ser.vs.push_back(v);
  return absl::OkStatus();
}

StepCursor::StepCursor(const Matrix& m, int64_t start, int64_t interval,
                       int steps)
    : start_(start),
      interval_(interval),
      offset_(static_cast<size_t>(steps) + 2, 0) {
  auto step_of = [&](int64_t ts) -> int64_t {
    if (ts < start || (ts - start) % interval != 0) return -1;
    int64_t k = (ts - start) / interval;
    return k < steps ? k : -1;
  };
  // Counting sort by step: count, prefix-sum, scatter (stable in series order).
  for (const Series& s : m) {
    for (int64_t ts : s.ts) {
      if (int64_t k = step_of(ts); k >= 0)
        offset_[static_cast<size_t>(k) + 2]++;
    }
  }
  for (size_t k = 2; k < offset_.size(); k++) offset_[k] += offset_[k - 1];
  points_.resize(offset_.back());
  for (size_t i = 0; i < m.size(); i++) {
    const Series& s = m[i];
    for (size_t j = 0; j < s.ts.size(); j++) {
      if (int64_t k = step_of(s.ts[j]); k >= 0) {
        points_[offset_[static_cast<size_t>(k) + 1]++] = {static_cast<int>(i),
                                                          s.vs[j]};
      }
    }
  }
  offset_.pop_back();  // now offset_[k] .. offset_[k + 1] is step k
}

void StepCursor::Gather(int64_t ts, std::vector<StepPoint>* out) const {
  out->clear();
  if (ts < start_ || (ts - start_) % interval_ != 0) return;
  size_t k = static_cast<size_t>((ts - start_) / interval_);
  if (k + 1 >= offset_.size()) return;
  out->assign(points_.begin() + offset_[k], points_.begin() + offset_[k + 1]);
}

// ---- small shared helpers
// ----------------------------------------------------

EvalValue MakeVector(Matrix m) {
  EvalValue v;
  v.type = ValueType::kVector;
  v.mat = std::move(m);
  return v;
}

EvalValue MakeScalar(std::vector<double> s) {
  EvalValue v;
  v.type = ValueType::kScalar;
  v.scalar = std::move(s);
  return v;
}

namespace {
bool IsNameLabel(const Label& x) {
  return x.name == kMetricName || x.name == "__type__" || x.name == "__unit__";
}
}  // namespace

const Matcher* MetricNameMatcher(const VectorSelector& vs) {
  const Matcher* found = nullptr;
  for (const Matcher& m : vs.matchers) {
    if (m.name() == kMetricName && m.type() == MatchType::kEqual) found = &m;
  }
  return found;
}

const Expr& Unparen(const Expr& e) {
  const Expr* p = &e;
  while (p->kind == NodeKind::kParen) p = p->As<ParenExpr>().expr.get();
  return *p;
}

Labels DropMetricName(const Labels& l) {
  std::vector<Label> out;
  out.reserve(l.size());
  for (const Label& x : l) {
    if (!IsNameLabel(x)) out.push_back(x);
  }
  return Labels::FromSorted(std::move(out));
}

Labels DropMetricName(Labels&& l) {
  std::vector<Label> pairs = std::move(l).ReleasePairs();
  std::erase_if(pairs, IsNameLabel);
  return Labels::FromSorted(std::move(pairs));
}

absl::StatusOr<Matrix> MergeSameLabelset(Matrix m) {
  if (m.size() <= 1) return m;
  absl::flat_hash_map<uint64_t, int> idx;
  bool dup = false;
  for (size_t i = 0; i < m.size(); i++) {
    if (!idx.try_emplace(m[i].metric.Hash(), static_cast<int>(i)).second)
      dup = true;
  }
  if (!dup) return m;
  Matrix out;
  absl::flat_hash_map<uint64_t, int> pos;
  for (Series& s : m) {
    auto [it, inserted] =
        pos.try_emplace(s.metric.Hash(), static_cast<int>(out.size()));
    if (inserted) {
      out.push_back(std::move(s));
      continue;
    }
    Series& base = out[it->second];
    std::vector<std::pair<int64_t, double>> pts;
    for (size_t i = 0; i < base.ts.size(); i++)
      pts.push_back({base.ts[i], base.vs[i]});
    for (size_t i = 0; i < s.ts.size(); i++) pts.push_back({s.ts[i], s.vs[i]});
    std::stable_sort(pts.begin(), pts.end(), [](const auto& a, const auto& b) {
      return a.first < b.first;
    });
    base.ts.clear();
    base.vs.clear();
    for (size_t i = 0; i < pts.size(); i++) {
      if (i > 0 && pts[i].first == pts[i - 1].first)
        return DuplicateLabelsetError();
      base.ts.push_back(pts[i].first);
      base.vs.push_back(pts[i].second);
    }
  }
  return out;
}

double GoMod(double x, double y) {
  if (y == 0 || std::isinf(x) || std::isnan(x) || std::isnan(y)) return NAN;
  return std::fmod(x, y);  // same as Go for the remaining cases (sign of x)
}

double GoPow(double x, double y) {
  // Go's math.Pow differs from C's pow only in pow(-1, ±Inf) = 1 (both) and
  // pow(1, NaN) (C: 1, Go: 1) / pow(NaN, 0) (both 1).
  if (x == -1 && std::isinf(y)) return 1;
  return std::pow(x, y);
}

double Quantile(double q, std::vector<double>* values) {
  if (values->empty() || std::isnan(q)) return NAN;
  if (q < 0) return -INFINITY;
  if (q > 1) return INFINITY;
  std::sort(values->begin(), values->end(), [](double a, double b) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
    return a < b;
  });
  double n = static_cast<double>(values->size());
  double rank = q * (n - 1);
  double lower = std::max(0.0, std::floor(rank));
  double upper = std::min(n - 1, lower + 1);
  double weight = rank - std::floor(rank);
  return (*values)[static_cast<size_t>(lower)] * (1 - weight) +
         (*values)[static_cast<size_t>(upper)] * weight;
}

// ---- Evaluator
// -----------------------------------------------------------------

Evaluator::Evaluator(const EngineOptions& opts, storage::Queryable* q,
                     int64_t start, int64_t end, int64_t interval,
                     Annotations* annos, Deadline deadline,
                     SampleCounters* counters)
    : opts_(opts),
      queryable_(q),
      start_(start),
      end_(end),
      interval_(interval),
      annos_(annos),
      deadline_(deadline),
      counters_(counters),
      samples_(&counters->current),
      query_start_(start),
      query_end_(end),
      query_step_(start == end ? 0 : interval) {}

Evaluator Evaluator::Child(int64_t start, int64_t end, int64_t interval) const {
  Evaluator c(opts_, queryable_, start, end, interval, annos_, deadline_,
              counters_);
  c.query_start_ = query_start_;
  c.query_end_ = query_end_;
  c.query_step_ = query_step_;
  return c;
}

Deadline Deadline::For(const EngineOptions& opts, const QueryContext* ctx) {
  Deadline d;
  d.ctx = ctx;
  if (opts.timeout_ms > 0) {
    d.timed = true;
    d.at = std::chrono::steady_clock::now() +
           std::chrono::milliseconds(opts.timeout_ms);
  }
  if (ctx != nullptr && ctx->has_deadline() &&
      (!d.timed || ctx->deadline() < d.at)) {
    d.timed = true;
    d.at = ctx->deadline();
  }
  return d;
}

absl::Status Deadline::Check() const {
  if (ctx != nullptr && ctx->cancelled()) {
    return absl::CancelledError("query was canceled in expression evaluation");
  }
  if (timed && std::chrono::steady_clock::now() > at) {
    return absl::DeadlineExceededError(
        "query timed out in expression evaluation");
  }
  return absl::OkStatus();
}

absl::Status Evaluator::AddSamples(int64_t n) {
  *samples_ += n;
  if (*samples_ > counters_->peak) counters_->peak = *samples_;
  if (*samples_ > opts_.max_samples) {
    counters_->samples_limit_hit = true;
    return absl::ResourceExhaustedError(
        "query processing would load too many samples into memory in query "
        "execution");
  }
  return absl::OkStatus();
}

absl::Status Evaluator::CheckSeriesLimit(size_t n,
                                         const VectorSelector& vs) const {
  if (opts_.max_series <= 0 || n <= static_cast<size_t>(opts_.max_series)) {
    return absl::OkStatus();
  }
  counters_->series_limit_hit = true;
  return absl::ResourceExhaustedError(fmt::format(
      "query processing would load too many series into memory in query "
      "execution: {} selects more than {} series (--query.max-series)",
      Format(vs), opts_.max_series));
}

absl::Status Evaluator::CheckRoomFor(int64_t n) const {
  if (*samples_ + n > opts_.max_samples) {
    counters_->samples_limit_hit = true;
    return absl::ResourceExhaustedError(
        "query processing would load too many samples into memory in query "
        "execution");
  }
  return absl::OkStatus();
}

absl::Status Evaluator::CheckGrid(int64_t start, int64_t end,
                                  int64_t interval) const {
  const uint64_t steps =
      (static_cast<uint64_t>(end) - static_cast<uint64_t>(start)) /
          static_cast<uint64_t>(interval) +
      1;
  const uint64_t most = static_cast<uint64_t>(
      std::min<int64_t>(std::max<int64_t>(opts_.max_samples, 1), INT32_MAX));
  if (steps <= most) return absl::OkStatus();
  // Prometheus's message: clients match it, and the cause is the one it
  // names (the steps' samples would not fit).
  counters_->samples_limit_hit = true;
  return absl::ResourceExhaustedError(
      "query processing would load too many samples into memory in query "
      "execution");
}

namespace {

// A call with a range-vector argument: Prometheus evaluates those series by
// series and rejects identical output series even in a range query.
bool IsRangeVectorCall(const Expr& e) {
  if (e.kind != NodeKind::kCall) return false;
  for (const auto& a : e.As<Call>().args) {
    if (Type(*a) == ValueType::kMatrix) return true;
  }
  return false;
}

// A range-vector call over a selector that names one metric (an `=`
// matcher on __name__): its output series are the selected ones, all of one
// name, so dropping the name cannot make two of them the same.
bool OverOneMetricName(const Expr& e) {
  for (const auto& a : e.As<Call>().args) {
    const Expr& arg = Unparen(*a);
    if (arg.kind != NodeKind::kMatrixSelector) continue;
    if (MetricNameMatcher(*arg.As<MatrixSelector>().vs) != nullptr) return true;
  }
  return false;
}

}  // namespace

absl::Status Evaluator::DropNamesNow(const Expr& e, EvalValue* v) const {
  bool dropped = false;
  bool names_only = true;  // no __type__/__unit__ went with the names
  for (Series& s : v->mat) {
    if (!s.drop_name) continue;
    const size_t before = s.metric.size();
    s.metric = DropMetricName(std::move(s.metric));
    names_only &= before - s.metric.size() <= 1;
    s.drop_name = false;
    dropped = true;
  }
  if (!dropped) return absl::OkStatus();
  // Only this node dropped names (its inputs were handled when they were
  // evaluated), so only here can series have become identical. Prometheus
  // rejects that at once for an instant query and for a range-vector call;
  // elsewhere a range query merges them, failing only where two meet at
  // one step.
  if (instant() || IsRangeVectorCall(e)) {
    if (names_only && IsRangeVectorCall(e) && OverOneMetricName(e)) {
      return absl::OkStatus();
    }
    absl::flat_hash_map<uint64_t, int> seen;
    seen.reserve(v->mat.size());
    for (const Series& s : v->mat) {
      if (!seen.try_emplace(s.metric.Hash(), 0).second)
        return DuplicateLabelsetError();
    }
    return absl::OkStatus();
  }
  VIGIL_ASSIGN_OR_RETURN(v->mat, MergeSameLabelset(std::move(v->mat)));
  return absl::OkStatus();
}

absl::StatusOr<EvalValue> Evaluator::Eval(const Expr& e) {
  const int64_t before = *samples_;
  absl::StatusOr<EvalValue> v = EvalNode(e);
  if (v.ok() && v->type == ValueType::kVector &&
      !opts_.enable_delayed_name_removal) {
    VIGIL_RETURN_IF_ERROR(DropNamesNow(e, &*v));
  }
  if (v.ok()) {
    int64_t n = 0;
    for (const Series& s : v->mat) n += static_cast<int64_t>(s.ts.size());
    *samples_ = before;
    VIGIL_RETURN_IF_ERROR(AddSamples(n));
  }
  return v;
}

absl::StatusOr<EvalValue> Evaluator::EvalNode(const Expr& e) {
  VIGIL_RETURN_IF_ERROR(CheckDeadline());
  switch (e.kind) {
    case NodeKind::kNumberLiteral:
      return MakeScalar(
          std::vector<double>(num_steps(), e.As<NumberLiteral>().value));
    case NodeKind::kStringLiteral: {
      EvalValue v;
      v.type = ValueType::kString;
      v.str = e.As<StringLiteral>().value;
      return v;
    }
    case NodeKind::kParen:
      return Eval(*e.As<ParenExpr>().expr);
    case NodeKind::kUnary: {
      const auto& u = e.As<UnaryExpr>();
      VIGIL_ASSIGN_OR_RETURN(EvalValue v, Eval(*u.expr));
      if (u.op == UnaryOp::kMinus) {
        for (double& x : v.scalar) x = -x;
        for (Series& s : v.mat) {
          s.drop_name = true;
          for (double& x : s.vs) x = -x;
        }
      }
      return v;
    }
    case NodeKind::kVectorSelector:
      return EvalVectorSelector(e.As<VectorSelector>(), false);
    case NodeKind::kMatrixSelector:
    case NodeKind::kSubquery:
      return EvalMatrixTop(e);
    case NodeKind::kCall:
      return EvalCall(e.As<Call>());
    case NodeKind::kAggregate:
      return EvalAggregate(e.As<AggregateExpr>());
    case NodeKind::kBinary:
      return EvalBinary(e.As<BinaryExpr>());
  }
  return absl::InternalError("unhandled expression");
}

}  // namespace internal

}  // namespace vigil::promql
