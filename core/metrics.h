// -----------------------------------------------------------------------------
// File: metrics.h
// -----------------------------------------------------------------------------
//
// Vigil's self-monitoring: the metrics its own /metrics page shows, in
// Prometheus text format 0.0.4 exactly as client_golang writes it (HELP and
// TYPE per family, families sorted by name, series sorted by label values,
// values formatted as Go's strconv 'g', escaping of HELP and label values).
//
//   auto requests = std::make_shared<metrics::Counter>(metrics::Opts{
//       "prometheus_http_requests_total", "Counter of HTTP requests.",
//       {"handler", "code"}});
//   VIGIL_RETURN_IF_ERROR(registry.Register(requests));
//   metrics::Counter::Child* c = requests->WithLabelValues({"/api/v1/query",
//   "200"}); c->Inc();  // an atomic add; keep `c` to skip the lookup next time
//
// Thread-safety: everything is thread-safe. Inc/Set/Observe on a Child are
// lock-free atomics; WithLabelValues takes a mutex (cache the Child).
#ifndef VIGIL_CORE_METRICS_H_
#define VIGIL_CORE_METRICS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace vigil::metrics {

enum class MetricType { kCounter, kGauge, kHistogram, kSummary, kUntyped };

// One series of a family as collected: label pairs sorted by name, and
// either a value, or (histograms) cumulative buckets, sum and count, or
// (summaries) quantiles, sum and count.
struct MetricSnapshot {
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
  std::vector<std::pair<double, uint64_t>> buckets;  // upper bound, cumulative
  std::vector<std::pair<double, double>> quantiles;  // φ, value (NaN: none)
  double sum = 0;
  uint64_t count = 0;
};

struct FamilySnapshot {
  std::string name;
  std::string help;
  MetricType type = MetricType::kUntyped;
  std::vector<MetricSnapshot> metrics;
};

// Anything that produces families at scrape time.
class Collector {
 public:
  virtual ~Collector() = default;
  // Names of the families this collector produces (checked for clashes at
  // registration).
  virtual std::vector<std::string> FamilyNames() const = 0;
  // Appends the current state. Called concurrently with updates.
  virtual void Collect(std::vector<FamilySnapshot>* out) const = 0;
};

struct Opts {
  std::string name;
  std::string help;
  std::vector<std::string> label_names;  // empty: one unlabelled series
  // Labels every series carries (e.g. {"version", "0.1.0"}).
  std::vector<std::pair<std::string, std::string>> const_labels;
};

struct CounterChild {
  // Negative increments are ignored (a counter never goes down).
  void Inc(double v = 1);
  double Value() const { return v.load(std::memory_order_relaxed); }
  std::atomic<double> v{0};
};

struct GaugeChild {
  void Set(double x) { v.store(x, std::memory_order_relaxed); }
  void Add(double x);
  void Inc() { Add(1); }
  void Dec() { Add(-1); }
  void SetToCurrentTime();
  double Value() const { return v.load(std::memory_order_relaxed); }
  std::atomic<double> v{0};
};

struct HistogramChild {
  explicit HistogramChild(const std::vector<double>* bounds);
  void Observe(double v);
  const std::vector<double>* bounds;                // owned by the Histogram
  std::unique_ptr<std::atomic<uint64_t>[]> counts;  // per bucket, +Inf last
  std::atomic<double> sum{0};
};

// client_golang's Summary: quantiles over a sliding window of the last
// `max_age` (observations age out in `age_buckets` steps, so a quantile
// covers between max_age*(1-1/age_buckets) and max_age), plus the sum and
// count of every observation ever made. Quantiles are exact over the
// window's samples (at most kMaxWindowSamples; beyond that a uniform
// sample of them), within client_golang's error targets for the
// rates Vigil observes. Observe takes a mutex (not lock-free).
class SummaryChild {
 public:
  static constexpr size_t kMaxWindowSamples = 4096;
  using Clock = std::chrono::steady_clock;

  SummaryChild(std::vector<double> quantiles, Clock::duration max_age,
               int age_buckets);
  void Observe(double v) { ObserveAt(v, Clock::now()); }
  void ObserveAt(double v, Clock::time_point now);
  // The quantiles in the order given (NaN when the window is empty), sum
  // and count, into `m`.
  void Snapshot(MetricSnapshot* m) const { SnapshotAt(m, Clock::now()); }
  void SnapshotAt(MetricSnapshot* m, Clock::time_point now) const;

 private:
  struct Slot {
    int64_t index = -1;  // which age step (time / step) it holds
    std::vector<double> samples;
    uint64_t seen = 0;  // observations in the step (>= samples.size())
  };
  Slot& SlotFor(int64_t index);

  const std::vector<double> quantiles_;
  const Clock::duration step_;
  const Clock::time_point epoch_;
  mutable std::mutex mu_;
  std::vector<Slot> slots_;  // ring of age_buckets steps
  double sum_ = 0;
  uint64_t count_ = 0;
  uint64_t rng_ = 0x9e3779b97f4a7c15ULL;  // for sampling past the cap
};

namespace internal {
// The label-children machinery shared by Counter, Gauge, Histogram and
// Summary.
template <typename ChildT>
class Family : public Collector {
 public:
  std::vector<std::string> FamilyNames() const override { return {opts_.name}; }
  const Opts& opts() const { return opts_; }
  // The series for these label values (created at zero on first use). The
  // pointer stays valid until RemoveLabelValues of the same values.
  // Null if the number of values is not the number of label names.
  ChildT* WithLabelValues(std::initializer_list<std::string_view> values) {
    return Get(values);
  }
  bool RemoveLabelValues(std::initializer_list<std::string_view> values) {
    return Remove(values);
  }

 protected:
  explicit Family(Opts opts) : opts_(std::move(opts)) {}
  // REQUIRES: values.size() == label_names.size() (else null).
  ChildT* Get(std::initializer_list<std::string_view> values);
  bool Remove(std::initializer_list<std::string_view> values);
  // Calls fn(labels, child) for each child, labels sorted by name.
  void ForEach(
      const std::function<void(std::vector<std::pair<std::string, std::string>>,
                               const ChildT&)>& fn) const;
  virtual std::unique_ptr<ChildT> NewChild() const = 0;

  Opts opts_;
  mutable std::mutex mu_;
  // Keyed by the label values in label-name order: the order the children
  // are written in, as client_golang sorts them.
  std::map<std::vector<std::string>, std::unique_ptr<ChildT>> children_;
};
}  // namespace internal

class Counter final : public internal::Family<CounterChild> {
 public:
  explicit Counter(Opts opts);
  // The unlabelled series. REQUIRES: no label names.
  void Inc(double v = 1);
  double Value() const;
  void Collect(std::vector<FamilySnapshot>* out) const override;

 private:
  std::unique_ptr<CounterChild> NewChild() const override;
};

class Gauge final : public internal::Family<GaugeChild> {
 public:
  explicit Gauge(Opts opts);
  void Set(double v);  // REQUIRES: no label names (likewise below)
  void Add(double v);
  void Inc() { Add(1); }
  void Dec() { Add(-1); }
  double Value() const;
  void Collect(std::vector<FamilySnapshot>* out) const override;

 private:
  std::unique_ptr<GaugeChild> NewChild() const override;
};

class Histogram final : public internal::Family<HistogramChild> {
 public:
  // Prometheus's DefBuckets: .005 .01 .025 .05 .1 .25 .5 1 2.5 5 10.
  static std::vector<double> DefaultBuckets();
  // `buckets`: increasing upper bounds; +Inf is implied.
  Histogram(Opts opts, std::vector<double> buckets);
  void Observe(double v);  // REQUIRES: no label names
  void Collect(std::vector<FamilySnapshot>* out) const override;

 private:
  std::unique_ptr<HistogramChild> NewChild() const override;
  std::vector<double> bounds_;
};

class Summary final : public internal::Family<SummaryChild> {
 public:
  // `quantiles`: the φ values to expose (client_golang's Objectives keys,
  // e.g. {0.5, 0.9, 0.99}). Default window: 10m in 5 steps, as
  // client_golang's DefMaxAge and DefAgeBuckets.
  Summary(Opts opts, std::vector<double> quantiles,
          SummaryChild::Clock::duration max_age = std::chrono::minutes(10),
          int age_buckets = 5);
  void Observe(double v);  // REQUIRES: no label names
  void Collect(std::vector<FamilySnapshot>* out) const override;

 private:
  std::unique_ptr<SummaryChild> NewChild() const override;
  std::vector<double> quantiles_;
  SummaryChild::Clock::duration max_age_;
  int age_buckets_;
};

// A single unlabelled counter or gauge whose value is computed at scrape
// time (head series from the DB, queue lengths...). `fn` must be
// thread-safe and quick.
class FuncMetric final : public Collector {
 public:
  FuncMetric(MetricType type, Opts opts, std::function<double()> fn);
  std::vector<std::string> FamilyNames() const override { return {opts_.name}; }
  void Collect(std::vector<FamilySnapshot>* out) const override;

 private:
  MetricType type_;
  Opts opts_;
  std::function<double()> fn_;
};

// Unlabelled families computed from one snapshot of type T, taken once per
// collection: figures that come from one costly pass (a walk of the
// storage's series) cost one pass per scrape, not one per family.
template <typename T>
class SnapshotCollector final : public Collector {
 public:
  explicit SnapshotCollector(std::function<T()> take)
      : take_(std::move(take)) {}
  // Adds a family before registration (not thread-safe afterwards).
  void Add(MetricType type, std::string name, std::string help,
           std::function<double(const T&)> get) {
    items_.push_back({type, std::move(name), std::move(help), std::move(get)});
  }
  std::vector<std::string> FamilyNames() const override {
    std::vector<std::string> names;
    for (const Item& i : items_) names.push_back(i.name);
    return names;
  }
  void Collect(std::vector<FamilySnapshot>* out) const override {
    if (items_.empty()) return;
    const T snap = take_();
    for (const Item& i : items_) {
      MetricSnapshot m;
      m.value = i.get(snap);
      out->push_back({i.name, i.help, i.type, {std::move(m)}});
    }
  }

 private:
  struct Item {
    MetricType type;
    std::string name;
    std::string help;
    std::function<double(const T&)> get;
  };
  std::function<T()> take_;
  std::vector<Item> items_;
};

// client_golang's process collector from /proc/self: process_cpu_seconds_total,
// process_open_fds, process_max_fds, process_virtual_memory_bytes,
// process_virtual_memory_max_bytes, process_resident_memory_bytes,
// process_start_time_seconds. A family is left out when /proc cannot be
// read.
class ProcessCollector final : public Collector {
 public:
  std::vector<std::string> FamilyNames() const override;
  void Collect(std::vector<FamilySnapshot>* out) const override;
};

class Registry {
 public:
  // InvalidArgument: a family or label name is not valid Prometheus syntax
  // (or a histogram uses "le"). AlreadyExists: a family of that name is
  // registered already.
  [[nodiscard]] absl::Status Register(std::shared_ptr<Collector> c);
  // Removes `c` (by identity); false if it was not registered.
  bool Unregister(const Collector* c);

  // Replaces *out with the text exposition (format 0.0.4) of every family
  // with at least one series.
  void WriteText(std::string* out) const;

  // The process-wide registry the server's /metrics shows.
  static Registry& Default();

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Collector>> collectors_;
};

// Prometheus text format 0.0.4 of `families` (sorted here) as client_golang
// writes it.
void WriteTextFormat(std::vector<FamilySnapshot> families, std::string* out);

// The content type of WriteText's output.
inline constexpr std::string_view kTextContentType =
    "text/plain; version=0.0.4; charset=utf-8";

}  // namespace vigil::metrics

#endif  // VIGIL_CORE_METRICS_H_
