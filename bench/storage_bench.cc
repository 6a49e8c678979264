// Google Benchmarks of the storage layer: head append, postings
// intersection, select, and head memory per active series.
//
//   build/storage_bench --benchmark_filter=HeadMemory   (RSS per series)
//   build/storage_bench --benchmark_filter=Open          (start-up time)
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "rocksdb/db.h"
#include "storage/db.h"

namespace vigil::storage {
namespace {

class BenchDir {
 public:
  BenchDir() {
    path_ = (std::filesystem::temp_directory_path() /
             ("vigil-bench-" + std::to_string(getpid()) + "-" +
              std::to_string(counter_++)))
                .string();
    std::filesystem::remove_all(path_);
  }
  ~BenchDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

size_t RssBytes() {
  std::ifstream f("/proc/self/statm");
  size_t pages = 0, rss = 0;
  f >> pages >> rss;
  return rss * size_t(sysconf(_SC_PAGESIZE));
}

Labels SeriesLabels(int i) {
  // dcgm-exporter-like: 20 metric families per GPU, 8 GPUs per host, the
  // GPU's UUID shared by its 20 series; 8 labels per series.
  int metric = i % 20, gpu_index = i / 20, host = gpu_index / 8,
      gpu = gpu_index % 8;
  return Labels{
      {"__name__", "DCGM_FI_DEV_METRIC_" + std::to_string(metric)},
      {"Hostname", "gpu-node-" + std::to_string(host)},
      {"UUID", "GPU-" + std::to_string(gpu_index) + "-7f3a-4c1e-9b2d"},
      {"gpu", std::to_string(gpu)},
      {"instance", "10.0." + std::to_string(host / 250) + "." +
                       std::to_string(host % 250) + ":9400"},
      {"job", "dcgm-exporter"},
      {"modelName", "NVIDIA H100 80GB HBM3"},
      {"device", "nvidia" + std::to_string(gpu)}};
}

// Appends 120 samples (15 s apart, gauge-like values) to each of N series,
// and reports RSS growth per series: the head-memory target of the issue.
void BM_HeadMemoryPerSeries(benchmark::State& state) {
  const int n = int(state.range(0));
  for (auto _ : state) {
    BenchDir dir;
    Options o;
    o.write_wal = false;  // measure the head, not RocksDB memtables
    malloc_trim(0);
    size_t before = RssBytes();
    size_t heap_before = mallinfo2().uordblks;
    auto db = *DB::Open(o, dir.path());
    std::vector<SeriesRef> refs(n);
    std::mt19937_64 rng(42);
    const Timestamp t0 = 1767225600000;
    // As scraping does: one commit per target of kTarget series.
    constexpr int kTarget = 2000;
    auto app = db->NewAppender();
    for (int s = 0; s < 120; ++s) {
      for (int i = 0; i < n; ++i) {
        // Gauge random walks with 2 decimals (temperatures, power, ...).
        double v = double(5000 + i % 1000 + int64_t(rng() % 200)) / 100.0;
        auto r = refs[i] ? app->Append(refs[i], {}, t0 + s * 15000, v)
                         : app->Append(0, SeriesLabels(i), t0 + s * 15000, v);
        refs[i] = *r;
        if ((i + 1) % kTarget == 0 || i + 1 == n) {
          if (!app->Commit().ok()) state.SkipWithError("commit failed");
        }
      }
    }
    app.reset();
    // Return memory freed by transient batches (the first commit's
    // series records) to the OS: steady state is what the target is about.
    malloc_trim(0);
    size_t after = RssBytes();
    DBStats st = db->Stats();
    state.counters["rss_bytes_per_series"] = double(after - before) / n;
    // malloc's and the slab's (series records; the previous iteration's
    // DB gave all of its records back).
    state.counters["malloc_in_use_per_series"] =
        double(mallinfo2().uordblks - heap_before + st.slab_object_bytes) / n;
    state.counters["head_estimate_per_series"] =
        double(st.head_memory_bytes) / n;
    state.counters["rocksdb_mem_per_series"] =
        double(st.rocksdb_memory_bytes) / n;
  }
}
BENCHMARK(BM_HeadMemoryPerSeries)
    ->Arg(20000)
    ->Arg(100000)
    ->Arg(1000000)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

void BM_HeadAppend(benchmark::State& state) {
  BenchDir dir;
  Options o;
  o.write_wal = state.range(0) != 0;
  auto db = *DB::Open(o, dir.path());
  const int kSeries = 1000;
  std::vector<SeriesRef> refs(kSeries);
  Timestamp t = 1767225600000;
  int64_t samples = 0;
  for (auto _ : state) {
    auto app = db->NewAppender();
    for (int i = 0; i < kSeries; ++i) {
      auto r = refs[i] ? app->Append(refs[i], {}, t, double(samples % 977))
                       : app->Append(0, SeriesLabels(i), t, 1);
      refs[i] = *r;
      ++samples;
    }
    if (!app->Commit().ok()) state.SkipWithError("commit failed");
    t += 15000;
  }
  state.SetItemsProcessed(samples);
}
BENCHMARK(BM_HeadAppend)->Arg(0)->Arg(1)->ArgName("wal");

// The commit path with the commit log in use (commit_log.h): no reader;
// a registered reader that reads nothing (its records are held); a reader
// thread waiting on the log, reading and acknowledging every commit.
// 100-sample commits, so per-commit costs show.
//   build/storage_bench --benchmark_filter=CommitLog
void BM_CommitLog(benchmark::State& state) {
  BenchDir dir;
  const int mode = int(state.range(0));
  auto db = *DB::Open(Options(), dir.path());
  std::unique_ptr<CommitLogReader> reader;
  if (mode > 0) reader = *db->OpenCommitLogReader("bench");
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> read_batches{0};
  std::thread t;
  if (mode == 2) {
    t = std::thread([&] {
      uint64_t from = reader->Position();
      while (!stop) {
        auto rd = reader->Read(from, 10000, absl::Milliseconds(50));
        if (!rd.ok()) break;
        read_batches += rd->batches.size();
        from = rd->next;
        (void)reader->Acknowledge(from);
      }
    });
  }
  const int kSeries = 100;
  std::vector<SeriesRef> refs(kSeries);
  Timestamp ts = 1767225600000;
  int64_t samples = 0;
  for (auto _ : state) {
    auto app = db->NewAppender();
    for (int i = 0; i < kSeries; ++i) {
      auto r = refs[i] ? app->Append(refs[i], {}, ts, double(samples % 977))
                       : app->Append(0, SeriesLabels(i), ts, 1);
      refs[i] = *r;
      ++samples;
    }
    if (!app->Commit().ok()) state.SkipWithError("commit failed");
    ts += 15000;
  }
  stop = true;
  if (t.joinable()) t.join();
  state.SetItemsProcessed(samples);
  if (mode == 2) state.counters["batches_read"] = double(read_batches.load());
  reader.reset();
}
BENCHMARK(BM_CommitLog)->Arg(0)->Arg(1)->Arg(2)->ArgName("reader");

// Open with a reader's backlog held (held:1, nothing acknowledged) or
// not (held:0, acknowledged as committed): 20000 commits of 100 samples,
// a checkpoint every 1 MiB. Open loads the held segments, not the records.
//   build/storage_bench --benchmark_filter=OpenWithCommitLog
void BM_OpenWithCommitLog(benchmark::State& state) {
  BenchDir dir;
  Options o;
  o.checkpoint_wal_bytes = 1 << 20;
  {
    auto db = *DB::Open(o, dir.path());
    auto reader = *db->OpenCommitLogReader("bench");
    std::vector<SeriesRef> refs(100);
    Timestamp ts = 1767225600000;
    for (int c = 0; c < 20000; ++c, ts += 15000) {
      auto app = db->NewAppender();
      for (int i = 0; i < 100; ++i)
        refs[i] = *(refs[i] ? app->Append(refs[i], {}, ts, double(c % 977))
                            : app->Append(0, SeriesLabels(i), ts, 1));
      if (!app->Commit().ok()) state.SkipWithError("commit failed");
      if (state.range(0) == 0) (void)reader->Acknowledge(reader->End());
    }
  }
  uint64_t held = 0;
  for (auto _ : state) {
    auto db = *DB::Open(o, dir.path());
    state.PauseTiming();
    held = db->Stats().commit_log_held_records;
    db.reset();
    state.ResumeTiming();
  }
  state.counters["held_records"] = double(held);
}
BENCHMARK(BM_OpenWithCommitLog)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("held")
    ->Unit(benchmark::kMillisecond);

std::unique_ptr<DB> FilledDB(const std::string& dir, int n, int samples) {
  Options o;
  o.write_wal = false;
  auto db = *DB::Open(o, dir);
  const Timestamp t0 = 1767225600000;
  std::vector<SeriesRef> refs(n);
  for (int s = 0; s < samples; ++s) {
    auto app = db->NewAppender();
    for (int i = 0; i < n; ++i) {
      auto r = refs[i]
                   ? app->Append(refs[i], {}, t0 + s * 15000, double(s + i))
                   : app->Append(0, SeriesLabels(i), t0 + s * 15000, double(s));
      refs[i] = *r;
    }
    (void)app->Commit();
  }
  (void)db->Flush();
  return db;
}

// Postings intersection through Select: job=... AND gpu=... AND name=~...
void BM_SelectIntersect(benchmark::State& state) {
  BenchDir dir;
  auto db = FilledDB(dir.path(), int(state.range(0)), 4);
  std::vector<Matcher> ms = {
      *Matcher::Make(MatchType::kEqual, "job", "dcgm-exporter"),
      *Matcher::Make(MatchType::kEqual, "gpu", "3"),
      *Matcher::Make(MatchType::kRegexMatch, "__name__",
                     "DCGM_FI_DEV_METRIC_[0-3]")};
  for (auto _ : state) {
    auto q = *db->NewQuerier(0, 1);  // empty time range: index cost only
    auto set = *q->Select(ms);
    benchmark::DoNotOptimize(set->Next());
  }
}
BENCHMARK(BM_SelectIntersect)->Arg(10000)->Arg(100000);

// Select + iterate all samples of 100 series over 2 h of persisted chunks.
void BM_SelectIterate(benchmark::State& state) {
  BenchDir dir;
  auto db = FilledDB(dir.path(), 100, 480);
  std::vector<Matcher> ms = {
      *Matcher::Make(MatchType::kEqual, "job", "dcgm-exporter")};
  int64_t samples = 0;
  for (auto _ : state) {
    auto q = *db->NewQuerier(kMinTimestamp, kMaxTimestamp);
    auto set = *q->Select(ms);
    while (set->Next()) {
      auto it = set->At().Iterator();
      while (it->Next()) ++samples;
    }
  }
  state.SetItemsProcessed(samples);
}
BENCHMARK(BM_SelectIterate);

// Churn: N series of one metric, of which all but 1 in 10 stopped an hour
// ago (their chunks flushed to RocksDB); a query over the last 5 minutes,
// as a dashboard or a rule runs it, selects the live tenth.
void BM_SelectChurned(benchmark::State& state) {
  BenchDir dir;
  const int n = int(state.range(0));
  Options o;
  o.write_wal = false;
  auto db = *DB::Open(o, dir.path());
  const Timestamp t0 = 1767225600000, hour = 3600000;
  auto app = db->NewAppender();
  for (int i = 0; i < n; ++i) {
    Labels l{{"__name__", "vllm:num_requests_running"},
             {"pod", "engine-" + std::to_string(i)}};
    (void)app->Append(0, l, t0, 1);
    if (i % 10 == 0) (void)app->Append(0, l, t0 + hour, 1);
  }
  (void)app->Commit();
  (void)db->Flush();
  std::vector<Matcher> ms = {*Matcher::Make(MatchType::kEqual, "__name__",
                                            "vllm:num_requests_running")};
  size_t found = 0;
  for (auto _ : state) {
    auto q = *db->NewQuerier(t0 + hour - 300000, t0 + hour);
    auto set = *q->Select(ms);
    found = 0;
    while (set->Next()) ++found;
  }
  state.counters["series"] = double(found);
}
BENCHMARK(BM_SelectChurned)->Arg(100000)->Unit(benchmark::kMillisecond);

// A head at steady state after `cycles` minutes of pod churn (the soak's
// pattern, bench/soak_churn.sh): 4,000 pod slots x 5 metrics of job vllm,
// one sample a minute, a tenth of the pods replaced by new ones every
// minute, head GC after 5 idle minutes. Measured: what `count by
// (__name__) ({job="vllm"})` at the last minute reads, every series of the
// job with its labels and samples over 5 minutes. The series in that
// window are the same in number whatever `cycles` is (6 reaches the
// steady state): a time that grows with `cycles` is the head's own
// structures (or the heap) ageing under churn, not more data.
void BM_SelectAfterChurn(benchmark::State& state) {
  BenchDir dir;
  const int cycles = int(state.range(0));
  constexpr int kPods = 4000, kMetrics = 5;
  constexpr Timestamp t0 = 1767225600000, minute = 60000;
  Options o;
  o.write_wal = false;
  o.head_idle_ms = 5 * minute;
  auto db = *DB::Open(o, dir.path());
  std::vector<Labels> labels(kPods * kMetrics);
  std::vector<SeriesRef> refs(kPods * kMetrics, 0);
  int next_pod = 0;
  auto new_pod = [&](int slot) {
    const int pod = next_pod++;
    for (int m = 0; m < kMetrics; ++m) {
      labels[slot * kMetrics + m] =
          Labels{{"__name__", "vllm:metric_" + std::to_string(m)},
                 {"instance", "10.1." + std::to_string(pod / 250 % 250) + "." +
                                  std::to_string(pod % 250) + ":8000"},
                 {"job", "vllm"},
                 {"pod", "engine-" + std::to_string(pod)}};
      refs[slot * kMetrics + m] = 0;
    }
  };
  for (int slot = 0; slot < kPods; ++slot) new_pod(slot);
  std::mt19937 rng(1);
  Timestamp t = t0;
  for (int c = 0; c < cycles; ++c, t += minute) {
    for (int k = 0; k < kPods / 10; ++k) new_pod(int(rng() % kPods));
    auto app = db->NewAppender();
    for (size_t i = 0; i < refs.size(); ++i) {
      auto r = app->Append(refs[i], labels[i], t, double(c));
      if (r.ok()) refs[i] = *r;
    }
    (void)app->Commit();
    (void)db->ApplyRetention(t);
  }
  t -= minute;
  std::vector<Matcher> ms = {*Matcher::Make(MatchType::kEqual, "job", "vllm")};
  size_t found = 0, samples = 0;
  for (auto _ : state) {
    auto q = *db->NewQuerier(t - 5 * minute, t);
    auto set = *q->Select(ms);
    std::map<std::string, int> by_name;
    found = samples = 0;
    while (set->Next()) {
      ++found;
      ++by_name[std::string(set->At().labels().Get("__name__"))];
      auto it = set->At().Iterator();
      while (it->Next()) ++samples;
    }
    benchmark::DoNotOptimize(by_name);
  }
  state.counters["series"] = double(found);
  state.counters["samples"] = double(samples);
  state.counters["head_series"] = double(db->Stats().num_series);
  state.counters["created"] = double(next_pod * kMetrics);
}
BENCHMARK(BM_SelectAfterChurn)
    ->Arg(6)
    ->Arg(60)
    ->Arg(300)
    ->ArgName("cycles")
    ->Unit(benchmark::kMillisecond);

// Selects `ms` over [mint, maxt] and reads every sample: returns the
// series found, sets *samples.
size_t SelectAll(DB* db, Timestamp mint, Timestamp maxt,
                 const std::vector<Matcher>& ms, size_t* samples) {
  auto q = *db->NewQuerier(mint, maxt);
  auto set = *q->Select(ms);
  size_t found = 0;
  *samples = 0;
  while (set->Next()) {
    ++found;
    auto it = set->At().Iterator();
    while (it->Next()) ++*samples;
  }
  return found;
}

// A live query's window reaching back past the open chunks: 100 targets x
// 1,000 series scraped every 5 s for 30 minutes (chunks cut at 120
// samples, spread per series, written to RocksDB and flushed), then one
// metric's 100 series (one per target, as `rate(m[w])` reads) selected over
// the last `window` seconds. With a window of 10 minutes every series
// needs its previous chunk from RocksDB (a seek each); with 1 minute,
// only those cut within it.
void BM_SelectPastOpenChunk(benchmark::State& state) {
  BenchDir dir;
  const int64_t window_s = state.range(0);
  Options o;
  o.write_wal = false;
  auto db = *DB::Open(o, dir.path());
  constexpr int kTargets = 100, kPerTarget = 1000;
  const Timestamp t0 = 1767225600000, step = 5000;
  std::vector<Labels> labels;
  for (int t = 0; t < kTargets; ++t) {
    for (int i = 0; i < kPerTarget; ++i) {
      labels.push_back(Labels{{"__name__", "m_" + std::to_string(i)},
                              {"instance", "target-" + std::to_string(t)},
                              {"job", "bench"}});
    }
  }
  std::vector<SeriesRef> refs(labels.size(), 0);
  Timestamp t = t0;
  for (int k = 0; k < 360; ++k, t += step) {
    for (int tg = 0; tg < kTargets; ++tg) {
      auto app = db->NewAppender();
      for (int i = 0; i < kPerTarget; ++i) {
        const size_t j = size_t(tg) * kPerTarget + size_t(i);
        auto r = app->Append(refs[j], labels[j], t, double(k * (i % 7)));
        if (r.ok()) refs[j] = *r;
      }
      (void)app->Commit();
    }
  }
  t -= step;
  std::vector<Matcher> ms = {
      *Matcher::Make(MatchType::kEqual, "__name__", "m_17")};
  size_t found = 0, samples = 0;
  for (auto _ : state) {
    found = SelectAll(db.get(), t - window_s * 1000 + 1, t, ms, &samples);
  }
  state.counters["series"] = double(found);
  state.counters["samples"] = double(samples);
}
BENCHMARK(BM_SelectPastOpenChunk)
    ->Arg(60)
    ->Arg(600)
    ->ArgName("window_s")
    ->Unit(benchmark::kMicrosecond);

// Head GC: N series of one metric with 10 samples each over the last
// hour, selected over that hour while they are in the head (cold = 0) and
// after head GC moved them to the `cold` family (cold = 1): what a
// dashboard or a long-window rule pays for series that went idle.
void BM_SelectHotOrCold(benchmark::State& state) {
  BenchDir dir;
  const int n = int(state.range(0));
  const bool cold = state.range(1) != 0;
  Options o;
  o.write_wal = false;
  o.head_idle_ms = 60000;
  auto db = *DB::Open(o, dir.path());
  const Timestamp t0 = 1767225600000, minute = 60000;
  auto app = db->NewAppender();
  for (int k = 0; k < 10; ++k) {
    for (int i = 0; i < n; ++i) {
      Labels l{{"__name__", "vllm:num_requests_running"},
               {"instance", "10.0." + std::to_string(i / 250) + "." +
                                std::to_string(i % 250) + ":8000"},
               {"job", "vllm"},
               {"pod", "engine-" + std::to_string(i)}};
      (void)app->Append(0, l, t0 + k * 6 * minute, i);
    }
    (void)app->Commit();
  }
  (void)db->Flush();
  if (cold) (void)db->ApplyRetention(t0 + 120 * minute);
  std::vector<Matcher> ms = {*Matcher::Make(MatchType::kEqual, "__name__",
                                            "vllm:num_requests_running"),
                             *Matcher::Make(MatchType::kEqual, "job", "vllm")};
  size_t found = 0, samples = 0;
  for (auto _ : state) {
    found = SelectAll(db.get(), t0, t0 + 60 * minute, ms, &samples);
  }
  state.counters["series"] = double(found);
  state.counters["samples"] = double(samples);
  state.counters["head_series"] = double(db->Stats().num_series);
}
BENCHMARK(BM_SelectHotOrCold)
    ->Args({10000, 0})
    ->Args({10000, 1})
    ->Unit(benchmark::kMillisecond);

// The two head GC benchmarks below: a DB whose `cold` family holds series
// 0..n-1 of `labels`, moved there by head GC and fully compacted (large
// tables, as after days of pod churn).
constexpr Timestamp kColdT0 = 1767225600000, kMinute = 60000;
using BenchLabels = Labels (*)(int);

void AppendNew(DB* db, BenchLabels labels, int from, int count, Timestamp t) {
  for (int i = from; i < from + count; i += 50000) {
    auto app = db->NewAppender();
    for (int j = i; j < std::min(from + count, i + 50000); ++j) {
      (void)app->Append(0, labels(j), t, j);
    }
    (void)app->Commit();
  }
}

std::unique_ptr<DB> OpenWithCold(const BenchDir& dir, BenchLabels labels,
                                 int n) {
  Options o;
  o.write_wal = false;
  o.head_idle_ms = 60000;
  auto db = *DB::Open(o, dir.path());
  AppendNew(db.get(), labels, 0, n, kColdT0);
  // A pass moves at most 200 k series.
  while (db->Stats().num_series > 0) {
    if (!db->ApplyRetention(kColdT0 + 2 * kMinute).ok()) break;
  }
  (void)db->Compact();
  return db;
}

Labels ExplodedLabels(int i) {
  return Labels{{"__name__", "vllm:num_requests_running"},
                {"instance", "10.0." + std::to_string(i / 250 % 250) + "." +
                                 std::to_string(i % 250) + ":8000"},
                {"job", "vllm"},
                {"model_name", "meta-llama/Llama-3.1-8B-Instruct"},
                {"namespace", "serving"},
                {"pod", "engine-" + std::to_string(i)},
                {"request_id", "r" + std::to_string(i)}};
}

Labels PodLabels(int i) {
  return Labels{{"__name__", "vllm:num_requests_running"},
                {"instance", "10.0." + std::to_string(i / 250 % 250) + "." +
                                 std::to_string(i % 250) + ":8000"},
                {"job", "vllm"},
                {"pod", "engine-" + std::to_string(i)}};
}

// Head GC moving a batch of idle series (37 k, as a cardinality explosion
// leaves them) into a `cold` family that already holds N series: what the
// churn soak's minute after an explosion pays. Each moved series looks its
// labels hash up among the cold ones (collisions), a point read that first
// checks each table's bloom filter.
void BM_EvictIntoCold(benchmark::State& state) {
  BenchDir dir;
  const int n = int(state.range(0)), batch = 37000;
  auto db = OpenWithCold(dir, ExplodedLabels, n);
  int next = n;
  Timestamp t = kColdT0 + 10 * kMinute;
  for (auto _ : state) {
    state.PauseTiming();
    AppendNew(db.get(), ExplodedLabels, next, batch, t);
    next += batch;
    state.ResumeTiming();
    (void)db->ApplyRetention(t + 2 * kMinute);
    t += 10 * kMinute;
  }
  state.counters["cold"] = double(db->Stats().cold_series);
  state.counters["head"] = double(db->Stats().num_series);
}
BENCHMARK(BM_EvictIntoCold)
    ->Arg(300000)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

// Appending 10 k series that are new (a restarted pod's, an exploding
// label's) while the `cold` family holds N series: each new series is
// first looked up by its labels hash among the cold ones, in case it is an
// idle series coming back.
void BM_NewSeriesWithCold(benchmark::State& state) {
  BenchDir dir;
  const int n = int(state.range(0)), batch = 10000;
  auto db = OpenWithCold(dir, PodLabels, n);
  int next = n;
  for (auto _ : state) {
    AppendNew(db.get(), PodLabels, next, batch, kColdT0 + 10 * kMinute);
    next += batch;
  }
  state.counters["cold"] = double(db->Stats().cold_series);
  state.SetItemsProcessed(int64_t(state.iterations()) * batch);
}
BENCHMARK(BM_NewSeriesWithCold)
    ->Arg(300000)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

// A directory of N dcgm-like series with 4 flushed samples each, built once
// per N and kept until the process exits (building 1M series takes a
// while; every Open benchmark reuses it).
const std::string& OpenBenchDir(int n) {
  // Destroyed at exit, which removes the directories.
  static std::map<int, std::unique_ptr<BenchDir>> dirs;
  auto& d = dirs[n];
  if (!d) {
    d = std::make_unique<BenchDir>();
    FilledDB(d->path(), n, 4).reset();
  }
  return d->path();
}

// DB::Open (read-write, as the server does) of N persisted series: loads
// `series` and rebuilds the in-memory postings index from it, then `head`.
// The DB is destroyed outside the timed region.
void BM_Open(benchmark::State& state) {
  const std::string& dir = OpenBenchDir(int(state.range(0)));
  for (auto _ : state) {
    auto db = DB::Open(Options(), dir);
    if (!db.ok()) state.SkipWithError("open failed");
    state.PauseTiming();
    db->reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  uint64_t bytes = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) bytes += e.file_size();
  }
  state.counters["dir_bytes"] = double(bytes);
}

// What reading a `postings` column family at start-up would cost on top of
// loading `series` (which the head needs anyway, for every series' labels):
// a raw scan of the family that decodes each key into (name, value, ref)
// and appends the ref to its list. Zero entries once the family is no
// longer written; run it against a directory built by an older version to
// compare.
void BM_ScanColumnFamily(benchmark::State& state, const char* cf) {
  const std::string& dir = OpenBenchDir(int(state.range(0)));
  rocksdb::DBOptions dbo;
  std::vector<std::string> names;
  if (!rocksdb::DB::ListColumnFamilies(dbo, dir, &names).ok()) {
    state.SkipWithError("list column families failed");
    return;
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : names)
    cfs.push_back({n, rocksdb::ColumnFamilyOptions()});
  int64_t entries = 0;
  for (auto _ : state) {
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    if (!rocksdb::DB::OpenForReadOnly(dbo, dir, cfs, &handles, &raw).ok()) {
      state.SkipWithError("open failed");
      return;
    }
    std::unique_ptr<rocksdb::DB> rdb(raw);
    rocksdb::ColumnFamilyHandle* h = nullptr;
    for (auto* c : handles) {
      if (c->GetName() == cf) h = c;
    }
    std::map<std::string, std::vector<uint64_t>, std::less<>> lists;
    entries = 0;
    if (h) {
      std::unique_ptr<rocksdb::Iterator> it(
          rdb->NewIterator(rocksdb::ReadOptions(), h));
      for (it->SeekToFirst(); it->Valid(); it->Next(), ++entries) {
        rocksdb::Slice k = it->key();
        if (k.size() < 8) continue;
        uint64_t ref = 0;
        for (int i = 0; i < 8; ++i)
          ref = ref << 8 | uint8_t(k.data()[k.size() - 8 + i]);
        std::string_view pair(k.data(), k.size() - 8);
        auto l = lists.find(pair);
        if (l == lists.end()) l = lists.emplace(std::string(pair), 0).first;
        l->second.push_back(ref);
      }
    }
    benchmark::DoNotOptimize(lists);
    for (auto* c : handles) rdb->DestroyColumnFamilyHandle(c);
  }
  state.counters["entries"] = double(entries);
}
BENCHMARK(BM_Open)->Arg(100000)->Arg(1000000)->Iterations(3)->Unit(
    benchmark::kMillisecond);

// DB::Open of N series whose head holds an open chunk of 240 samples each
// (1 h at 15 s, closed as by SIGTERM: the close checkpoint wrote every
// open chunk to `head`), as a server restarts; BM_Open's directory has no
// open chunks (Flush cut them). Restoring the head dominates. CPU time is
// the process's (the head is restored on worker threads).
//   build/storage_bench --benchmark_filter='BM_OpenHead'
void BM_OpenHead(benchmark::State& state) {
  static std::map<int, std::unique_ptr<BenchDir>> dirs;  // built once per N
  const int n = int(state.range(0));
  auto& d = dirs[n];
  if (!d) {
    d = std::make_unique<BenchDir>();
    Options o;
    o.write_wal = false;
    auto db = *DB::Open(o, d->path());
    const Timestamp t0 = 1767225600000;
    std::vector<SeriesRef> refs(n);
    for (int s = 0; s < 240; ++s) {
      auto app = db->NewAppender();
      for (int i = 0; i < n; ++i) {
        // Gauges with 0-2 decimals, counters, and some arbitrary floats.
        const double v = i % 4 == 0   ? double(s * (i % 50) + i)
                         : i % 4 == 1 ? double((s * 37 + i) % 1000) / 10
                         : i % 4 == 2 ? double((s * 13 + i) % 10000) / 100
                                      : 1.0 / (s + i + 3);
        auto r = refs[i] ? app->Append(refs[i], {}, t0 + s * 15000, v)
                         : app->Append(0, SeriesLabels(i), t0 + s * 15000, v);
        refs[i] = *r;
      }
      (void)app->Commit();
    }
  }
  for (auto _ : state) {
    auto db = DB::Open(Options(), d->path());
    if (!db.ok()) state.SkipWithError("open failed");
    state.PauseTiming();
    db->reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_OpenHead)
    ->Arg(100000)
    ->Iterations(3)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ScanColumnFamily, postings, "postings")
    ->Arg(100000)
    ->Arg(1000000)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ScanColumnFamily, series, "series")
    ->Arg(100000)
    ->Arg(1000000)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace vigil::storage

BENCHMARK_MAIN();
