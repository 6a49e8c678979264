// -----------------------------------------------------------------------------
// File: value.h
// -----------------------------------------------------------------------------
//
// The values a PromQL query evaluates to, as in Prometheus's promql/value.go
// (float samples only): an instant vector (`Vector` of `Sample`s), a range
// vector (`Matrix` of `Series`, each with columnar timestamps and values), a
// `Scalar` and a `String`. `Value` holds exactly one of them. All are plain
// values that own their data (labels, points, strings): nothing refers back
// to the engine, the storage or the query text. Header-only.
#ifndef VIGIL_PROMQL_VALUE_H_
#define VIGIL_PROMQL_VALUE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/labels.h"
#include "core/time.h"
#include "promql/ast.h"

namespace vigil::promql {

// One sample of an instant vector. `t` is the evaluation time.
struct Sample {
  Labels metric;
  Timestamp t = 0;
  double v = 0;
};
using Vector = std::vector<Sample>;

// A series of a range vector (or of a range query's result), columnar:
// ts[i] is the time of vs[i]; ts is strictly increasing.
struct Series {
  Labels metric;
  std::vector<int64_t> ts;
  std::vector<double> vs;
  // Evaluation-internal: the metric name is to be dropped when the query
  // finishes (Prometheus 3's delayed __name__ removal). Always false in a
  // Result returned by the engine.
  bool drop_name = false;

  size_t size() const { return ts.size(); }
};
using Matrix = std::vector<Series>;

struct Scalar {
  Timestamp t = 0;
  double v = 0;
};

struct String {
  Timestamp t = 0;
  std::string v;
};

// The result of a query: `type` says which member is meaningful.
// Instant queries give kVector, kScalar, kString or kMatrix (for a top-level
// range vector such as `foo[5m]`); range queries always give kMatrix, sorted
// by labels.
struct Value {
  ValueType type = ValueType::kNone;
  Vector vector;
  Matrix matrix;
  Scalar scalar;
  String string;
};

}  // namespace vigil::promql

#endif  // VIGIL_PROMQL_VALUE_H_
