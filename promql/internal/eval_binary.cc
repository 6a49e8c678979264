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
    case BinOp::kAdd: return l + r;
    case BinOp::kSub: return l - r;
    case BinOp::kMul: return l * r;
    case BinOp::kDiv: return l / r;
    case BinOp::kPow: return GoPow(l, r);
    case BinOp::kMod: return GoMod(l, r);
    case BinOp::kAtan2: return std::atan2(l, r);
    case BinOp::kEql: *keep = l == r; return l;
    case BinOp::kNeq: *keep = l != r; return l;
    case BinOp::kGtr: *keep = l > r; return l;
    case BinOp::kLss: *keep = l < r; return l;
    case BinOp::kGte: *keep = l >= r; return l;
    case BinOp::kLte: *keep = l <= r; return l;
    default: *keep = false; return 0;
  }
}

bool ChangesSchema(BinOp op) { return !IsComparison(op) && !IsSetOperator(op); }

// The matching signature of `l` under `m` (on: only the listed labels;
// ignoring: all but the listed ones and __name__).
std::string Signature(const Labels& l, const VectorMatching& m) {
  std::string sig;
  for (const Label& x : l) {
    bool listed = std::find(m.matching_labels.begin(), m.matching_labels.end(), x.name) !=
                  m.matching_labels.end();
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
    bool listed = std::find(m.matching_labels.begin(), m.matching_labels.end(), x.name) !=
                  m.matching_labels.end();
    if (m.on ? listed : !(listed || x.name == kMetricName)) out.push_back(x);
  }
  return Labels::FromSorted(std::move(out));
}

Labels ResultMetric(const Labels& lhs, const Labels& rhs, BinOp op, const VectorMatching& m) {
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

}  // namespace

absl::StatusOr<EvalValue> Evaluator::EvalBinary(const BinaryExpr& e) {
  VIGIL_ASSIGN_OR_RETURN(EvalValue l, Eval(*e.lhs));
  VIGIL_ASSIGN_OR_RETURN(EvalValue r, Eval(*e.rhs));
  const BinOp op = e.op;
  if (l.type == ValueType::kScalar && r.type == ValueType::kScalar) {
    for (size_t i = 0; i < l.scalar.size(); i++) {
      bool keep;
      double v = ElemBinop(op, l.scalar[i], r.scalar[i], &keep);
      l.scalar[i] = IsComparison(op) ? (keep ? 1 : 0) : v;
    }
    return l;
  }
  if (l.type == ValueType::kScalar || r.type == ValueType::kScalar) {
    const bool swap = l.type == ValueType::kScalar;
    EvalValue& vec = swap ? r : l;
    const std::vector<double>& sc = swap ? l.scalar : r.scalar;
    Matrix out;
    for (Series& s : vec.mat) {
      size_t k = 0;
      for (size_t i = 0; i < s.ts.size(); i++) {
        double sv = sc[StepIndex(s.ts[i])];
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
    return MakeVector(std::move(out));
  }
  // Vector / vector.
  const VectorMatching& m = *e.matching;
  std::vector<int> lsig(l.mat.size()), rsig(r.mat.size());
  {
    absl::flat_hash_map<std::string, int> ord;
    for (size_t i = 0; i < l.mat.size(); i++) {
      lsig[i] = ord.try_emplace(Signature(l.mat[i].metric, m), static_cast<int>(ord.size())).first->second;
    }
    for (size_t i = 0; i < r.mat.size(); i++) {
      rsig[i] = ord.try_emplace(Signature(r.mat[i].metric, m), static_cast<int>(ord.size())).first->second;
    }
  }
  const size_t nsig = std::max<size_t>(1, l.mat.size() + r.mat.size());
  MatrixBuilder out(instant());
  StepCursor lc(&l.mat), rc(&r.mat);
  std::vector<StepPoint> lp, rp;
  std::vector<char> present(nsig);
  std::vector<int> right_of(nsig);
  std::vector<char> matched(nsig);
  absl::flat_hash_map<uint64_t, char> inserted;
  for (int64_t t = start_; t <= end_; t += interval_) {
    VIGIL_RETURN_IF_ERROR(CheckDeadline());
    lc.Gather(t, &lp);
    rc.Gather(t, &rp);
    auto emit = [&](const Matrix& mat, const StepPoint& p) {
      uint64_t key = (&mat == &l.mat ? 0 : 1ULL << 62) | static_cast<uint64_t>(p.series);
      return out.AddKeyed(key, t, p.v, mat[p.series].drop_name,
                          [&] { return mat[p.series].metric; });
    };
    if (IsSetOperator(op)) {
      std::fill(present.begin(), present.end(), 0);
      if (op == BinOp::kOr) {
        for (const auto& p : lp) {
          present[lsig[p.series]] = 1;
          VIGIL_RETURN_IF_ERROR(emit(l.mat, p));
        }
        for (const auto& p : rp) {
          if (!present[rsig[p.series]]) VIGIL_RETURN_IF_ERROR(emit(r.mat, p));
        }
        continue;
      }
      for (const auto& p : rp) present[rsig[p.series]] = 1;
      for (const auto& p : lp) {
        bool in_r = present[lsig[p.series]];
        if (op == BinOp::kAnd ? in_r : !in_r) VIGIL_RETURN_IF_ERROR(emit(l.mat, p));
      }
      continue;
    }
    if (lp.empty() || rp.empty()) continue;
    const bool one_to_many = m.card == Cardinality::kOneToMany;
    const Matrix& lm = one_to_many ? r.mat : l.mat;
    const Matrix& rm = one_to_many ? l.mat : r.mat;
    const std::vector<int>& lsg = one_to_many ? rsig : lsig;
    const std::vector<int>& rsg = one_to_many ? lsig : rsig;
    const std::vector<StepPoint>& lv = one_to_many ? rp : lp;
    const std::vector<StepPoint>& rv = one_to_many ? lp : rp;
    std::fill(present.begin(), present.end(), 0);
    std::fill(matched.begin(), matched.end(), 0);
    inserted.clear();
    for (size_t j = 0; j < rv.size(); j++) {
      int sig = rsg[rv[j].series];
      if (present[sig]) {
        std::string d1 = rm[rv[j].series].metric.ToString();
        std::string d2 = rm[rv[right_of[sig]].series].metric.ToString();
        if (d1 > d2) std::swap(d1, d2);
        return absl::InvalidArgumentError(fmt::format(
            "found duplicate series for the match group {} on the {} hand-side of the "
            "operation: [{}, {}];many-to-many matching not allowed: matching labels must "
            "be unique on one side",
            MatchLabels(rm[rv[j].series].metric, m).ToString(), one_to_many ? "left" : "right",
            d1, d2));
      }
      present[sig] = 1;
      right_of[sig] = static_cast<int>(j);
    }
    for (const auto& ls : lv) {
      int sig = lsg[ls.series];
      if (!present[sig]) continue;
      const StepPoint& rs = rv[right_of[sig]];
      double fl = ls.v, fr = rs.v;
      if (one_to_many) std::swap(fl, fr);
      bool keep;
      double v = ElemBinop(op, fl, fr, &keep);
      if (e.return_bool) v = keep ? 1 : 0;
      const uint64_t key = static_cast<uint64_t>(ls.series) * (rm.size() + 1) + rs.series;
      auto make = [&] { return ResultMetric(lm[ls.series].metric, rm[rs.series].metric, op, m); };
      if (m.card == Cardinality::kOneToOne) {
        if (matched[sig]) {
          return absl::InvalidArgumentError(
              "multiple matches for labels: many-to-one matching must be explicit "
              "(group_left/group_right)");
        }
        matched[sig] = 1;
      } else {
        uint64_t h = make().Hash() * 31 + static_cast<uint64_t>(sig);
        if (!inserted.try_emplace(h, 1).second) {
          return absl::InvalidArgumentError(
              "multiple matches for labels: grouping labels must ensure unique matches");
        }
      }
      if (!keep && !e.return_bool) continue;
      VIGIL_RETURN_IF_ERROR(out.AddKeyed(key, t, v, e.return_bool, make));
    }
  }
  VIGIL_RETURN_IF_ERROR(AddSamples(out.points()));
  return MakeVector(out.Finish());
}

}  // namespace vigil::promql::internal
