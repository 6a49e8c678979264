// Binary operators: scalar/scalar, vector/scalar (series at a time) and
// vector/vector with Prometheus's matching rules and errors (step by step).
#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "core/status_macros.h"
#include "fmt/format.h"
#include "promql/internal/eval.h"

namespace vigil::promql::internal {

namespace {

// Arithmetic and comparison of two floats: the result value and whether a
// comparison holds (always true for arithmetic).
double ElemBinop(BinOp op, double l, double r, bool* keep) {
  *keep = true;
  switch (op) {
    case BinOp::kAdd:
      return l + r;
    case BinOp::kSub:
      return l - r;
    case BinOp::kMul:
      return l * r;
    case BinOp::kDiv:
      return l / r;
    case BinOp::kPow:
      return GoPow(l, r);
    case BinOp::kMod:
      return GoMod(l, r);
    case BinOp::kAtan2:
      return std::atan2(l, r);
    case BinOp::kEql:
      *keep = l == r;
      return l;
    case BinOp::kNeq:
      *keep = l != r;
      return l;
    case BinOp::kGtr:
      *keep = l > r;
      return l;
    case BinOp::kLss:
      *keep = l < r;
      return l;
    case BinOp::kGte:
      *keep = l >= r;
      return l;
    case BinOp::kLte:
      *keep = l <= r;
      return l;
    default:
      *keep = false;
      return 0;
  }
}

bool ChangesSchema(BinOp op) { return !IsComparison(op) && !IsSetOperator(op); }

// The matching signature of `l` under `m` (on: only the listed labels;
// ignoring: all but the listed ones and __name__).
std::string Signature(const Labels& l, const VectorMatching& m) {
  std::string sig;
  for (const Label& x : l) {
    bool listed = std::find(m.matching_labels.begin(), m.matching_labels.end(),
                            x.name) != m.matching_labels.end();
    if (m.on ? !listed : (listed || x.name == kMetricName)) continue;
    sig += x.name;
    sig += '\xff';
    sig += x.value;
    sig += '\xff';
  }
  return sig;
}

Labels MatchLabels(const Labels& l, const VectorMatching& m) {
  std::vector<Label> out;
  for (const Label& x : l) {
    bool listed = std::find(m.matching_labels.begin(), m.matching_labels.end(),
                            x.name) != m.matching_labels.end();
    if (m.on ? listed : !(listed || x.name == kMetricName)) out.push_back(x);
  }
  return Labels::FromSorted(std::move(out));
}

Labels ResultMetric(const Labels& lhs, const Labels& rhs, BinOp op,
                    const VectorMatching& m) {
  LabelsBuilder b(lhs);
  if (ChangesSchema(op)) b.Del(kMetricName).Del("__type__").Del("__unit__");
  if (m.card == Cardinality::kOneToOne) {
    if (m.on) {
      b.Keep(m.matching_labels);
    } else {
      for (const auto& n : m.matching_labels) b.Del(n);
    }
  }
  for (const auto& n : m.include) {
    std::string_view v = rhs.Get(n);
    if (!v.empty()) {
      b.Set(n, v);
    } else {
      b.Del(n);
    }
  }
  return b.Build();
}

// Evaluates one vector/vector operator step by step (Prometheus's
// VectorAnd/Or/Unless and VectorBinop).
class VectorVector {
 public:
  // `drop_now`: names are removed as soon as dropped (no delayed name
  // removal), so `bool` comparisons check unique matches without them.
  VectorVector(const BinaryExpr& e, const Matrix& l, const Matrix& r,
               bool instant, bool drop_now)
      : e_(e),
        m_(*e.matching),
        l_(l),
        r_(r),
        out_(instant),
        unique_without_name_(drop_now && e.return_bool) {
    absl::flat_hash_map<std::string, int> ord;
    auto sigs = [&](const Matrix& mat, std::vector<int>* out) {
      for (const Series& s : mat) {
        out->push_back(ord.try_emplace(Signature(s.metric, m_),
                                       static_cast<int>(ord.size()))
                           .first->second);
      }
    };
    sigs(l, &lsig_);
    sigs(r, &rsig_);
    const size_t n = std::max<size_t>(1, ord.size());
    present_.resize(n);
    right_of_.resize(n);
    matched_.resize(n);
  }

  absl::Status Step(int64_t t, const std::vector<StepPoint>& lp,
                    const std::vector<StepPoint>& rp) {
    if (IsSetOperator(e_.op)) return SetOp(t, lp, rp);
    if (lp.empty() || rp.empty()) return absl::OkStatus();
    return m_.card == Cardinality::kOneToMany
               ? Arith(t, rp, lp, r_, l_, rsig_, lsig_, true)
               : Arith(t, lp, rp, l_, r_, lsig_, rsig_, false);
  }

  MatrixBuilder& out() { return out_; }

  // Arithmetic and comparisons matched one-to-one where no signature
  // repeats on either side, series at a time: each pair's columns are
  // merged by timestamp. No step can then hold a duplicate match or two
  // outputs with the same labels (the labels contain the signature), so the
  // step-by-step errors cannot occur and each pair is one output series.
  // Returns false (nothing done) when the conditions do not hold; otherwise
  // fills *out in the order the step-by-step pass would create series:
  // by first output step, then left series order.
  // False if the step-wise path is needed; *st is set when it stopped
  // early (cancelled, deadline).
  bool OneToOneBySeries(bool instant, const Deadline& deadline, Matrix* out,
                        int64_t* points, absl::Status* st) const {
    if (IsSetOperator(e_.op) || m_.card != Cardinality::kOneToOne) return false;
    std::vector<int> right_of(present_.size(), -1);
    for (size_t j = 0; j < r_.size(); j++) {
      if (right_of[rsig_[j]] >= 0) return false;
      right_of[rsig_[j]] = static_cast<int>(j);
    }
    std::vector<char> seen(present_.size(), 0);
    for (int sig : lsig_) {
      if (seen[sig]) return false;
      seen[sig] = 1;
    }
    std::vector<std::pair<int64_t, Series>> made;  // (first step, series)
    WorkMeter meter(deadline);
    for (size_t i = 0; i < l_.size(); i++) {
      const int j = right_of[lsig_[i]];
      if (j < 0) continue;
      const Series& a = l_[i];
      const Series& b = r_[static_cast<size_t>(j)];
      *st = meter.Add(a.ts.size() + b.ts.size() + 1);
      if (!st->ok()) return true;
      Series o;
      size_t x = 0, y = 0;
      while (x < a.ts.size() && y < b.ts.size()) {
        if (a.ts[x] < b.ts[y]) {
          x++;
        } else if (b.ts[y] < a.ts[x]) {
          y++;
        } else {
          bool keep;
          double v = ElemBinop(e_.op, a.vs[x], b.vs[y], &keep);
          if (e_.return_bool) v = keep ? 1 : 0;
          if (keep || e_.return_bool) {
            o.ts.push_back(a.ts[x]);
            o.vs.push_back(v);
          }
          x++;
          y++;
        }
      }
      if (o.ts.empty()) continue;
      o.metric = ResultMetric(a.metric, b.metric, e_.op, m_);
      // A filtering comparison keeps the left side's labels, so also its
      // pending name removal (Prometheus's delayed mode loses it).
      o.drop_name = e_.return_bool || a.drop_name;
      *points += static_cast<int64_t>(o.ts.size());
      made.emplace_back(o.ts.front(), std::move(o));
    }
    if (!instant) {
      std::stable_sort(
          made.begin(), made.end(),
          [](const auto& p, const auto& q) { return p.first < q.first; });
    }
    out->reserve(made.size());
    for (auto& [first, ser] : made) out->push_back(std::move(ser));
    return true;
  }

 private:
  absl::Status Emit(int64_t t, bool left, const StepPoint& p) {
    const Matrix& mat = left ? l_ : r_;
    uint64_t key = (left ? 0 : 1ULL << 62) | static_cast<uint64_t>(p.series);
    return out_.AddKeyed(key, t, p.v, mat[p.series].drop_name,
                         [&] { return mat[p.series].metric; });
  }

  absl::Status SetOp(int64_t t, const std::vector<StepPoint>& lp,
                     const std::vector<StepPoint>& rp) {
    std::fill(present_.begin(), present_.end(), 0);
    if (e_.op == BinOp::kOr) {
      for (const auto& p : lp) {
        present_[lsig_[p.series]] = 1;
        VIGIL_RETURN_IF_ERROR(Emit(t, true, p));
      }
      for (const auto& p : rp) {
        if (!present_[rsig_[p.series]])
          VIGIL_RETURN_IF_ERROR(Emit(t, false, p));
      }
      return absl::OkStatus();
    }
    for (const auto& p : rp) present_[rsig_[p.series]] = 1;
    for (const auto& p : lp) {
      bool in_r = present_[lsig_[p.series]];
      if (e_.op == BinOp::kAnd ? in_r : !in_r)
        VIGIL_RETURN_IF_ERROR(Emit(t, true, p));
    }
    return absl::OkStatus();
  }

  // Indexes the "one" side by signature; the many-to-many error if a
  // signature repeats.
  absl::Status IndexRight(const std::vector<StepPoint>& rv, const Matrix& rm,
                          const std::vector<int>& rsg, bool swapped) {
    std::fill(present_.begin(), present_.end(), 0);
    for (size_t j = 0; j < rv.size(); j++) {
      int sig = rsg[rv[j].series];
      if (present_[sig]) {
        std::string d1 = rm[rv[j].series].metric.ToString();
        std::string d2 = rm[rv[right_of_[sig]].series].metric.ToString();
        if (d1 > d2) std::swap(d1, d2);
        return absl::FailedPreconditionError(
            fmt::format("found duplicate series for the match group {} on the "
                        "{} hand-side of the "
                        "operation: [{}, {}];many-to-many matching not "
                        "allowed: matching labels must "
                        "be unique on one side",
                        MatchLabels(rm[rv[j].series].metric, m_).ToString(),
                        swapped ? "left" : "right", d1, d2));
      }
      present_[sig] = 1;
      right_of_[sig] = static_cast<int>(j);
    }
    return absl::OkStatus();
  }

  // `lv` is the "many" side (the left one unless group_right swapped them).
  absl::Status Arith(int64_t t, const std::vector<StepPoint>& lv,
                     const std::vector<StepPoint>& rv, const Matrix& lm,
                     const Matrix& rm, const std::vector<int>& lsg,
                     const std::vector<int>& rsg, bool swapped) {
    VIGIL_RETURN_IF_ERROR(IndexRight(rv, rm, rsg, swapped));
    std::fill(matched_.begin(), matched_.end(), 0);
    inserted_.clear();
    for (const auto& ls : lv) {
      int sig = lsg[ls.series];
      if (!present_[sig]) continue;
      const StepPoint& rs = rv[right_of_[sig]];
      double fl = swapped ? rs.v : ls.v, fr = swapped ? ls.v : rs.v;
      bool keep;
      double v = ElemBinop(e_.op, fl, fr, &keep);
      if (e_.return_bool) v = keep ? 1 : 0;
      const uint64_t key =
          static_cast<uint64_t>(ls.series) * (rm.size() + 1) + rs.series;
      auto make = [&] {
        return ResultMetric(lm[ls.series].metric, rm[rs.series].metric, e_.op,
                            m_);
      };
      if (m_.card == Cardinality::kOneToOne) {
        if (matched_[sig]) {
          return absl::FailedPreconditionError(
              "multiple matches for labels: many-to-one matching must be "
              "explicit "
              "(group_left/group_right)");
        }
        matched_[sig] = 1;
      } else {
        auto [it, fresh] = label_hash_.try_emplace(key, 0);
        if (fresh) {
          it->second = unique_without_name_ ? DropMetricName(make()).Hash()
                                            : make().Hash();
        }
        if (!inserted_
                 .try_emplace(it->second * 31 + static_cast<uint64_t>(sig), 1)
                 .second) {
          return absl::FailedPreconditionError(
              "multiple matches for labels: grouping labels must ensure unique "
              "matches");
        }
      }
      if (!keep && !e_.return_bool) continue;
      const bool drop = e_.return_bool || lm[ls.series].drop_name;
      VIGIL_RETURN_IF_ERROR(out_.AddKeyed(key, t, v, drop, make));
    }
    return absl::OkStatus();
  }

  const BinaryExpr& e_;
  const VectorMatching& m_;
  const Matrix& l_;
  const Matrix& r_;
  MatrixBuilder out_;
  std::vector<int> lsig_, rsig_;
  std::vector<char> present_, matched_;
  std::vector<int> right_of_;
  absl::flat_hash_map<uint64_t, char> inserted_;
  absl::flat_hash_map<uint64_t, uint64_t> label_hash_;
  bool unique_without_name_;
};

// Vector op scalar (or scalar op vector when `swap`), series at a time.
Matrix VectorScalar(const BinaryExpr& e, Matrix vec,
                    const std::vector<double>& sc, bool swap,
                    const Evaluator& ev) {
  const BinOp op = e.op;
  Matrix out;
  for (Series& s : vec) {
    size_t k = 0;
    for (size_t i = 0; i < s.ts.size(); i++) {
      double sv = sc[ev.StepIndex(s.ts[i])];
      double lf = swap ? sv : s.vs[i], rf = swap ? s.vs[i] : sv;
      bool keep;
      double v = ElemBinop(op, lf, rf, &keep);
      if (IsComparison(op) && swap) v = rf;
      if (e.return_bool) {
        v = keep ? 1 : 0;
        keep = true;
      }
      if (!keep) continue;
      s.ts[k] = s.ts[i];
      s.vs[k] = v;
      k++;
    }
    s.ts.resize(k);
    s.vs.resize(k);
    if (ChangesSchema(op) || e.return_bool) s.drop_name = true;
    if (k > 0) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

absl::StatusOr<EvalValue> Evaluator::EvalBinary(const BinaryExpr& e) {
  VIGIL_ASSIGN_OR_RETURN(EvalValue l, Eval(*e.lhs));
  VIGIL_ASSIGN_OR_RETURN(EvalValue r, Eval(*e.rhs));
  if (l.type == ValueType::kScalar && r.type == ValueType::kScalar) {
    for (size_t i = 0; i < l.scalar.size(); i++) {
      bool keep;
      double v = ElemBinop(e.op, l.scalar[i], r.scalar[i], &keep);
      l.scalar[i] = IsComparison(e.op) ? (keep ? 1 : 0) : v;
    }
    return l;
  }
  if (l.type == ValueType::kScalar)
    return MakeVector(VectorScalar(e, std::move(r.mat), l.scalar, true, *this));
  if (r.type == ValueType::kScalar)
    return MakeVector(
        VectorScalar(e, std::move(l.mat), r.scalar, false, *this));
  VectorVector vv(e, l.mat, r.mat, instant(),
                  !opts_.enable_delayed_name_removal);
  Matrix by_series;
  int64_t points = 0;
  absl::Status st;
  if (vv.OneToOneBySeries(instant(), deadline(), &by_series, &points, &st)) {
    VIGIL_RETURN_IF_ERROR(st);
    VIGIL_RETURN_IF_ERROR(AddSamples(points));
    return MakeVector(std::move(by_series));
  }
  StepCursor lc(l.mat, start_, interval_, num_steps());
  StepCursor rc(r.mat, start_, interval_, num_steps());
  std::vector<StepPoint> lp, rp;
  for (int64_t t = start_; t <= end_; t += interval_) {
    VIGIL_RETURN_IF_ERROR(CheckDeadline());
    lc.Gather(t, &lp);
    rc.Gather(t, &rp);
    VIGIL_RETURN_IF_ERROR(vv.Step(t, lp, rp));
  }
  VIGIL_RETURN_IF_ERROR(AddSamples(vv.out().points()));
  return MakeVector(vv.out().Finish());
}

}  // namespace vigil::promql::internal
