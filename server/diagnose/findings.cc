// The judging half of diagnose: the diagnosis map of docs/diagnose.md over
// the measured signals. Each finding carries the numbers it rests on and
// what to look at next.
#include <algorithm>
#include <set>

#include "fmt/format.h"
#include "server/diagnose/signals.h"

namespace vigil::diagnose {

namespace {

std::string F(double v) { return HumanNumber(v); }

std::string Hex(int64_t v) { return fmt::format("0x{:x}", v); }

class Judger {
 public:
  Judger(const Signals& s, const Thresholds& t, Report* r)
      : s_(s), t_(t), r_(r) {
    w_ = FormatDurationMs(t.window_ms);
    bw_ = FormatDurationMs(t.baseline_window_ms) + " offset " +
          FormatDurationMs(t.baseline_offset_ms);
  }
  void Run();

 private:
  // At or above the SLO line and risen over the baseline (the line alone
  // without a baseline).
  bool High(const Pair& p, double slo) const {
    if (!p.has() || p.now < slo) return false;
    return !p.has_base() || p.now >= p.base * t_.rise_ratio;
  }
  bool Normal(const Pair& p, double slo) const {
    return p.has() && !High(p, slo);
  }
  Evidence Ev(const char* metric, const Pair& p, double threshold = NAN) const {
    Evidence e;
    e.metric = metric;
    e.value = p.now;
    e.window = w_;
    e.baseline = p.base;
    if (p.has_base()) e.baseline_window = bw_;
    e.threshold = threshold;
    return e;
  }
  Evidence Ev1(const char* metric, double v, std::string window,
               double threshold = NAN, std::string labels = "") const {
    Evidence e;
    e.metric = metric;
    e.value = v;
    e.window = std::move(window);
    e.threshold = threshold;
    e.labels = std::move(labels);
    return e;
  }
  Finding& Add(Cause c, const char* severity, const EngineSignals& e,
               std::string summary) {
    Finding f;
    f.cause = c;
    f.severity = severity;
    f.variant = e.variant;
    f.instance = e.instance;
    f.node = e.node;
    f.summary = std::move(summary);
    r_->findings.push_back(std::move(f));
    return r_->findings.back();
  }
  const HostSignals* HostOf(const EngineSignals& e) const {
    const std::string key = NodeKey(e.node, e.instance);
    for (const auto& [inst, h] : s_.hosts) {
      if (NodeKey(h.node, h.instance) == key) return &h;
    }
    return nullptr;
  }
  bool Hot(const HostSignals* h) const {
    if (!h) return false;
    for (const auto& [id, g] : h->gpus) {
      if (g.temp_max > t_.gpu_temp_celsius) return true;
      if (g.throttle_bits & t_.throttle_mask) return true;
    }
    return false;
  }
  void Latency(const EngineSignals& e);
  void Capacity(const EngineSignals& e);
  void Availability(const EngineSignals& e);
  void Hardware(const HostSignals& h);
  void NoteMissing(const EngineSignals& e);
  void MissingHosts();

  const Signals& s_;
  const Thresholds& t_;
  Report* r_;
  std::string w_, bw_;
};

void Judger::Latency(const EngineSignals& e) {
  const bool ttft_high = High(e.ttft, t_.ttft_p99_seconds);
  const bool tpot_high = High(e.tpot, t_.tpot_p95_seconds);
  auto common = [&](Finding& f) {
    f.evidence.push_back(Ev("ttft_p99_seconds", e.ttft, t_.ttft_p99_seconds));
    f.evidence.push_back(Ev("tpot_p95_seconds", e.tpot, t_.tpot_p95_seconds));
  };
  if (ttft_high && Normal(e.tpot, t_.tpot_p95_seconds)) {
    Finding& f = Add(Cause::kUpstream, "critical", e,
                     fmt::format("TTFT p99 {}s is high while TPOT p95 is "
                                 "normal: requests wait before their first "
                                 "token (upstream of decoding)",
                                 F(e.ttft.now)));
    common(f);
    f.evidence.push_back(Ev("queue_waiting", e.queue, t_.queue_high));
    f.evidence.push_back(Ev("prompt_tokens_per_second", e.in_tps));
    f.next = {fmt::format("queue depth: {} requests waiting on average "
                          "(baseline {})",
                          F(e.queue.now), F(e.queue.base)),
              fmt::format("prefill pressure: {} prompt tokens/s (baseline "
                          "{}); longer prompts or a new template?",
                          F(e.in_tps.now), F(e.in_tps.base)),
              "admission control: max_num_seqs / max_num_batched_tokens and "
              "the gateway's rate limits (429s)"};
  } else if (tpot_high && Normal(e.ttft, t_.ttft_p99_seconds)) {
    Finding& f = Add(Cause::kDecodeBound, "warning", e,
                     fmt::format("TPOT p95 {}s is high while TTFT is normal: "
                                 "decoding is the bottleneck",
                                 F(e.tpot.now)));
    common(f);
    f.evidence.push_back(Ev("running_requests", e.running));
    f.evidence.push_back(Ev("kv_cache_usage", e.kv, t_.kv_high));
    f.next = {fmt::format("batch occupancy: {} requests running (baseline {})",
                          F(e.running.now), F(e.running.base)),
              fmt::format("KV-cache level: {} (baseline {})", F(e.kv.now),
                          F(e.kv.base)),
              "clock throttling: DCGM_FI_DEV_CLOCK_THROTTLE_REASONS and "
              "DCGM_FI_DEV_SM_CLOCK of this node's GPUs"};
  } else if (ttft_high && tpot_high &&
             !(Hot(HostOf(e)) && e.queue.has() &&
               e.queue.now <= t_.queue_high)) {
    // (Both high on a hot or throttled GPU with a normal queue is the
    // supply side's finding, not a lack of replicas.)
    Finding& f = Add(Cause::kCapacityExhausted, "critical", e,
                     "TTFT and TPOT are both high: the engine is out of "
                     "capacity");
    common(f);
    f.evidence.push_back(Ev("queue_waiting", e.queue, t_.queue_high));
    f.evidence.push_back(Ev("kv_cache_usage", e.kv, t_.kv_high));
    f.next = {"add GPU memory or replicas: tuning no longer helps",
              "meanwhile shed load at the gateway (clean 429s with "
              "Retry-After)"};
    if (Hot(HostOf(e))) {
      f.next.insert(f.next.begin(),
                    "a GPU of " + NodeKey(e.node, e.instance) +
                        " is hot or throttled: the capacity lost may be the "
                        "hardware's (see its hardware finding)");
    }
  }
  // Past the knee: the engine turns out no more tokens than before while
  // latency climbs and requests queue.
  const double tr = e.out_tps.ratio();
  const bool risen =
      e.ttft.ratio() >= t_.rise_ratio || e.tpot.ratio() >= t_.rise_ratio;
  if (!std::isnan(tr) && std::fabs(tr - 1) <= t_.flat_tolerance && risen &&
      e.queue.now > t_.queue_high) {
    Finding& f = Add(Cause::kSaturationKnee, "warning", e,
                     fmt::format("throughput is flat ({}x the baseline) while "
                                 "latency rises and {} requests wait: past "
                                 "the saturation knee",
                                 F(tr), F(e.queue.now)));
    f.evidence.push_back(Ev("output_tokens_per_second", e.out_tps));
    common(f);
    f.evidence.push_back(Ev("queue_waiting", e.queue, t_.queue_high));
    f.next = {"shed load or scale out before the tail latency collapses",
              "compare the request rate at the gateway with the baseline"};
    if (Hot(HostOf(e))) {
      f.next.insert(f.next.begin(),
                    "a GPU of " + NodeKey(e.node, e.instance) +
                        " is hot or throttled: the knee moved because the "
                        "hardware slowed down (see its hardware finding)");
    }
  }
}

void Judger::Capacity(const EngineSignals& e) {
  const HostSignals* h = HostOf(e);
  const bool queue_high = e.queue.now > t_.queue_high;
  const bool kv_high = e.kv.now > t_.kv_high;
  const bool hot = Hot(h);
  if (queue_high && kv_high && !hot) {
    Finding& f = Add(Cause::kDemandSide, "warning", e,
                     fmt::format("queue ({} waiting) and KV cache ({}) are "
                                 "both high on healthy GPUs: demand exceeds "
                                 "capacity",
                                 F(e.queue.now), F(e.kv.now)));
    f.evidence.push_back(Ev("queue_waiting", e.queue, t_.queue_high));
    f.evidence.push_back(Ev("kv_cache_usage", e.kv, t_.kv_high));
    if (h) f.evidence.push_back(Ev1("gpu_util_percent", h->util_avg, w_));
    f.next = {"scale out (replicas) or rate-limit at the gateway",
              "request rate and prompt lengths per tenant vs the capacity "
              "design (KV at 80 % = design concurrency)"};
  }
  const bool latency_high =
      High(e.ttft, t_.ttft_p99_seconds) || High(e.tpot, t_.tpot_p95_seconds);
  if (hot && e.queue.has() && !queue_high && latency_high) {
    Finding& f = Add(Cause::kSupplySide, "warning", e,
                     "latency is up with a normal queue on a hot or "
                     "throttled GPU: the hardware supplies less");
    f.evidence.push_back(Ev("ttft_p99_seconds", e.ttft, t_.ttft_p99_seconds));
    f.evidence.push_back(Ev("tpot_p95_seconds", e.tpot, t_.tpot_p95_seconds));
    f.evidence.push_back(Ev("queue_waiting", e.queue, t_.queue_high));
    for (const auto& [id, g] : h->gpus) {
      if (g.temp_max > t_.gpu_temp_celsius ||
          (g.throttle_bits & t_.throttle_mask)) {
        std::string l = "gpu=\"" + id + "\"";
        f.evidence.push_back(Ev1("gpu_temp_max_celsius", g.temp_max, w_,
                                 t_.gpu_temp_celsius, l));
        f.evidence.push_back(
            Ev1("clock_throttle_reasons", double(g.throttle_bits), w_, NAN, l));
      }
    }
    f.next = {"cooling, fans and power of " + NodeKey(e.node, e.instance),
              "DCGM_FI_DEV_SM_CLOCK and DCGM_FI_DEV_POWER_USAGE against the "
              "node's other GPUs; drain the node if it persists"};
  }
  if (kv_high && e.queue.has() && !queue_high) {
    Finding& f = Add(Cause::kKvHighWater, "info", e,
                     fmt::format("KV cache at {} without a queue: a healthy "
                                 "high-water mark, capacity is near its limit",
                                 F(e.kv.now)));
    f.evidence.push_back(Ev("kv_cache_usage", e.kv, t_.kv_high));
    f.evidence.push_back(Ev("queue_waiting", e.queue, t_.queue_high));
    f.next = {"plan capacity: watch the weekly KV p95 and queue p95 trend"};
  }
  if (e.prefix.has() && e.prefix.has_base() &&
      e.prefix.base >= t_.prefix_min_baseline &&
      e.prefix.now < e.prefix.base * t_.prefix_collapse_ratio) {
    Finding& f = Add(Cause::kPrefixCacheCollapse, "warning", e,
                     fmt::format("prefix-cache hit rate fell to {} from {}",
                                 F(e.prefix.now), F(e.prefix.base)));
    f.evidence.push_back(Ev("prefix_cache_hit_rate", e.prefix));
    f.evidence.push_back(Ev("kv_cache_usage", e.kv, t_.kv_high));
    f.next = {
        "did the chat template or system prompt change? check the "
        "change timeline",
        fmt::format("is the KV pool exhausted? KV cache {}", F(e.kv.now))};
  }
}

void Judger::Availability(const EngineSignals& e) {
  if (e.probe_configured && e.up == 1 && e.probe == 0) {
    Finding& f = Add(Cause::kGpuHang, "critical", e,
                     "the engine answers its scrape (up 1) but the inference "
                     "probe fails: a GPU hang (CUDA deadlock) is likely");
    f.evidence.push_back(Ev1("up", e.up, "now"));
    f.evidence.push_back(Ev1("probe_success", e.probe, "now"));
    f.evidence.push_back(Ev1("probe_success_ratio", e.probe_avg, w_));
    f.next = {
        "drain the instance (stop routing to it) and restart it",
        "the engine log and nvidia-smi on " + NodeKey(e.node, e.instance)};
  }
  if (e.up == 0) {
    Finding& f = Add(Cause::kEngineDown, "critical", e,
                     "the engine's /metrics scrape fails (up 0)");
    f.evidence.push_back(Ev1("up", e.up, "now"));
    f.evidence.push_back(Ev1("up_ratio", e.up_avg, w_));
    if (e.probe_configured) {
      f.evidence.push_back(Ev1("probe_success", e.probe, "now"));
    }
    f.next = {
        "is the process alive and the port open? (a hang that holds "
        "the connection times the scrape out)",
        "the container's restarts and log (OOM at start-up?)"};
  }
  if (!std::isnan(e.spec_accept) && e.spec_accept < t_.spec_acceptance_low) {
    Finding& f = Add(Cause::kSpecDecodeLow, "warning", e,
                     fmt::format("speculative decoding accepts {} of the "
                                 "draft tokens: it burns bandwidth instead "
                                 "of speeding up",
                                 F(e.spec_accept)));
    f.evidence.push_back(Ev1("spec_decode_acceptance", e.spec_accept, w_,
                             t_.spec_acceptance_low));
    f.next = {"does the draft model still match the target model?",
              "turn speculative decoding off until it does"};
  }
}

void Judger::Hardware(const HostSignals& h) {
  Finding f;
  f.cause = Cause::kHardware;
  f.severity = "warning";
  f.instance = h.instance;
  f.node = h.node;
  f.variant = h.variant;
  std::vector<std::string> what;
  const std::string ew = FormatDurationMs(t_.ecc_window_ms);
  for (const auto& [id, g] : h.gpus) {
    std::string l = "gpu=\"" + id + "\"";
    if (g.xid > 0) {
      f.severity = "critical";
      what.push_back(fmt::format("XID {} on GPU {}", int64_t(g.xid), id));
      f.evidence.push_back(Ev1("xid_errors", g.xid, w_, 0, l));
    }
    if (g.dbe_inc > 0) {
      f.severity = "critical";
      what.push_back(fmt::format("{} double-bit ECC error(s) on GPU {}",
                                 F(g.dbe_inc), id));
      f.evidence.push_back(Ev1("ecc_dbe_increase", g.dbe_inc, ew, 0, l));
    }
    if (g.sbe_inc >= t_.ecc_sbe_increase) {
      what.push_back(
          fmt::format("single-bit ECC errors growing fast on GPU {}", id));
      f.evidence.push_back(
          Ev1("ecc_sbe_increase", g.sbe_inc, w_, t_.ecc_sbe_increase, l));
    }
    if (g.throttle_bits & t_.throttle_mask) {
      what.push_back(fmt::format("GPU {} throttled (reasons {})", id,
                                 Hex(g.throttle_bits & t_.throttle_mask)));
      f.evidence.push_back(
          Ev1("clock_throttle_reasons", double(g.throttle_bits), w_, NAN, l));
    }
    if (g.temp_max > t_.gpu_temp_celsius) {
      what.push_back(fmt::format("GPU {} at {} C", id, F(g.temp_max)));
      f.evidence.push_back(
          Ev1("gpu_temp_max_celsius", g.temp_max, w_, t_.gpu_temp_celsius, l));
    }
  }
  if (what.empty()) return;
  std::string sum;
  for (const auto& w : what) sum += (sum.empty() ? "" : "; ") + w;
  f.summary = sum + ": driver or hardware";
  const std::string node = NodeKey(h.node, h.instance);
  f.next = {
      "drain the node " + node +
          " (cordon, move its traffic) before "
          "it fails requests",
      "nvidia-smi -q -d ECC,PERFORMANCE and dmesg | grep -i xid on " + node,
      "file a hardware ticket with the XID code, ECC counts and the "
      "timeline"};
  r_->findings.push_back(std::move(f));
}

void Judger::NoteMissing(const EngineSignals& e) {
  auto miss = [&](std::string kind, std::string msg) {
    r_->missing.push_back({std::move(kind), e.job, e.instance, std::move(msg)});
  };
  if (e.up == 0) {
    miss("target_down", fmt::format("engine {} (job {}) is down: its engine "
                                    "metrics are missing",
                                    e.instance, e.job));
    return;
  }
  struct Need {
    const Pair* p;
    const char* what;
  };
  for (const Need& n : {Need{&e.ttft, "TTFT histogram"},
                        Need{&e.tpot, "TPOT / inter-token latency histogram"},
                        Need{&e.queue, "waiting-requests gauge"},
                        Need{&e.kv, "KV-cache usage gauge"}}) {
    if (!n.p->has()) {
      miss("metric_absent",
           fmt::format("{}: no {} data over the last {} (metric absent, or no "
                       "request finished)",
                       e.instance, n.what, w_));
    }
  }
  if (!HostOf(e)) {
    miss("metric_absent",
         fmt::format("{}: no GPU exporter (job {}) for node {}: hardware "
                     "checks skipped",
                     e.instance, t_.gpu_jobs, NodeKey(e.node, e.instance)));
  }
  if (s_.any_probe && !e.probe_configured) {
    miss("no_probe", fmt::format("{}: no inference probe for this engine "
                                 "(probe_success{{job=~\"{}\"}})",
                                 e.instance, t_.probe_job));
  }
}

void Judger::MissingHosts() {
  for (const auto& [inst, h] : s_.hosts) {
    if (h.up == 0) {
      r_->missing.push_back(
          {"target_down", h.job, inst,
           fmt::format("GPU exporter {} (job {}) is down: hardware checks of "
                       "{} skipped",
                       inst, h.job, NodeKey(h.node, h.instance))});
    } else if (!h.ecc_exported) {
      r_->missing.push_back(
          {"ecc_disabled", h.job, inst,
           fmt::format("{}: dcgm-exporter exports no DCGM_FI_DEV_ECC_* "
                       "counters (off in its default counters CSV): ECC "
                       "errors cannot be checked",
                       inst)});
    }
  }
}

void Judger::Run() {
  for (const auto& [inst, e] : s_.engines) {
    if (e.up != 0) {
      Latency(e);
      Capacity(e);
    }
    Availability(e);
    NoteMissing(e);
  }
  for (const auto& [inst, h] : s_.hosts) {
    if (h.up != 0) Hardware(h);
  }
  MissingHosts();
  if (s_.engines.empty()) {
    r_->missing.push_back({"no_engines", t_.engine_jobs, "",
                           "no engine target (job =~ " + t_.engine_jobs +
                               ") and no engine metric found"});
  }
  if (!s_.any_probe && !s_.engines.empty()) {
    r_->missing.push_back(
        {"no_probe", t_.probe_job, "",
         fmt::format("no inference probe (probe_success{{job=~\"{}\"}}): a "
                     "GPU hang (up 1, CUDA deadlocked) cannot be told from a "
                     "healthy engine",
                     t_.probe_job)});
  }
  if (!s_.baseline_known && !s_.engines.empty()) {
    r_->missing.push_back(
        {"no_baseline", "", "",
         "no data in the baseline window (" + bw_ +
             "): latency is judged against the SLO lines only"});
  }
  std::stable_sort(r_->findings.begin(), r_->findings.end(),
                   [](const Finding& a, const Finding& b) {
                     return int(a.cause) < int(b.cause);
                   });
}

}  // namespace

void Judge(const Signals& s, const Thresholds& t, Report* r) {
  Judger j(s, t, r);
  j.Run();
}

absl::StatusOr<Report> Diagnose(QuerySource* source, const Options& options) {
  auto s = Collect(source, options);
  if (!s.ok()) return s.status();
  Report r;
  r.time = options.time;
  r.variant = options.variant;
  r.engines = int(s->engines.size());
  r.gpu_hosts = int(s->hosts.size());
  r.missing = s->missing;
  Judge(*s, options.thresholds, &r);
  return r;
}

}  // namespace vigil::diagnose
