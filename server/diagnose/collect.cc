// The measuring half of diagnose: instant queries at T over the recent
// window and the baseline window. Every engine measure is an `or` over the
// names the fleet really exports (vLLM V1 first, then V0, then SGLang), and
// last over the llm:* recording rules, so diagnose works with or without
// examples/llm/rules/recording.yml.
#include <functional>
#include <set>

#include "fmt/format.h"
#include "server/diagnose/signals.h"

namespace vigil::diagnose {

namespace {

// The labels an engine measure keeps (by).
constexpr char kBy[] = "job, instance, variant, framework, node";
constexpr char kGpuBy[] = "job, instance, node, variant, gpu";

struct Win {
  std::string range;
  std::string offset;  // "" for the recent window
};

// name{match}[range] offset off
std::string S(std::string_view name, const Win& w,
              std::string_view match = "") {
  std::string s = fmt::format("{}{}[{}]", name, match, w.range);
  if (!w.offset.empty()) s += " offset " + w.offset;
  return s;
}

// Each part only for the targets the parts before it did not answer for
// (the names of other engines and versions, then the recording rule,
// whose label sets differ).
std::string Or(const std::vector<std::string>& parts) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : " or on (instance) ") + p;
  return s;
}

std::string Quantile(double q, const std::vector<std::string_view>& buckets,
                     std::string_view rule, const Win& w) {
  std::vector<std::string> parts;
  for (auto b : buckets) {
    parts.push_back(fmt::format(
        "histogram_quantile({}, sum by (le, {}) (rate({})))", q, kBy, S(b, w)));
  }
  parts.push_back(
      fmt::format("max by ({}) (avg_over_time({}))", kBy, S(rule, w)));
  return Or(parts);
}

std::string GaugeAvg(const std::vector<std::string_view>& names,
                     std::string_view rule, const Win& w) {
  std::vector<std::string> parts;
  for (auto n : names) {
    parts.push_back(
        fmt::format("max by ({}) (avg_over_time({}))", kBy, S(n, w)));
  }
  if (!rule.empty()) {
    parts.push_back(
        fmt::format("max by ({}) (avg_over_time({}))", kBy, S(rule, w)));
  }
  return Or(parts);
}

std::string CounterRate(const std::vector<std::string_view>& names,
                        std::string_view rule, const Win& w) {
  std::vector<std::string> parts;
  for (auto n : names) {
    parts.push_back(fmt::format("sum by ({}) (rate({}))", kBy, S(n, w)));
  }
  if (!rule.empty()) {
    parts.push_back(
        fmt::format("max by ({}) (avg_over_time({}))", kBy, S(rule, w)));
  }
  return Or(parts);
}

std::string PrefixHit(const Win& w) {
  return Or({fmt::format("sum by ({0}) (rate({1})) / sum by ({0}) (rate({2}))",
                         kBy, S("vllm:prefix_cache_hits_total", w),
                         S("vllm:prefix_cache_queries_total", w)),
             fmt::format("max by ({}) (avg_over_time({}))", kBy,
                         S("vllm:gpu_prefix_cache_hit_rate", w)),
             fmt::format("max by ({}) (avg_over_time({}))", kBy,
                         S("sglang:cache_hit_rate", w))});
}

std::string SpecAccept(const Win& w) {
  return Or(
      {fmt::format("sum by ({0}) (rate({1})) / sum by ({0}) (rate({2}))", kBy,
                   S("vllm:spec_decode_num_accepted_tokens_total", w),
                   S("vllm:spec_decode_num_draft_tokens_total", w)),
       fmt::format("max by ({}) (avg_over_time({}))", kBy,
                   S("vllm:spec_decode_draft_acceptance_rate", w)),
       fmt::format("max by ({}) (avg_over_time({}))", kBy,
                   S("sglang:spec_accept_rate", w))});
}

std::string JobMatch(const std::string& re) {
  std::string q;
  for (char c : re) {
    if (c == '\\' || c == '"') q.push_back('\\');
    q.push_back(c);
  }
  return "{job=~\"" + q + "\"}";
}

class Collector {
 public:
  Collector(QuerySource* src, const Options& o) : src_(src), o_(o) {
    const Thresholds& t = o.thresholds;
    recent_ = {FormatDurationMs(t.window_ms), ""};
    base_ = {FormatDurationMs(t.baseline_window_ms),
             FormatDurationMs(t.baseline_offset_ms)};
  }

  absl::StatusOr<Signals> Run();

 private:
  using Each = std::function<void(const promql::Series&)>;
  absl::Status Q(const std::string& expr, const Each& f) {
    auto r = src_->Query(expr, o_.time);
    if (!r.ok()) {
      return absl::Status(
          r.status().code(),
          fmt::format("query {}: {}", expr, std::string(r.status().message())));
    }
    for (const auto& s : *r) {
      if (!s.vs.empty()) f(s);
    }
    return absl::OkStatus();
  }
  EngineSignals& Engine(const Labels& l) {
    EngineSignals& e = out_.engines[std::string(l.Get("instance"))];
    if (e.instance.empty()) e.instance = std::string(l.Get("instance"));
    auto fill = [&](std::string* dst, std::string_view name) {
      if (dst->empty()) *dst = std::string(l.Get(name));
    };
    fill(&e.job, "job");
    fill(&e.variant, "variant");
    fill(&e.framework, "framework");
    fill(&e.node, "node");
    return e;
  }
  // A per-engine value of both windows.
  absl::Status EnginePair(const std::function<std::string(const Win&)>& q,
                          Pair EngineSignals::*field) {
    absl::Status st = Q(q(recent_), [&](const promql::Series& s) {
      (Engine(s.metric).*field).now = s.vs.back();
    });
    if (!st.ok()) return st;
    return Q(q(base_), [&](const promql::Series& s) {
      auto it = out_.engines.find(std::string(s.metric.Get("instance")));
      if (it != out_.engines.end()) (it->second.*field).base = s.vs.back();
    });
  }
  HostSignals& Host(const Labels& l) {
    HostSignals& h = out_.hosts[std::string(l.Get("instance"))];
    if (h.instance.empty()) {
      h.instance = std::string(l.Get("instance"));
      h.job = std::string(l.Get("job"));
      h.node = std::string(l.Get("node"));
      h.variant = std::string(l.Get("variant"));
    }
    return h;
  }
  GpuSignals& Gpu(const Labels& l) {
    GpuSignals& g = Host(l).gpus[std::string(l.Get("gpu"))];
    g.gpu = std::string(l.Get("gpu"));
    return g;
  }
  absl::Status CollectEngines();
  absl::Status CollectGpus();
  absl::Status CollectProbes();
  absl::Status CollectDown();
  void Filter();

  QuerySource* src_;
  const Options& o_;
  Win recent_, base_;
  Signals out_;
};

absl::Status Collector::CollectEngines() {
  const Thresholds& t = o_.thresholds;
  const std::string ej = JobMatch(t.engine_jobs);
  absl::Status st = Q("up" + ej, [&](const promql::Series& s) {
    Engine(s.metric).up = s.vs.back();
  });
  if (!st.ok()) return st;
  st = Q(
      fmt::format("avg_over_time({})", S("up", recent_, ej)),
      [&](const promql::Series& s) { Engine(s.metric).up_avg = s.vs.back(); });
  if (!st.ok()) return st;
  struct Measure {
    std::function<std::string(const Win&)> q;
    Pair EngineSignals::*field;
  };
  const std::vector<Measure> measures = {
      {[](const Win& w) {
         return Quantile(0.99,
                         {"vllm:time_to_first_token_seconds_bucket",
                          "sglang:time_to_first_token_seconds_bucket"},
                         "llm:ttft_p99:5m", w);
       },
       &EngineSignals::ttft},
      {[](const Win& w) {
         return Quantile(0.95,
                         {"vllm:inter_token_latency_seconds_bucket",
                          "vllm:time_per_output_token_seconds_bucket",
                          "sglang:inter_token_latency_seconds_bucket",
                          "sglang:time_per_output_token_seconds_bucket"},
                         "llm:tpot_p95:5m", w);
       },
       &EngineSignals::tpot},
      {[](const Win& w) {
         return GaugeAvg({"vllm:num_requests_waiting", "sglang:num_queue_reqs"},
                         "llm:queue_max:1m", w);
       },
       &EngineSignals::queue},
      {[](const Win& w) {
         return GaugeAvg({"vllm:kv_cache_usage_perc",
                          "vllm:gpu_cache_usage_perc", "sglang:token_usage"},
                         "llm:kv_usage:1m", w);
       },
       &EngineSignals::kv},
      {[](const Win& w) {
         return GaugeAvg(
             {"vllm:num_requests_running", "sglang:num_running_reqs"}, "", w);
       },
       &EngineSignals::running},
      {[](const Win& w) {
         return CounterRate(
             {"vllm:generation_tokens_total", "sglang:generation_tokens_total"},
             "llm:out_tps:5m", w);
       },
       &EngineSignals::out_tps},
      {[](const Win& w) {
         return CounterRate(
             {"vllm:prompt_tokens_total", "sglang:prompt_tokens_total"},
             "llm:in_tps:5m", w);
       },
       &EngineSignals::in_tps},
      {PrefixHit, &EngineSignals::prefix},
  };
  for (const auto& m : measures) {
    if (st = EnginePair(m.q, m.field); !st.ok()) return st;
  }
  return Q(SpecAccept(recent_), [&](const promql::Series& s) {
    Engine(s.metric).spec_accept = s.vs.back();
  });
}

absl::Status Collector::CollectGpus() {
  const Thresholds& t = o_.thresholds;
  const std::string gj = JobMatch(t.gpu_jobs);
  absl::Status st = Q("up" + gj, [&](const promql::Series& s) {
    Host(s.metric).up = s.vs.back();
  });
  if (!st.ok()) return st;
  st = Q(
      fmt::format("avg by (job, instance, node, variant) "
                  "(avg_over_time({}))",
                  S("DCGM_FI_DEV_GPU_UTIL", recent_)),
      [&](const promql::Series& s) { Host(s.metric).util_avg = s.vs.back(); });
  if (!st.ok()) return st;
  st =
      Q(fmt::format("max by ({}) (max_over_time({}))", kGpuBy,
                    S("DCGM_FI_DEV_GPU_TEMP", recent_)),
        [&](const promql::Series& s) { Gpu(s.metric).temp_max = s.vs.back(); });
  if (!st.ok()) return st;
  st = Q(fmt::format("max by ({}) (max_over_time({}))", kGpuBy,
                     S("DCGM_FI_DEV_XID_ERRORS", recent_)),
         [&](const promql::Series& s) { Gpu(s.metric).xid = s.vs.back(); });
  if (!st.ok()) return st;
  // The bitmask: every reading of the window, OR-ed (PromQL has no
  // bitwise operators). dcgm-exporter renamed the field with DCGM 3.3.
  st = Q(S("{__name__=~\"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS|"
           "DCGM_FI_DEV_CLOCKS_EVENT_REASONS\"}",
           recent_),
         [&](const promql::Series& s) {
           GpuSignals& g = Gpu(s.metric);
           g.has_throttle = true;
           for (double v : s.vs) {
             if (std::isfinite(v) && v >= 0) g.throttle_bits |= int64_t(v);
           }
         });
  if (!st.ok()) return st;
  const Win ecc{FormatDurationMs(t.ecc_window_ms), ""};
  st = Q(fmt::format("max by ({0}) (increase({1})) or max by ({0}) "
                     "(increase({2}))",
                     kGpuBy, S("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", ecc),
                     S("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", ecc)),
         [&](const promql::Series& s) { Gpu(s.metric).dbe_inc = s.vs.back(); });
  if (!st.ok()) return st;
  st = Q(fmt::format("max by ({0}) (increase({1})) or max by ({0}) "
                     "(increase({2}))",
                     kGpuBy, S("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", recent_),
                     S("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", recent_)),
         [&](const promql::Series& s) { Gpu(s.metric).sbe_inc = s.vs.back(); });
  if (!st.ok()) return st;
  return Q(
      "count by (job, instance, node, variant) "
      "({__name__=~\"DCGM_FI_DEV_ECC_(DBE|SBE)_(AGG|VOL)_TOTAL\"})",
      [&](const promql::Series& s) { Host(s.metric).ecc_exported = true; });
}

absl::Status Collector::CollectProbes() {
  const std::string pj = JobMatch(o_.thresholds.probe_job);
  auto known = [&](const promql::Series& s) -> EngineSignals* {
    auto it = out_.engines.find(std::string(s.metric.Get("instance")));
    return it == out_.engines.end() ? nullptr : &it->second;
  };
  absl::Status st = Q("min by (instance) (probe_success" + pj + ")",
                      [&](const promql::Series& s) {
                        out_.any_probe = true;
                        if (EngineSignals* e = known(s)) {
                          e->probe_configured = true;
                          e->probe = s.vs.back();
                        }
                      });
  if (!st.ok()) return st;
  return Q(fmt::format("min by (instance) (avg_over_time({}))",
                       S("probe_success", recent_, pj)),
           [&](const promql::Series& s) {
             if (EngineSignals* e = known(s)) e->probe_avg = s.vs.back();
           });
}

absl::Status Collector::CollectDown() {
  // Every other target that is down (node-exporter, the gateway...): its
  // data is missing from the report.
  const std::string ej = o_.thresholds.engine_jobs;
  return Q("up == 0", [&](const promql::Series& s) {
    std::string job(s.metric.Get("job")), inst(s.metric.Get("instance"));
    if (out_.engines.count(inst) || out_.hosts.count(inst)) return;
    out_.missing.push_back(
        {"target_down", job, inst,
         fmt::format("target {} (job {}) is down: its data is missing", inst,
                     job)});
  });
}

// Drops what --variant leaves out: engines of another variant, and GPU
// hosts neither labelled with the variant nor carrying one of its engines.
void Collector::Filter() {
  const std::string& v = o_.variant;
  if (v.empty()) return;
  std::set<std::string> nodes;
  for (auto it = out_.engines.begin(); it != out_.engines.end();) {
    if (it->second.variant != v) {
      it = out_.engines.erase(it);
    } else {
      nodes.insert(NodeKey(it->second.node, it->second.instance));
      ++it;
    }
  }
  for (auto it = out_.hosts.begin(); it != out_.hosts.end();) {
    const HostSignals& h = it->second;
    bool keep = h.variant == v || nodes.count(NodeKey(h.node, h.instance));
    it = keep ? std::next(it) : out_.hosts.erase(it);
  }
}

absl::StatusOr<Signals> Collector::Run() {
  absl::Status st = CollectEngines();
  if (st.ok()) st = CollectGpus();
  if (st.ok()) st = CollectProbes();
  if (st.ok()) st = CollectDown();
  if (!st.ok()) return st;
  // Series with an empty instance (a recording rule aggregated away from
  // targets) cannot be joined: leave them out.
  out_.engines.erase("");
  out_.hosts.erase("");
  Filter();
  for (const auto& [inst, e] : out_.engines) {
    (void)inst;
    for (const Pair* p : {&e.ttft, &e.tpot, &e.queue, &e.kv}) {
      if (p->has_base()) out_.baseline_known = true;
    }
  }
  return std::move(out_);
}

}  // namespace

std::string NodeKey(const std::string& node, const std::string& instance) {
  if (!node.empty()) return node;
  size_t colon = instance.rfind(':');
  return colon == std::string::npos ? instance : instance.substr(0, colon);
}

absl::StatusOr<Signals> Collect(QuerySource* source, const Options& o) {
  return Collector(source, o).Run();
}

}  // namespace vigil::diagnose
