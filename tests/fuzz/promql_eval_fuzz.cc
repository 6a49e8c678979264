// libFuzzer target: PromQL evaluation (promql/engine.h) of an arbitrary
// expression over a small fixed in-memory database (promqltest's
// MemStorage): counters with a reset, gauges with NaN, +-Inf and a staleness
// marker, classic histogram buckets and a sparse series.
// Each input is evaluated as an instant query and as a short range query,
// with a small sample limit and timeout so that no expression can take the
// fuzzer's memory or time. Besides not crashing: every failure carries one
// of the engine's documented status codes, and a range query's matrix has
// one point at most per step.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "core/labels.h"
#include "core/time.h"
#include "promql/engine.h"
#include "promql/promqltest/storage.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace promql = vigil::promql;
using vigil::Labels;

constexpr int64_t kStep = 30000;  // 30 s between samples
constexpr int64_t kSamples = 41;  // 0 .. 20 min
constexpr int64_t kEnd = kStep * (kSamples - 1);

promql::promqltest::MemStorage* Db() {
  static auto* db = [] {
    auto* s = new promql::promqltest::MemStorage();
    const double inf = std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < kSamples; i++) {
      const int64_t t = i * kStep;
      for (const char* job : {"api", "db"}) {
        for (const char* inst : {"a:9100", "b:9100"}) {
          double base = job[0] == 'a' ? 3 : 7;
          double c = (i < 25 ? i : i - 25) * base;  // a counter reset at 25
          s->Append(Labels{{"__name__", "http_requests_total"},
                           {"instance", inst},
                           {"job", job}},
                    t, c + (inst[0] == 'b' ? 1 : 0));
          s->Append(Labels{{"__name__", "cpu_usage"},
                           {"instance", inst},
                           {"job", job},
                           {"mode", i % 2 ? "user" : "system"}},
                    t, 0.25 * (i % 7) - 0.5);
        }
      }
      double g = i == 5    ? std::nan("")
                 : i == 9  ? inf
                 : i == 10 ? -inf
                 : i == 20 ? vigil::StaleNaN()
                           : 1.5 * (i % 5);
      s->Append(Labels{{"__name__", "gauge"}, {"kind", "odd"}}, t, g);
      for (const char* le : {"0.1", "0.5", "1", "+Inf"}) {
        double f = le[0] == '+' ? 1.0 : std::atof(le);
        s->Append(Labels{{"__name__", "latency_seconds_bucket"},
                         {"job", "api"},
                         {"le", le}},
                  t, std::floor(i * 10 * (f > 1 ? 1 : f)));
      }
      s->Append(Labels{{"__name__", "latency_seconds_count"}, {"job", "api"}},
                t, i * 10);
      s->Append(Labels{{"__name__", "latency_seconds_sum"}, {"job", "api"}}, t,
                i * 2.5);
      s->Append(Labels{{"__name__", "up"}, {"job", "api"}}, t, i % 9 ? 1 : 0);
      if (i % 3 == 0) {
        s->Append(Labels{{"__name__", "sparse"}, {"env", "dev"}, {"x", "1"}}, t,
                  -static_cast<double>(i));
      }
    }
    return s;
  }();
  return db;
}

const promql::Engine& Eng() {
  static const promql::Engine engine([] {
    promql::EngineOptions o;
    o.max_samples = 20000;
    o.timeout_ms = 2000;
    o.enable_delayed_name_removal = true;
    return o;
  }());
  return engine;
}

void CheckStatus(const absl::Status& s, std::string_view query) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kDeadlineExceeded:
      return;
    default:
      FUZZ_CHECK(false, std::string(query) + ": " + s.ToString());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 2048) return 0;
  std::string_view q(reinterpret_cast<const char*>(data), size);
  auto* db = Db();
  auto inst = Eng().InstantQuery(db, q, kEnd - 60000);
  if (!inst.ok()) {
    CheckStatus(inst.status(), q);
    // A query that does not parse fails the same way as a range query.
    if (inst.status().code() == absl::StatusCode::kInvalidArgument) return 0;
  }
  const int64_t start = 120000, end = kEnd + 60000, step = 60000;
  auto range = Eng().RangeQuery(db, q, start, end, step);
  if (!range.ok()) {
    CheckStatus(range.status(), q);
    return 0;
  }
  const size_t steps = (end - start) / step + 1;
  FUZZ_CHECK(range->value.type == promql::ValueType::kMatrix,
             std::string(q) + ": a range query that is not a matrix");
  for (const auto& s : range->value.matrix) {
    FUZZ_CHECK(s.ts.size() == s.vs.size() && s.ts.size() <= steps,
               std::string(q) + ": bad series in a range result");
    for (size_t i = 0; i < s.ts.size(); i++) {
      FUZZ_CHECK(s.ts[i] >= start && s.ts[i] <= end &&
                     (s.ts[i] - start) % step == 0 &&
                     (i == 0 || s.ts[i] > s.ts[i - 1]),
                 std::string(q) + ": a point off the steps");
    }
  }
  return 0;
}
