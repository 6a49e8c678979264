#include "core/metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "core/go/strconv.h"

namespace vigil::metrics {
namespace {

void AtomicAdd(std::atomic<double>* a, double v) {
  double cur = a->load(std::memory_order_relaxed);
  while (!a->compare_exchange_weak(cur, cur + v, std::memory_order_relaxed)) {
  }
}

bool ValidMetricName(std::string_view n) {
  if (n.empty()) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    char c = n[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              c == ':' || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool ValidLabelName(std::string_view n) {
  if (n.empty() || n.substr(0, 2) == "__") return false;
  for (size_t i = 0; i < n.size(); ++i) {
    char c = n[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// client_golang's expfmt writeFloat.
void AppendValue(std::string* out, double v) {
  if (v == 1) {
    out->push_back('1');
  } else if (v == 0) {
    out->push_back('0');
  } else if (v == -1) {
    out->append("-1");
  } else {
    go::AppendFloatG(out, v);
  }
}

void AppendEscaped(std::string* out, std::string_view s, bool quote) {
  for (char c : s) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '\n') {
      out->append("\\n");
    } else if (quote && c == '"') {
      out->append("\\\"");
    } else {
      out->push_back(c);
    }
  }
}

void AppendSeries(std::string* out, std::string_view name,
                  std::string_view suffix,
                  const std::vector<std::pair<std::string, std::string>>& ls,
                  const char* extra_name, std::string_view extra_value) {
  out->append(name);
  out->append(suffix);
  if (!ls.empty() || extra_name != nullptr) {
    out->push_back('{');
    bool first = true;
    for (const auto& [k, v] : ls) {
      if (!first) out->push_back(',');
      first = false;
      out->append(k);
      out->append("=\"");
      AppendEscaped(out, v, true);
      out->push_back('"');
    }
    if (extra_name != nullptr) {
      if (!first) out->push_back(',');
      out->append(extra_name);
      out->append("=\"");
      out->append(extra_value);
      out->push_back('"');
    }
    out->push_back('}');
  }
  out->push_back(' ');
}

const char* TypeName(MetricType t) {
  switch (t) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kSummary:
      return "summary";
    case MetricType::kUntyped:
      return "untyped";
  }
  return "untyped";
}

std::vector<std::pair<std::string, std::string>> SortedLabels(
    const Opts& o, const std::vector<std::string>& values) {
  std::vector<std::pair<std::string, std::string>> ls = o.const_labels;
  for (size_t i = 0; i < o.label_names.size() && i < values.size(); ++i) {
    ls.emplace_back(o.label_names[i], values[i]);
  }
  std::sort(ls.begin(), ls.end());
  return ls;
}

}  // namespace

// ---- families --------------------------------------------------------------

namespace internal {

template <typename ChildT>
ChildT* Family<ChildT>::Get(std::initializer_list<std::string_view> values) {
  if (values.size() != opts_.label_names.size()) return nullptr;
  std::vector<std::string> key(values.begin(), values.end());
  std::lock_guard<std::mutex> l(mu_);
  auto it = children_.find(key);
  if (it == children_.end()) {
    it = children_.emplace(std::move(key), NewChild()).first;
  }
  return it->second.get();
}

template <typename ChildT>
bool Family<ChildT>::Remove(std::initializer_list<std::string_view> values) {
  std::vector<std::string> key(values.begin(), values.end());
  std::lock_guard<std::mutex> l(mu_);
  return children_.erase(key) > 0;
}

template <typename ChildT>
void Family<ChildT>::ForEach(
    const std::function<void(std::vector<std::pair<std::string, std::string>>,
                             const ChildT&)>& fn) const {
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& [values, child] : children_) {
    fn(SortedLabels(opts_, values), *child);
  }
}

template class Family<CounterChild>;
template class Family<GaugeChild>;
template class Family<HistogramChild>;
template class Family<SummaryChild>;

}  // namespace internal

void CounterChild::Inc(double x) {
  if (x > 0) AtomicAdd(&v, x);
}

void GaugeChild::Add(double x) { AtomicAdd(&v, x); }

void GaugeChild::SetToCurrentTime() {
  Set(std::chrono::duration<double>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
}

Counter::Counter(Opts opts) : Family(std::move(opts)) {
  if (opts_.label_names.empty()) Get({});
}
std::unique_ptr<CounterChild> Counter::NewChild() const {
  return std::make_unique<CounterChild>();
}
void Counter::Inc(double v) {
  if (auto* c = Get({})) c->Inc(v);
}
double Counter::Value() const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = children_.find({});
  return it == children_.end() ? 0 : it->second->Value();
}
void Counter::Collect(std::vector<FamilySnapshot>* out) const {
  FamilySnapshot f{opts_.name, opts_.help, MetricType::kCounter, {}};
  ForEach([&](auto labels, const CounterChild& c) {
    MetricSnapshot m;
    m.labels = std::move(labels);
    m.value = c.Value();
    f.metrics.push_back(std::move(m));
  });
  out->push_back(std::move(f));
}

Gauge::Gauge(Opts opts) : Family(std::move(opts)) {
  if (opts_.label_names.empty()) Get({});
}
std::unique_ptr<GaugeChild> Gauge::NewChild() const {
  return std::make_unique<GaugeChild>();
}
void Gauge::Set(double v) {
  if (auto* c = Get({})) c->Set(v);
}
void Gauge::Add(double v) {
  if (auto* c = Get({})) c->Add(v);
}
double Gauge::Value() const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = children_.find({});
  return it == children_.end() ? 0 : it->second->Value();
}
void Gauge::Collect(std::vector<FamilySnapshot>* out) const {
  FamilySnapshot f{opts_.name, opts_.help, MetricType::kGauge, {}};
  ForEach([&](auto labels, const GaugeChild& c) {
    MetricSnapshot m;
    m.labels = std::move(labels);
    m.value = c.Value();
    f.metrics.push_back(std::move(m));
  });
  out->push_back(std::move(f));
}

HistogramChild::HistogramChild(const std::vector<double>* b)
    : bounds(b), counts(new std::atomic<uint64_t>[b->size() + 1]) {
  for (size_t i = 0; i <= b->size(); ++i) counts[i] = 0;
}

void HistogramChild::Observe(double v) {
  // The first bucket whose upper bound is >= v (le is inclusive); NaN
  // lands in +Inf, as in client_golang.
  size_t i =
      std::lower_bound(bounds->begin(), bounds->end(), v) - bounds->begin();
  if (std::isnan(v)) i = bounds->size();
  counts[i].fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(&sum, v);
}

std::vector<double> Histogram::DefaultBuckets() {
  return {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};
}

Histogram::Histogram(Opts opts, std::vector<double> buckets)
    : Family(std::move(opts)), bounds_(std::move(buckets)) {
  std::sort(bounds_.begin(), bounds_.end());
  bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
  while (!bounds_.empty() && std::isinf(bounds_.back())) bounds_.pop_back();
  if (opts_.label_names.empty()) Get({});
}
std::unique_ptr<HistogramChild> Histogram::NewChild() const {
  return std::make_unique<HistogramChild>(&bounds_);
}
void Histogram::Observe(double v) {
  if (auto* c = Get({})) c->Observe(v);
}
void Histogram::Collect(std::vector<FamilySnapshot>* out) const {
  FamilySnapshot f{opts_.name, opts_.help, MetricType::kHistogram, {}};
  ForEach([&](auto labels, const HistogramChild& c) {
    MetricSnapshot m;
    m.labels = std::move(labels);
    uint64_t cum = 0;
    for (size_t i = 0; i <= bounds_.size(); ++i) {
      cum += c.counts[i].load(std::memory_order_relaxed);
      double le = i < bounds_.size() ? bounds_[i]
                                     : std::numeric_limits<double>::infinity();
      m.buckets.emplace_back(le, cum);
    }
    // The count is the +Inf bucket, so the two always agree.
    m.count = cum;
    m.sum = c.sum.load(std::memory_order_relaxed);
    f.metrics.push_back(std::move(m));
  });
  out->push_back(std::move(f));
}

FuncMetric::FuncMetric(MetricType type, Opts opts, std::function<double()> fn)
    : type_(type), opts_(std::move(opts)), fn_(std::move(fn)) {}

void FuncMetric::Collect(std::vector<FamilySnapshot>* out) const {
  MetricSnapshot m;
  m.labels = SortedLabels(opts_, {});
  m.value = fn_ ? fn_() : 0;
  out->push_back({opts_.name, opts_.help, type_, {std::move(m)}});
}

// ---- summary
// -------------------------------------------------------------------

SummaryChild::SummaryChild(std::vector<double> quantiles,
                           Clock::duration max_age, int age_buckets)
    : quantiles_(std::move(quantiles)),
      step_(std::max<Clock::duration>(max_age / std::max(age_buckets, 1),
                                      std::chrono::milliseconds(1))),
      epoch_(Clock::now()),
      slots_(static_cast<size_t>(std::max(age_buckets, 1))) {}

SummaryChild::Slot& SummaryChild::SlotFor(int64_t index) {
  Slot& s = slots_[static_cast<size_t>(index) % slots_.size()];
  if (s.index != index) {  // an older step: its samples have aged out
    s.index = index;
    s.samples.clear();
    s.seen = 0;
  }
  return s;
}

void SummaryChild::ObserveAt(double v, Clock::time_point now) {
  const int64_t index = std::max<int64_t>(0, (now - epoch_) / step_);
  std::lock_guard<std::mutex> l(mu_);
  sum_ += v;
  ++count_;
  if (std::isnan(v)) return;  // counted, but no rank
  Slot& s = SlotFor(index);
  ++s.seen;
  const size_t cap = kMaxWindowSamples / slots_.size();
  if (s.samples.size() < cap) {
    s.samples.push_back(v);
    return;
  }
  // Reservoir sampling keeps a uniform sample of the step's observations.
  rng_ = rng_ * 6364136223846793005ULL + 1442695040888963407ULL;
  const uint64_t j = (rng_ >> 11) % s.seen;
  if (j < cap) s.samples[j] = v;
}

void SummaryChild::SnapshotAt(MetricSnapshot* m, Clock::time_point now) const {
  const int64_t index = std::max<int64_t>(0, (now - epoch_) / step_);
  const int64_t oldest = index - static_cast<int64_t>(slots_.size()) + 1;
  std::vector<double> window;
  std::lock_guard<std::mutex> l(mu_);
  for (const Slot& s : slots_) {
    if (s.index < oldest || s.index > index) continue;
    window.insert(window.end(), s.samples.begin(), s.samples.end());
  }
  std::sort(window.begin(), window.end());
  m->quantiles.clear();
  for (double q : quantiles_) {
    double v = std::numeric_limits<double>::quiet_NaN();
    if (!window.empty()) {
      // The sample of rank ceil(φ·n), as client_golang's stream query.
      auto rank = static_cast<size_t>(
          std::ceil(q * static_cast<double>(window.size())));
      v = window[std::min(window.size() - 1, rank == 0 ? 0 : rank - 1)];
    }
    m->quantiles.emplace_back(q, v);
  }
  m->sum = sum_;
  m->count = count_;
}

Summary::Summary(Opts opts, std::vector<double> quantiles,
                 SummaryChild::Clock::duration max_age, int age_buckets)
    : Family(std::move(opts)),
      quantiles_(std::move(quantiles)),
      max_age_(max_age),
      age_buckets_(age_buckets) {
  std::sort(quantiles_.begin(), quantiles_.end());
  if (opts_.label_names.empty()) Get({});
}
std::unique_ptr<SummaryChild> Summary::NewChild() const {
  return std::make_unique<SummaryChild>(quantiles_, max_age_, age_buckets_);
}
void Summary::Observe(double v) {
  if (auto* c = Get({})) c->Observe(v);
}
void Summary::Collect(std::vector<FamilySnapshot>* out) const {
  FamilySnapshot f{opts_.name, opts_.help, MetricType::kSummary, {}};
  ForEach([&](auto labels, const SummaryChild& c) {
    MetricSnapshot m;
    m.labels = std::move(labels);
    c.Snapshot(&m);
    f.metrics.push_back(std::move(m));
  });
  out->push_back(std::move(f));
}

// ---- registry and text format ----------------------------------------------

absl::Status Registry::Register(std::shared_ptr<Collector> c) {
  if (c == nullptr) return absl::InvalidArgumentError("register: no collector");
  std::vector<std::string> names = c->FamilyNames();
  for (const auto& n : names) {
    if (!ValidMetricName(n)) {
      return absl::InvalidArgumentError("register: invalid metric name \"" + n +
                                        "\"");
    }
  }
  // Label names: checked on the families' options.
  std::vector<const Opts*> opts;
  if (auto* x = dynamic_cast<const Counter*>(c.get()))
    opts.push_back(&x->opts());
  if (auto* x = dynamic_cast<const Gauge*>(c.get())) opts.push_back(&x->opts());
  const auto* hist = dynamic_cast<const Histogram*>(c.get());
  if (hist != nullptr) opts.push_back(&hist->opts());
  const auto* summary = dynamic_cast<const Summary*>(c.get());
  if (summary != nullptr) opts.push_back(&summary->opts());
  for (const Opts* o : opts) {
    std::set<std::string> seen;
    auto check = [&](const std::string& l) -> absl::Status {
      if (!ValidLabelName(l)) {
        return absl::InvalidArgumentError("register " + o->name +
                                          ": invalid label name \"" + l + "\"");
      }
      if (hist != nullptr && l == "le") {
        return absl::InvalidArgumentError(
            "register " + o->name +
            ": \"le\" is not allowed as label name in histograms");
      }
      if (summary != nullptr && l == "quantile") {
        return absl::InvalidArgumentError(
            "register " + o->name +
            ": \"quantile\" is not allowed as label name in summaries");
      }
      if (summary != nullptr && l == "quantile") {
        return absl::InvalidArgumentError(
            "register " + o->name +
            ": \"quantile\" is not allowed as label name in summaries");
      }
      if (!seen.insert(l).second) {
        return absl::InvalidArgumentError(
            "register " + o->name + ": duplicate label name \"" + l + "\"");
      }
      return absl::OkStatus();
    };
    for (const auto& l : o->label_names) {
      if (auto s = check(l); !s.ok()) return s;
    }
    for (const auto& [l, v] : o->const_labels) {
      if (auto s = check(l); !s.ok()) return s;
    }
  }
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& other : collectors_) {
    for (const auto& n : other->FamilyNames()) {
      if (std::find(names.begin(), names.end(), n) != names.end()) {
        return absl::AlreadyExistsError("register: a collector of metric \"" +
                                        n + "\" is already registered");
      }
    }
  }
  collectors_.push_back(std::move(c));
  return absl::OkStatus();
}

bool Registry::Unregister(const Collector* c) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = std::find_if(collectors_.begin(), collectors_.end(),
                         [c](const auto& p) { return p.get() == c; });
  if (it == collectors_.end()) return false;
  collectors_.erase(it);
  return true;
}

void Registry::WriteText(std::string* out) const {
  std::vector<std::shared_ptr<Collector>> cs;
  {
    std::lock_guard<std::mutex> l(mu_);
    cs = collectors_;
  }
  // Collect outside the registry lock: a callback may be slow.
  std::vector<FamilySnapshot> families;
  for (const auto& c : cs) c->Collect(&families);
  WriteTextFormat(std::move(families), out);
}

Registry& Registry::Default() {
  static Registry* r = new Registry();
  return *r;
}

void WriteTextFormat(std::vector<FamilySnapshot> families, std::string* out) {
  out->clear();
  std::sort(families.begin(), families.end(),
            [](const FamilySnapshot& a, const FamilySnapshot& b) {
              return a.name < b.name;
            });
  for (auto& f : families) {
    if (f.metrics.empty()) continue;  // as client_golang's Gather
    std::stable_sort(f.metrics.begin(), f.metrics.end(),
                     [](const MetricSnapshot& a, const MetricSnapshot& b) {
                       return a.labels < b.labels;
                     });
    out->append("# HELP ");
    out->append(f.name);
    out->push_back(' ');
    AppendEscaped(out, f.help, false);
    out->append("\n# TYPE ");
    out->append(f.name);
    out->push_back(' ');
    out->append(TypeName(f.type));
    out->push_back('\n');
    for (const auto& m : f.metrics) {
      if (f.type == MetricType::kSummary) {
        for (const auto& [q, v] : m.quantiles) {
          std::string phi;
          AppendValue(&phi, q);
          AppendSeries(out, f.name, "", m.labels, "quantile", phi);
          AppendValue(out, v);
          out->push_back('\n');
        }
        AppendSeries(out, f.name, "_sum", m.labels, nullptr, "");
        AppendValue(out, m.sum);
        out->push_back('\n');
        AppendSeries(out, f.name, "_count", m.labels, nullptr, "");
        out->append(std::to_string(m.count));
        out->push_back('\n');
        continue;
      }
      if (f.type != MetricType::kHistogram) {
        AppendSeries(out, f.name, "", m.labels, nullptr, "");
        AppendValue(out, m.value);
        out->push_back('\n');
        continue;
      }
      for (const auto& [le, n] : m.buckets) {
        std::string bound;
        AppendValue(&bound, le);
        AppendSeries(out, f.name, "_bucket", m.labels, "le", bound);
        out->append(std::to_string(n));
        out->push_back('\n');
      }
      AppendSeries(out, f.name, "_sum", m.labels, nullptr, "");
      AppendValue(out, m.sum);
      out->push_back('\n');
      AppendSeries(out, f.name, "_count", m.labels, nullptr, "");
      out->append(std::to_string(m.count));
      out->push_back('\n');
    }
  }
}

// ---- process collector ------------------------------------------------------

namespace {

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void AddOne(std::vector<FamilySnapshot>* out, const char* name,
            const char* help, MetricType type, double v) {
  MetricSnapshot m;
  m.value = v;
  out->push_back({name, help, type, {std::move(m)}});
}

}  // namespace

std::vector<std::string> ProcessCollector::FamilyNames() const {
  return {"process_cpu_seconds_total",
          "process_open_fds",
          "process_max_fds",
          "process_virtual_memory_bytes",
          "process_virtual_memory_max_bytes",
          "process_resident_memory_bytes",
          "process_start_time_seconds"};
}

void ProcessCollector::Collect(std::vector<FamilySnapshot>* out) const {
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  // /proc/self/stat: the command is in parentheses and may hold spaces;
  // fields are counted from after its closing one (field 3, the state).
  std::string stat = ReadFile("/proc/self/stat");
  size_t rp = stat.rfind(')');
  if (rp != std::string::npos) {
    std::istringstream in(stat.substr(rp + 2));
    std::vector<std::string> f;
    for (std::string w; in >> w;) f.push_back(w);
    // f[0] is field 3; utime 14, stime 15, starttime 22, vsize 23, rss 24.
    if (f.size() >= 22) {
      double utime = std::stod(f[11]), stime = std::stod(f[12]);
      AddOne(out, "process_cpu_seconds_total",
             "Total user and system CPU time spent in seconds.",
             MetricType::kCounter, (utime + stime) / ticks);
      AddOne(out, "process_virtual_memory_bytes",
             "Virtual memory size in bytes.", MetricType::kGauge,
             std::stod(f[20]));
      AddOne(out, "process_resident_memory_bytes",
             "Resident memory size in bytes.", MetricType::kGauge,
             std::stod(f[21]) * page);
      std::istringstream sys(ReadFile("/proc/stat"));
      for (std::string line; std::getline(sys, line);) {
        if (line.rfind("btime ", 0) == 0) {
          double btime = std::stod(line.substr(6));
          AddOne(out, "process_start_time_seconds",
                 "Start time of the process since unix epoch in seconds.",
                 MetricType::kGauge, btime + std::stod(f[19]) / ticks);
        }
      }
    }
  }
  if (DIR* d = opendir("/proc/self/fd")) {
    int n = 0;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') ++n;
    }
    closedir(d);
    AddOne(out, "process_open_fds", "Number of open file descriptors.",
           MetricType::kGauge, n - 1);  // not the one reading the directory
  }
  std::istringstream limits(ReadFile("/proc/self/limits"));
  for (std::string line; std::getline(limits, line);) {
    auto field = [&](size_t at) -> double {
      std::istringstream in(line.substr(at));
      std::string soft;
      in >> soft;
      // procfs reads "unlimited" as the largest uint64, and client_golang
      // reports that (1.8446744073709552e+19).
      return soft == "unlimited" ? 18446744073709551615.0 : std::stod(soft);
    };
    if (line.rfind("Max open files", 0) == 0) {
      AddOne(out, "process_max_fds", "Maximum number of open file descriptors.",
             MetricType::kGauge, field(26));
    } else if (line.rfind("Max address space", 0) == 0) {
      AddOne(out, "process_virtual_memory_max_bytes",
             "Maximum amount of virtual memory available in bytes.",
             MetricType::kGauge, field(26));
    }
  }
}

}  // namespace vigil::metrics
