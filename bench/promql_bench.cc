// Google Benchmarks of the PromQL engine, mirroring the shape of
// Prometheus's promql/bench_test.go: N = 10, 100, 1000 series of counters
// a_N and b_N and a classic histogram h_N_bucket (5 buckets per series),
// 6 h of data at 15 s; range queries over the last hour at a 15 s step.
//
// Side by side with Prometheus: bench/compare_query.sh sets
//   VIGIL_BENCH_DIR=<imported data dir>  VIGIL_BENCH_QUERIES=<file, one per
//   line> VIGIL_BENCH_START / VIGIL_BENCH_END (ms)  VIGIL_BENCH_STEP (ms)
// and this binary then times those queries on that directory instead.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/process.h"
#include "promql/engine.h"
#include "storage/db.h"

namespace vigil {
namespace {

constexpr Timestamp kStart = 1767225600000;  // 2026-01-01T00:00:00Z
constexpr int64_t kStep = 15000;
constexpr int kSamples = 6 * 3600 * 1000 / kStep;
constexpr Timestamp kEnd = kStart + (kSamples - 1) * kStep;

// Databases in temporary directories, each built on first use by its
// `fill`, removed at exit.
class Fixture {
 public:
  using Fill = std::function<void(storage::DB*)>;
  static storage::DB* Get(const std::string& name, const Fill& fill) {
    auto& f = All()[name];
    if (!f) f.reset(new Fixture(name, fill));
    return f->db_.get();
  }
  // Closes and removes every fixture; call before main returns (RocksDB
  // must not be closed during static destruction).
  static void CleanupAll() { All().clear(); }
  ~Fixture() {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

 private:
  static std::map<std::string, std::unique_ptr<Fixture>>& All() {
    static auto* all = new std::map<std::string, std::unique_ptr<Fixture>>();
    return *all;
  }
  Fixture(const std::string& name, const Fill& fill) {
    dir_ = (std::filesystem::temp_directory_path() /
            ("vigil-promql-bench-" + std::to_string(getpid()) + "-" + name))
               .string();
    std::filesystem::remove_all(dir_);
    storage::Options o;
    o.write_wal = false;
    o.retention_ms = 0;
    db_ = std::move(*storage::DB::Open(o, dir_));
    fill(db_.get());
  }
  std::string dir_;
  std::unique_ptr<storage::DB> db_;
};

// Appends `samples` samples of every series of `labels`, `step` ms apart
// from kStart, one commit per timestamp; sample s of series k is
// s * (base + k % mod): counters growing at different rates.
void AppendCounters(storage::DB* db, const std::vector<Labels>& labels,
                    int samples, int64_t step, int base, int mod) {
  std::vector<storage::SeriesRef> refs(labels.size());
  for (int s = 0; s < samples; ++s) {
    auto app = db->NewAppender();
    for (size_t k = 0; k < labels.size(); ++k) {
      double v = double(s) * double(base + static_cast<int>(k) % mod);
      auto r = app->Append(refs[k], labels[k], kStart + s * step, v);
      if (r.ok()) refs[k] = *r;
    }
    (void)app->Commit();
  }
}

// bench_test.go's series for N = n (buckets cumulative in le), flushed.
storage::DB* BenchTestDB(int n) {
  return Fixture::Get(std::to_string(n), [n](storage::DB* db) {
    const std::string sfx = std::to_string(n);
    const char* les[] = {"0.1", "0.5", "1", "5", "+Inf"};
    std::vector<Labels> labels;
    for (int i = 0; i < n; ++i) {
      std::string l = std::to_string(i);
      labels.push_back(Labels{{"__name__", "a_" + sfx}, {"l", l}});
      labels.push_back(Labels{{"__name__", "b_" + sfx}, {"l", l}});
      for (const char* le : les) {
        labels.push_back(
            Labels{{"__name__", "h_" + sfx + "_bucket"}, {"l", l}, {"le", le}});
      }
    }
    AppendCounters(db, labels, kSamples, kStep, 1, 7);
    (void)db->Flush();
  });
}

// A live head, as a server scraping every 5 s holds it: N counters
// c_N_total of `samples` samples each. 36 samples is bench/compare_scrape.sh's
// head when it asks its Q1 (3 min in: no chunk cut yet); 300 is a server up
// for 25 min (two chunks cut, sealed and written, the open one half full).
// The query is Q1's shape: an instant sum of rates over 1 m at the newest
// sample.
constexpr int64_t kHeadStep = 5000;

storage::DB* HeadDB(int n, int samples) {
  return Fixture::Get(
      "head-" + std::to_string(n) + "-" + std::to_string(samples),
      [n, samples](storage::DB* db) {
        std::vector<Labels> labels;
        for (int i = 0; i < n; ++i) {
          labels.push_back(
              Labels{{"__name__", "c_" + std::to_string(n) + "_total"},
                     {"instance", "target-" + std::to_string(i)},
                     {"job", "bench"}});
        }
        AppendCounters(db, labels, samples, kHeadStep, 3, 11);
      });
}

Timestamp HeadEnd(int samples) { return kStart + (samples - 1) * kHeadStep; }

void RunInstant(benchmark::State& state, storage::DB* db, const std::string& q,
                Timestamp t) {
  promql::Engine engine;
  for (auto _ : state) {
    auto r = engine.InstantQuery(db, q, t);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(r->value.vector.size());
  }
}

void RunRange(benchmark::State& state, storage::DB* db, const std::string& q,
              Timestamp start, Timestamp end, int64_t step) {
  promql::Engine engine;
  for (auto _ : state) {
    auto r = engine.RangeQuery(db, q, start, end, step);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(r->value.matrix.size());
  }
}

const char* kQueries[] = {
    "a_N",
    "rate(a_N[1m])",
    "sum(rate(a_N[5m]))",
    "sum by (l) (rate(a_N[5m]))",
    "a_N + b_N",
    "a_N > bool 100",
    "topk(5, a_N)",
    "histogram_quantile(0.9, sum by (le) (rate(h_N_bucket[5m])))",
    "max_over_time(rate(a_N[1m])[10m:1m])",
    "abs(a_N)",
};

void RegisterBuiltIn() {
  for (int n : {10, 100, 1000}) {
    for (const char* tmpl : kQueries) {
      std::string q = tmpl;
      for (size_t p; (p = q.find("_N")) != std::string::npos;) {
        q.replace(p, 2, "_" + std::to_string(n));
      }
      benchmark::RegisterBenchmark(("Range/" + q).c_str(),
                                   [n, q](benchmark::State& st) {
                                     RunRange(st, BenchTestDB(n), q,
                                              kEnd - 3600 * 1000, kEnd, kStep);
                                   })
          ->Unit(benchmark::kMillisecond);
    }
  }
}

void RegisterHead() {
  for (int samples : {36, 300}) {
    for (int n : {100, 1000}) {
      const std::string q = "sum(rate(c_" + std::to_string(n) + "_total[1m]))";
      benchmark::RegisterBenchmark(
          ("Head" + std::to_string(samples) + "/" + q).c_str(),
          [n, q, samples](benchmark::State& st) {
            RunInstant(st, HeadDB(n, samples), q, HeadEnd(samples));
          })
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

std::unique_ptr<storage::DB>& ExternalDB() {
  static auto* db = new std::unique_ptr<storage::DB>();
  return *db;
}

// Times the queries of VIGIL_BENCH_QUERIES (one per line) on the directory
// VIGIL_BENCH_DIR: range queries over VIGIL_BENCH_START..END at
// VIGIL_BENCH_STEP (ms), or instant queries at END when the step is 0.
bool RegisterExternal() {
  const char* dir = std::getenv("VIGIL_BENCH_DIR");
  const char* file = std::getenv("VIGIL_BENCH_QUERIES");
  if (!dir || !file) return false;
  std::unique_ptr<storage::DB>& db = ExternalDB();
  storage::Options o;
  o.read_only = true;
  auto opened = storage::DB::Open(o, dir);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(opened.status().message()).c_str());
    std::exit(1);
  }
  db = std::move(*opened);
  auto env = [](const char* name) -> int64_t {
    const char* v = std::getenv(name);
    return v ? std::atoll(v) : 0;
  };
  Timestamp start = env("VIGIL_BENCH_START");
  Timestamp end = env("VIGIL_BENCH_END");
  int64_t step = env("VIGIL_BENCH_STEP");
  std::ifstream in(file);
  for (std::string q; std::getline(in, q);) {
    if (q.empty()) continue;
    benchmark::RegisterBenchmark(q.c_str(), [q, start, end,
                                             step](benchmark::State& st) {
      if (step == 0) {
        RunInstant(st, ExternalDB().get(), q, end);
      } else {
        RunRange(st, ExternalDB().get(), q, start, end, step);
      }
    })->Unit(benchmark::kMillisecond);
  }
  return true;
}

}  // namespace
}  // namespace vigil

int main(int argc, char** argv) {
  vigil::InitProcess();  // as the vigil binary does
  if (!vigil::RegisterExternal()) {
    vigil::RegisterHead();
    vigil::RegisterBuiltIn();
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  vigil::Fixture::CleanupAll();
  vigil::ExternalDB().reset();
  return 0;
}
