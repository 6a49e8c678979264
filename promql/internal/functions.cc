// The PromQL function table (Prometheus promql/parser/functions.go): names,
// argument types, arity and return type. Evaluation lives elsewhere.
#include <algorithm>
#include <vector>

#include "promql/ast.h"
#include "promql/internal/parser.h"

namespace vigil::promql {
namespace {

constexpr ValueType S = ValueType::kScalar;
constexpr ValueType V = ValueType::kVector;
constexpr ValueType M = ValueType::kMatrix;
constexpr ValueType T = ValueType::kString;

struct Flags {
  bool experimental = false;
  bool native = false;
};
constexpr Flags kExp{true, false};
constexpr Flags kNative{false, true};

Function F(std::string_view name, std::vector<ValueType> args, ValueType ret,
           int variadic = 0, Flags flags = {}) {
  Function f;
  f.name = name;
  f.arg_types = std::move(args);
  f.variadic = variadic;
  f.return_type = ret;
  f.experimental = flags.experimental;
  f.native_histogram = flags.native;
  return f;
}

std::vector<Function> MakeTable() {
  std::vector<Function> t = {
      F("abs", {V}, V),
      F("absent", {V}, V),
      F("absent_over_time", {M}, V),
      F("acos", {V}, V),
      F("acosh", {V}, V),
      F("asin", {V}, V),
      F("asinh", {V}, V),
      F("atan", {V}, V),
      F("atanh", {V}, V),
      F("avg_over_time", {M}, V),
      F("ceil", {V}, V),
      F("changes", {M}, V),
      F("clamp", {V, S, S}, V),
      F("clamp_max", {V, S}, V),
      F("clamp_min", {V, S}, V),
      F("cos", {V}, V),
      F("cosh", {V}, V),
      F("count_over_time", {M}, V),
      F("days_in_month", {V}, V, 1),
      F("day_of_month", {V}, V, 1),
      F("day_of_week", {V}, V, 1),
      F("day_of_year", {V}, V, 1),
      F("deg", {V}, V),
      F("delta", {M}, V),
      F("deriv", {M}, V),
      F("exp", {V}, V),
      F("first_over_time", {M}, V),
      F("floor", {V}, V),
      F("histogram_avg", {V}, V, 0, kNative),
      F("histogram_count", {V}, V, 0, kNative),
      F("histogram_sum", {V}, V, 0, kNative),
      F("histogram_stddev", {V}, V, 0, kNative),
      F("histogram_stdvar", {V}, V, 0, kNative),
      F("histogram_fraction", {S, S, V}, V, 0, kNative),
      F("histogram_quantile", {S, V}, V),
      F("histogram_quantiles", {V, T, S, S}, V, 9, {true, true}),
      F("double_exponential_smoothing", {M, S, S}, V, 0, kExp),
      F("hour", {V}, V, 1),
      F("idelta", {M}, V),
      F("increase", {M}, V),
      F("info", {V, V}, V, 1, kExp),
      F("irate", {M}, V),
      F("label_replace", {V, T, T, T, T}, V),
      F("label_join", {V, T, T, T}, V, -1),
      F("last_over_time", {M}, V),
      F("ln", {V}, V),
      F("log10", {V}, V),
      F("log2", {V}, V),
      F("mad_over_time", {M}, V, 0, kExp),
      F("max_over_time", {M}, V),
      F("min_over_time", {M}, V),
      F("ts_of_first_over_time", {M}, V, 0, kExp),
      F("ts_of_last_over_time", {M}, V, 0, kExp),
      F("ts_of_max_over_time", {M}, V, 0, kExp),
      F("ts_of_min_over_time", {M}, V, 0, kExp),
      F("minute", {V}, V, 1),
      F("month", {V}, V, 1),
      F("pi", {}, S),
      F("predict_linear", {M, S}, V),
      F("present_over_time", {M}, V),
      F("quantile_over_time", {S, M}, V),
      F("rad", {V}, V),
      F("rate", {M}, V),
      F("resets", {M}, V),
      F("round", {V, S}, V, 1),
      F("scalar", {V}, S),
      F("sgn", {V}, V),
      F("sin", {V}, V),
      F("sinh", {V}, V),
      F("sort", {V}, V),
      F("sort_desc", {V}, V),
      F("sort_by_label", {V, T}, V, -1, kExp),
      F("sort_by_label_desc", {V, T}, V, -1, kExp),
      F("sqrt", {V}, V),
      F("start_timestamp", {V}, V, 0, kExp),
      F("stddev_over_time", {M}, V),
      F("stdvar_over_time", {M}, V),
      F("sum_over_time", {M}, V),
      F("tan", {V}, V),
      F("tanh", {V}, V),
      F("time", {}, S),
      F("timestamp", {V}, V),
      F("vector", {S}, V),
      F("year", {V}, V, 1),
      // Experimental "preprocessor" functions usable as plain calls.
      F("start", {}, S, 0, kExp),
      F("end", {}, S, 0, kExp),
      F("step", {}, S, 0, kExp),
      F("range", {}, S, 0, kExp),
      F("max_of", {S, S}, S, 0, kExp),
      F("min_of", {S, S}, S, 0, kExp),
  };
  std::sort(t.begin(), t.end(), [](const Function& a, const Function& b) {
    return a.name < b.name;
  });
  return t;
}

}  // namespace

namespace internal {

const std::vector<Function>& FunctionTable() {
  static const auto* table = new std::vector<Function>(MakeTable());
  return *table;
}

}  // namespace internal

}  // namespace vigil::promql
