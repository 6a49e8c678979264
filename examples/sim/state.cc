#include "examples/sim/state.h"

#include <algorithm>
#include <cmath>

namespace vigil::sim {

const char* const kCpuModeNames[kCpuModes] = {
    "idle", "iowait", "irq", "nice", "softirq", "steal", "system", "user"};
const char* const kNetDeviceNames[kNetDevices] = {"eth0", "ib0"};
const char* const kServiceNames[kServices] = {"vllm", "sglang", "trtllm"};
const char* const kStatusNames[kStatuses] = {"200", "500", "502", "503", "504"};
const std::vector<double> kGoDefBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                           0.5,   1,    2.5,   5,    10};
const std::vector<double> kLengthBuckets = {10, 20, 30, 40, 50,
                                            60, 70, 80, 90, 100};

namespace {

// vLLM V1 defaults (vllm-v1.txt); V0 used prefixes of the same lists.
const std::vector<double> kTtftV1 = {
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
    1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
const std::vector<double> kTpotV1 = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
                                     0.3,  0.4,   0.5,  0.75,  1.0, 2.5,  5.0,
                                     7.5,  10.0,  20.0, 40.0,  80.0};
const std::vector<double> kE2eV1 = {
    0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
    30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
const std::vector<double> kTokensV1 = {1,   2,   5,   10,   20,   50,
                                       100, 200, 500, 1000, 2000, 5000};
const std::vector<double> kN = {1, 2, 5, 10, 20};
const std::vector<double> kIter = {1,   8,    16,   32,   64,   128,  256,
                                   512, 1024, 2048, 4096, 8192, 16384};
const std::vector<double> kHighr = {0.01, 0.025, 0.05, 0.075, 0.1,  0.25, 0.5,
                                    0.75, 1.0,   1.5,  2.0,   2.5,  3.0,  3.5,
                                    4.0,  4.5,   5.0,  7.5,   10.0, 30.0, 60.0};
const std::vector<double> kE2eV0 = {1.0,  2.5,  5.0,  10.0, 15.0,
                                    20.0, 30.0, 40.0, 50.0, 60.0};
// SGLang ~0.4 (sglang.txt).
const std::vector<double> kTtftSgl = {
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25, 0.5,
    0.75,  1.0,   2.5,  5.0,  7.5,  10.0, 15.0, 20.0, 25.0, 30.0};
const std::vector<double> kTpotSgl = {0.005, 0.01, 0.015, 0.02, 0.025, 0.03,
                                      0.04,  0.05, 0.075, 0.1,  0.15,  0.2,
                                      0.3,   0.4,  0.5,   0.75, 1.0,   2.5};
const std::vector<double> kE2eSgl = {0.3,  0.5,  0.8,  1.0,  1.5,
                                     2.0,  2.5,  5.0,  10.0, 15.0,
                                     20.0, 30.0, 40.0, 50.0, 60.0};

std::vector<double> Prefix(const std::vector<double>& v, size_t n) {
  return std::vector<double>(v.begin(), v.begin() + long(n));
}

// SGLang's func_latency bounds: 0.05 * 1.5^k, multiplied step by step
// (hence "0.07500000000000001").
std::vector<double> FuncLatency() {
  std::vector<double> v;
  double b = 0.05;
  for (int i = 0; i < 18; ++i) {
    v.push_back(b);
    b *= 1.5;
  }
  return v;
}

const std::vector<double> kNone;

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

}  // namespace

const std::vector<double>& BucketsOf(EngineKind k, HistId id) {
  static const std::vector<double> ttft_v0 = Prefix(kTtftV1, 16);
  static const std::vector<double> tpot_v0 = Prefix(kTpotV1, 13);
  static const std::vector<double> tokens_v0 = Prefix(kTokensV1, 11);
  static const std::vector<double> func = FuncLatency();
  switch (k) {
    case EngineKind::kVllmV1:
      switch (id) {
        case kTtft:
          return kTtftV1;
        case kItl:
        case kReqTpot:
          return kTpotV1;
        case kE2e:
        case kQueueTime:
        case kInferenceTime:
        case kPrefillTime:
        case kDecodeTime:
          return kE2eV1;
        case kPromptTokens:
        case kGenTokens:
        case kMaxGenTokens:
        case kParamsMaxTokens:
        case kPrefillKv:
          return kTokensV1;
        case kParamsN:
          return kN;
        case kIterTokens:
          return kIter;
        case kHttpHighr:
          return kHighr;
        default:
          return kNone;
      }
    case EngineKind::kVllmV0:
      switch (id) {
        case kTtft:
          return ttft_v0;
        case kItl:
          return tpot_v0;
        case kE2e:
          return kE2eV0;
        case kPromptTokens:
        case kGenTokens:
          return tokens_v0;
        case kParamsN:
        case kParamsBestOf:
          return kN;
        default:
          return kNone;
      }
    case EngineKind::kSglang:
      switch (id) {
        case kTtft:
          return kTtftSgl;
        case kItl:
          return kTpotSgl;
        case kE2e:
          return kE2eSgl;
        case kFuncLatency:
          return func;
        default:
          return kNone;
      }
    case EngineKind::kTrtllm:
      return kNone;
  }
  return kNone;
}

void Observe(Hist* h, const std::vector<double>& les, double n, double median,
             double sigma) {
  if (h->cum.size() != les.size() + 1) h->cum.assign(les.size() + 1, 0);
  if (n <= 0) return;
  median = std::max(median, 1e-6);
  double lm = std::log(median);
  for (size_t i = 0; i < les.size(); ++i) {
    h->cum[i] += n * NormalCdf((std::log(les[i]) - lm) / sigma);
  }
  h->cum.back() += n;
  h->sum += n * median * std::exp(sigma * sigma / 2);
}

HostState InitialHost(const Config& c, int h) {
  HostState s;
  s.t = c.start;
  EngineKind k = c.engines[size_t(h)];
  for (int i = 0; i < kNumHists; ++i) {
    s.hists[size_t(i)].cum.assign(BucketsOf(k, HistId(i)).size() + 1, 0);
  }
  s.gpus.resize(size_t(c.gpus));
  for (int g = 0; g < c.gpus; ++g) {
    // Lifetime counters carry history from before this boot.
    s.gpus[size_t(g)].energy_mj =
        4e9 * Hash01(c.seed, uint64_t(h) * 64 + uint64_t(g), 11);
  }
  s.cpu.assign(size_t(c.cpus), {});
  s.softnet.assign(size_t(c.cpus), 0);
  return s;
}

void StepHost(const Config& c, int h, const HostLoad& l, HostState* s) {
  EngineKind k = c.engines[size_t(h)];
  auto hist = [&](HistId id, double n, double median, double sigma) {
    const auto& les = BucketsOf(k, id);
    if (!les.empty()) Observe(&s->hists[size_t(id)], les, n, median, sigma);
  };
  double ok = l.serving ? l.finished : 0;
  double prompt = ok * l.prompt_mean, gen = ok * l.gen_mean;
  s->prompt_tokens += prompt;
  s->gen_tokens += gen;
  s->preemptions += l.preempt_rate;
  s->success[0] += ok * 0.88;
  s->success[1] += ok * 0.1;
  s->success[2] += ok * 0.016;
  s->success[3] += l.errors;
  s->success[4] += ok * 0.004;
  s->prefix_queries += prompt;
  s->prefix_hits += prompt * l.prefix_hit;
  s->prompt_local += prompt * (1 - l.prefix_hit);
  s->prompt_cached += prompt * l.prefix_hit;
  // ~2 * 70e9 FLOP per token over 8 GPUs.
  s->flops += (prompt + gen) * 1.75e10;
  s->read_bytes += gen * 1.8e7 + prompt * 2e5;
  s->write_bytes += (prompt + gen) * 4e4;
  if (c.spec_decode && ok > 0) {
    double a = l.spec_alpha;
    double per_step = a + a * a + a * a * a;  // 3 draft tokens
    double drafts = gen / (1 + per_step);
    s->spec_drafts += drafts;
    s->spec_draft_tokens += 3 * drafts;
    s->spec_accepted += drafts * per_step;
    s->spec_emitted += gen;
    s->spec_pos[0] += drafts * a;
    s->spec_pos[1] += drafts * a * a;
    s->spec_pos[2] += drafts * a * a * a;
  }
  s->cpu_process += 0.9 + 0.01 * l.running;
  if (ok > 0) {
    hist(kTtft, ok, l.ttft, 0.7);
    hist(kItl, ok * std::max(0.0, l.gen_mean - 1), l.tpot, 0.3);
    hist(kReqTpot, ok, l.tpot, 0.15);
    hist(kE2e, ok, l.e2e, 0.5);
    hist(kQueueTime, ok, std::max(l.queue, 0.002), 0.9);
    hist(kInferenceTime, ok, l.prefill + l.decode, 0.5);
    hist(kPrefillTime, ok, l.prefill, 0.5);
    hist(kDecodeTime, ok, l.decode, 0.5);
    hist(kPromptTokens, ok, l.prompt_mean * 0.75, 0.75);
    hist(kGenTokens, ok, l.gen_mean * 0.8, 0.65);
    hist(kMaxGenTokens, ok, 1024, 0.4);
    hist(kParamsMaxTokens, ok, 1024, 0.4);
    hist(kParamsN, ok, 0.999, 0.0001);
    hist(kParamsBestOf, ok, 0.999, 0.0001);
    hist(kIterTokens, 1 / l.tpot, l.running + l.prompt_mean * ok * l.tpot, 0.5);
    hist(kPrefillKv, ok, l.prompt_mean * 0.75 * (1 - l.prefix_hit), 0.9);
    hist(kFuncLatency, ok, 0.0003, 0.5);
  }
  if (l.arrivals > 0) hist(kHttpHighr, l.arrivals, l.e2e + 0.002, 0.5);
  for (size_t g = 0; g < s->gpus.size(); ++g) {
    GpuState& gs = s->gpus[g];
    const GpuLoad& u = l.gpus[g];
    gs.energy_mj += u.power * 1000;
    gs.nvlink += u.util * 2.5e6;
    gs.sbe_vol += u.sbe_rate;
    gs.sbe_agg += u.sbe_rate;
    gs.dbe_vol += u.dbe_step;
    gs.dbe_agg += u.dbe_step;
    gs.remap_corr += u.remap_rate;
  }
  // Host CPUs: the engine's busy CPUs spread over the first ones.
  double busy = l.cpu_busy;
  double softirq_share = std::min(0.3, 0.04 + 0.002 * l.arrivals);
  for (size_t i = 0; i < s->cpu.size(); ++i) {
    double w = 0.5 + Hash01(c.seed, uint64_t(h) * 1024 + i, 13);
    double b = std::min(1.0, busy / double(s->cpu.size()) * w);
    auto& m = s->cpu[i];
    m[0] += 1 - b;                       // idle
    m[1] += b * 0.01;                    // iowait
    m[2] += b * 0.01;                    // irq
    m[4] += b * softirq_share;           // softirq
    m[6] += b * 0.2;                     // system
    m[7] += b * (0.78 - softirq_share);  // user
    s->softnet[i] += b * (40 + 30 * l.arrivals);
  }
  s->ctx_switches += 20000 + 900 * busy;
  s->intr += 15000 + 300 * l.arrivals;
  s->pressure_cpu += std::max(0.0, busy - double(c.cpus) * 0.8) * 0.5;
  s->rx[0] += 2e4 + l.arrivals * l.prompt_mean * 4;
  s->tx[0] += 2e4 + l.finished * l.gen_mean * 4;
  double tp = 0;
  for (const auto& u : l.gpus) tp += u.util;
  s->rx[1] += tp * 1e5;
  s->tx[1] += tp * 1e5;
  s->disk_io += 0.002;
  s->disk_read += 4096;
  s->disk_written += 65536 + l.arrivals * 2000;
  s->t += 1;
}

GatewayState InitialGateway(const Config& c) {
  GatewayState s;
  s.t = c.start;
  for (auto& svc : s.routes) {
    for (auto& st : svc) {
      for (auto& r : st) {
        r.request_duration.cum.assign(kGoDefBuckets.size() + 1, 0);
        r.response_duration.cum.assign(kGoDefBuckets.size() + 1, 0);
        r.request_size.cum.assign(kLengthBuckets.size() + 1, 0);
        r.response_size.cum.assign(kLengthBuckets.size() + 1, 0);
      }
    }
  }
  return s;
}

void StepGateway(const Config& c, const std::vector<HostLoad>& hosts,
                 const GatewayLoad& g, GatewayState* s) {
  for (size_t h = 0; h < hosts.size(); ++h) {
    const HostLoad& l = hosts[h];
    int svc = 0;
    if (c.engines[h] == EngineKind::kSglang) svc = 1;
    if (c.engines[h] == EngineKind::kTrtllm) svc = 2;
    // Where this host's requests end: share per status, latency median.
    double share[kStatuses] = {};
    double latency[kStatuses] = {l.e2e, 0.01, 0.001, 0.01, 60};
    if (l.hung) {
      share[4] = 1;
    } else if (l.down) {
      share[2] = 1;
    } else {
      double err = l.arrivals > 0 ? std::min(1.0, l.errors / l.arrivals) : 0;
      share[1] = err + (1 - err) * g.fraction_5xx * 0.4;
      share[3] = (1 - err) * g.fraction_5xx * 0.6;
      share[0] = 1 - share[1] - share[3];
    }
    for (int t = 0; t < kTenants; ++t) {
      double n = l.arrivals * l.tenant_share[t];
      if (n <= 0) continue;
      double req_bytes = 400 + 4 * l.prompt_mean * l.tenant_tokens[t];
      double resp_bytes = 300 + 4 * l.gen_mean * l.tenant_tokens[t];
      for (int st = 0; st < kStatuses; ++st) {
        double m = n * share[st];
        if (m <= 0) continue;
        RouteState& r = s->routes[size_t(t)][size_t(svc)][size_t(st)];
        r.requests += m;
        Observe(&r.request_duration, kGoDefBuckets, m, latency[st] + 0.003,
                0.5);
        Observe(&r.response_duration, kGoDefBuckets, m, latency[st], 0.5);
        Observe(&r.request_size, kLengthBuckets, m, req_bytes, 0.6);
        Observe(&r.response_size, kLengthBuckets, m, st == 0 ? resp_bytes : 180,
                0.6);
        s->bytes_written += m * (st == 0 ? resp_bytes : 180);
      }
    }
  }
  s->cpu += 0.05 + 0.0004 * s->bytes_written / 1e6;
  s->t += 1;
}

}  // namespace vigil::sim
