// Error kinds live in the status code (parse vs evaluation vs timeout vs
// cancellation), and a QueryContext stops a running query promptly.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "promql/engine.h"
#include "promql/promqltest/storage.h"

namespace vigil::promql {
namespace {

using Clock = std::chrono::steady_clock;

promqltest::MemStorage MakeErrorsStorage() {
  promqltest::MemStorage s;
  for (int i = 0; i <= 10; i++) {
    const int64_t t = i * 60000;
    s.Append(Labels{{"__name__", "a"}, {"job", "x"}}, t, i);
    s.Append(Labels{{"__name__", "a"}, {"job", "y"}}, t, i);
    s.Append(Labels{{"__name__", "b"}, {"job", "x"}}, t, 2 * i);
    s.Append(Labels{{"__name__", "b"}, {"job", "x"}, {"k", "1"}}, t, 3 * i);
  }
  return s;
}

ErrorType Kind(const absl::StatusOr<Result>& r) {
  return ClassifyError(r.status());
}

TEST_CASE("a query that does not parse is bad_data", "[promql][errors]") {
  auto s = MakeErrorsStorage();
  Engine e;
  auto r = e.InstantQuery(&s, "sum(", 0);
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(Kind(r) == ErrorType::kBadData);
  CHECK(ErrorTypeName(Kind(r)) == "bad_data");
  // So are malformed requests, checked before evaluation.
  CHECK(Kind(e.RangeQuery(&s, "a", 60000, 0, 1000)) == ErrorType::kBadData);
  CHECK(Kind(e.RangeQuery(&s, "a", 0, 60000, 0)) == ErrorType::kBadData);
  CHECK(Kind(e.RangeQuery(&s, "a[5m]", 0, 60000, 1000)) == ErrorType::kBadData);
}

TEST_CASE("failures during evaluation are execution errors, not bad_data",
          "[promql][errors]") {
  auto s = MakeErrorsStorage();
  Engine e;
  const char* queries[] = {
      // many-to-many matching
      "a + on(job) b",
      // many-to-one without group_left
      "b + on(job) group_right a",
      // identical series once the names go (default mode)
      "sum(rate({__name__=~\"a|b\",k=\"\"}[5m])) + "
      "rate({__name__=~\"a|b\"}[5m])",
      // bad parameters found only at run time
      "topk(scalar(vector(NaN)), a)",
      "count_values(\"\", a)",
      "label_replace(a, \"dst\", \"$1\", \"job\", \"(\")",
  };
  for (const char* q : queries) {
    CAPTURE(q);
    auto r = e.InstantQuery(&s, q, 600000);
    REQUIRE(!r.ok());
    CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK(Kind(r) == ErrorType::kExecution);
  }
  EngineOptions small;
  small.max_samples = 3;
  auto r = Engine(small).InstantQuery(&s, "a[10m]", 600000);
  CHECK(r.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(Kind(r) == ErrorType::kExecution);
  r = e.InstantQuery(&s, "histogram_count(a)", 600000);
  CHECK(Kind(r) == ErrorType::kExecution);
  CHECK(ErrorTypeName(ErrorType::kExecution) == "execution");
}

TEST_CASE("a grid of more steps than the sample limit fails before evaluating",
          "[promql][errors]") {
  // A subquery (or range query) with more steps than max_samples could
  // otherwise allocate per-step arrays far beyond the limit (a scalar under
  // `[10d:1ms]` is 864 M doubles) or step for minutes through a sparse
  // series: it fails at once, as the sample limit does.
  auto s = MakeErrorsStorage();
  LimitCounters counters;
  EngineOptions o;
  o.max_samples = 1000;
  o.limit_counters = &counters;
  Engine e(o);
  for (const char* q :
       {"count_over_time(a[2h:1s])", "count_over_time(vector(1)[10d:1ms])",
        "max_over_time(sum(a)[100y:1ms])", "absent_over_time(nope[1h:1ms])"}) {
    CAPTURE(q);
    auto r = e.InstantQuery(&s, q, 600000);
    REQUIRE(r.status().code() == absl::StatusCode::kResourceExhausted);
    CHECK(std::string(r.status().message()) ==
          "query processing would load too many samples into memory in query "
          "execution");
  }
  CHECK(counters.max_samples.load() == 4);
  auto r = e.RangeQuery(&s, "a", 0, 600000, 100);  // 6001 steps
  CHECK(r.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(counters.max_samples.load() == 5);
  // A grid within the limit evaluates: 300 steps of 1 s (600 samples).
  auto ok = e.InstantQuery(&s, "count_over_time(a[5m:1s])", 600000);
  REQUIRE(ok.ok());
  REQUIRE(ok->value.vector.size() == 2);
  CHECK(ok->value.vector[0].v == 300);
  CHECK(e.RangeQuery(&s, "a", 0, 600000, 2000).ok());  // 301 steps
}

TEST_CASE("ClassifyError maps every code as the Prometheus API does",
          "[promql][errors]") {
  CHECK(ClassifyError(absl::OkStatus()) == ErrorType::kNone);
  CHECK(ClassifyError(absl::DeadlineExceededError("x")) == ErrorType::kTimeout);
  CHECK(ClassifyError(absl::CancelledError("x")) == ErrorType::kCanceled);
  CHECK(ClassifyError(absl::DataLossError("x")) == ErrorType::kInternal);
  CHECK(ClassifyError(absl::InternalError("x")) == ErrorType::kInternal);
  CHECK(ClassifyError(absl::UnavailableError("x")) == ErrorType::kInternal);
  CHECK(ClassifyError(absl::UnimplementedError("x")) == ErrorType::kExecution);
  CHECK(ErrorTypeName(ErrorType::kTimeout) == "timeout");
  CHECK(ErrorTypeName(ErrorType::kCanceled) == "canceled");
  CHECK(ErrorTypeName(ErrorType::kInternal) == "internal");
}

// One series sampled every second for a day and a bit: quantile_over_time
// over a one-day subquery sorts ~86400 values per step, milliseconds each,
// so 2000 steps take seconds (about 10 s on the shared CI machine).
promqltest::MemStorage SlowStorage() {
  promqltest::MemStorage s;
  Labels l{{"__name__", "g"}};
  for (int64_t k = 0; k < 40000; k++) s.Append(l, k * 15000, k % 97);
  return s;
}
constexpr char kSlowQuery[] = "quantile_over_time(0.5, g[1d:1s])";
constexpr int64_t kSlowStart = 86400000, kSlowStep = 60000;

TEST_CASE("a cancelled query ends within 100 ms with Cancelled",
          "[promql][errors][context][concurrency]") {
  auto s = SlowStorage();
  EngineOptions o;
  o.max_samples = 50000000;
  Engine e(o);
  // The cost of one step, to show the full query would run for seconds.
  auto t0 = Clock::now();
  REQUIRE(e.RangeQuery(&s, kSlowQuery, kSlowStart, kSlowStart + 9 * kSlowStep,
                       kSlowStep)
              .ok());
  const double per_step_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / 10;
  const int steps = 2000;
  INFO("estimated full run: " << per_step_ms * steps << " ms");
  CHECK(per_step_ms * steps > 2000);

  QueryContext ctx;
  std::atomic<bool> done{false};
  absl::StatusOr<Result> r;
  Clock::time_point finished;
  std::thread th([&] {
    r = e.RangeQuery(&s, kSlowQuery, kSlowStart,
                     kSlowStart + (steps - 1) * kSlowStep, kSlowStep, &ctx);
    finished = Clock::now();
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(!done);  // still running
  const auto cancelled_at = Clock::now();
  ctx.Cancel();
  th.join();
  const double latency_ms =
      std::chrono::duration<double, std::milli>(finished - cancelled_at)
          .count();
  INFO("ended " << latency_ms << " ms after Cancel()");
  CHECK(latency_ms < 100);
  REQUIRE(!r.ok());
  CHECK(r.status().code() == absl::StatusCode::kCancelled);
  CHECK(std::string(r.status().message()) ==
        "query was canceled in expression evaluation");
  CHECK(ClassifyError(r.status()) == ErrorType::kCanceled);
}

TEST_CASE("a context given a flag (CancelWhen) ends when the flag is set",
          "[promql][errors][context][concurrency]") {
  // The HTTP API's case: the flag is the request's client_gone, set by the
  // server's watcher when the client hangs up; nothing calls Cancel().
  auto s = SlowStorage();
  EngineOptions o;
  o.max_samples = 50000000;
  o.timeout_ms = 0;
  Engine e(o);
  std::atomic<bool> gone{false};
  QueryContext ctx;
  ctx.CancelWhen(&gone);
  CHECK(!ctx.cancelled());
  std::atomic<bool> done{false};
  absl::StatusOr<Result> r;
  Clock::time_point finished;
  std::thread th([&] {
    r = e.RangeQuery(&s, kSlowQuery, kSlowStart, kSlowStart + 1999 * kSlowStep,
                     kSlowStep, &ctx);
    finished = Clock::now();
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(!done);  // still running
  const auto set_at = Clock::now();
  gone = true;
  th.join();
  const double latency_ms =
      std::chrono::duration<double, std::milli>(finished - set_at).count();
  INFO("ended " << latency_ms << " ms after the flag was set");
  CHECK(latency_ms < 100);
  REQUIRE(!r.ok());
  CHECK(r.status().code() == absl::StatusCode::kCancelled);
  CHECK(ctx.cancelled());
  // A null flag is no flag.
  QueryContext plain;
  plain.CancelWhen(nullptr);
  CHECK(!plain.cancelled());
  CHECK(e.InstantQuery(&s, "g", kSlowStart, &plain).ok());
}

TEST_CASE("a context's deadline ends a query with DeadlineExceeded",
          "[promql][errors][context]") {
  auto s = SlowStorage();
  EngineOptions o;
  o.max_samples = 50000000;
  o.timeout_ms = 0;  // only the context's deadline applies
  QueryContext ctx(Clock::now() + std::chrono::milliseconds(100));
  auto t0 = Clock::now();
  auto r = Engine(o).RangeQuery(&s, kSlowQuery, kSlowStart,
                                kSlowStart + 1999 * kSlowStep, kSlowStep, &ctx);
  const double took_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  REQUIRE(!r.ok());
  CHECK(r.status().code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(ClassifyError(r.status()) == ErrorType::kTimeout);
  CHECK(took_ms < 300);
}

TEST_CASE("a context cancelled before the query starts stops it at once",
          "[promql][errors][context]") {
  auto s = MakeErrorsStorage();
  QueryContext ctx;
  ctx.Cancel();
  auto r = Engine().InstantQuery(&s, "a", 0, &ctx);
  CHECK(r.status().code() == absl::StatusCode::kCancelled);
  // Without a context, or with a live one, the same query runs.
  QueryContext live;
  CHECK(Engine().InstantQuery(&s, "a", 0, &live).ok());
  CHECK(Engine().InstantQuery(&s, "a", 0).ok());
}

}  // namespace
}  // namespace vigil::promql
