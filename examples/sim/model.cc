#include "examples/sim/model.h"

#include <algorithm>
#include <cmath>

namespace vigil::sim {

const char* const kTenantNames[kTenants] = {"team-a", "team-b", "team-c"};

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kTenantBase[kTenants] = {0.5, 0.3, 0.2};
constexpr double kPrefillTps = 12000;  // prompt tokens/s of one engine
constexpr double kTpot0 = 0.018;       // seconds per decode step, empty batch
constexpr double kBatchKnee = 96;      // running requests that double TPOT
constexpr double kMaxClock = 1980, kIdleClock = 345;

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

double Hash01(uint64_t seed, uint64_t a, uint64_t b) {
  uint64_t x = Mix(Mix(Mix(seed) ^ a) ^ (b * 0x632be59bd9b4e019ULL));
  return double(x >> 11) * 0x1.0p-53;
}

double SmoothNoise(uint64_t seed, uint64_t key, int64_t t, int64_t period) {
  int64_t k = t >= 0 ? t / period : (t - period + 1) / period;
  double frac = double(t - k * period) / double(period);
  double a = 2 * Hash01(seed, key, uint64_t(k)) - 1;
  double b = 2 * Hash01(seed, key, uint64_t(k + 1)) - 1;
  double s = frac * frac * (3 - 2 * frac);
  return a + (b - a) * s;
}

double Model::Weight(int h) const {
  // Replicas differ a little (routing, hardware).
  return (0.85 + 0.3 * Hash01(c_.seed, uint64_t(h), 99)) / c_.hosts();
}

GatewayLoad Model::Gateway(int64_t t, const std::vector<Fault>& faults) const {
  GatewayLoad g;
  for (const auto& f : faults) {
    if (f.kind == FaultKind::kGateway5xx && f.ActiveAt(t)) {
      g.fraction_5xx = std::min(1.0, g.fraction_5xx + f.fraction);
    }
  }
  return g;
}

void Model::Gpus(int h, int64_t t, const std::vector<Fault>& faults,
                 HostLoad* l) const {
  l->gpus.assign(size_t(c_.gpus), GpuLoad{});
  double load = l->serving ? std::min(1.0, l->running / 48) : 0;
  if (l->hung) load = 1;  // a stuck kernel keeps the GPU busy
  for (int g = 0; g < c_.gpus; ++g) {
    GpuLoad& u = l->gpus[size_t(g)];
    double off = Hash01(c_.seed, uint64_t(h) * 64 + uint64_t(g), 7);
    double jitter =
        SmoothNoise(c_.seed, uint64_t(h) * 64 + uint64_t(g) + 5000, t, 20);
    double degrade_heat = 0;
    for (const auto& f : faults) {
      if (!f.ActiveAt(t) || f.host != h || !f.HitsGpu(g)) continue;
      double since = double(t - f.start);
      double span = f.end == kForever ? 3600.0 : double(f.end - f.start);
      double p = std::min(1.0, since / span);
      switch (f.kind) {
        case FaultKind::kGpuDegrading:
          degrade_heat += 26 * p;
          u.sbe_rate += 0.05 + 3 * p;
          u.remap_rate += p > 0.5 ? 0.002 : 0;
          break;
        case FaultKind::kXid:
          u.xid = f.code;
          if (f.code == 79 || f.code == 95) u.lost = true;
          break;
        case FaultKind::kEccDbe:
          if (t == f.start) u.dbe_step += f.count;
          break;
        default:
          break;
      }
    }
    double busy = u.lost ? 0 : load * (0.94 + 0.06 * off);
    u.util =
        busy <= 0
            ? 0
            : std::min(100.0, std::round(100 * (1 - std::exp(-l->running / 4)) +
                                         2 * jitter));
    if (l->hung && !u.lost) u.util = 100;
    u.util = std::max(0.0, u.util);
    u.tensor = busy <= 0 ? 0 : 0.04 + 0.52 * busy + 0.01 * jitter;
    u.dram = busy <= 0 ? 0.0 : 0.08 + 0.55 * busy + 0.01 * jitter;
    u.power = u.lost ? 0 : 72 + 608 * std::pow(busy, 0.85) + 6 * jitter;
    double natural = 27 + 0.072 * u.power + 3 * off + 0.5 * jitter;
    double temp = natural + degrade_heat;
    for (const auto& f : faults) {
      if (f.kind == FaultKind::kGpuOverheat && f.ActiveAt(t) && f.host == h &&
          f.HitsGpu(g) && f.temp > temp) {
        temp += (f.temp - temp) * (1 - std::exp(-double(t - f.start) / 180));
      }
    }
    u.temp = u.lost ? 0 : temp;
    u.sm_clock = u.lost ? 0 : busy > 0.02 ? kMaxClock : kIdleClock;
    if (u.temp >= 85 && busy > 0.02) {
      u.sm_clock = std::max(1095.0, kMaxClock - (u.temp - 84) * 70);
    }
    if (!u.lost) {
      if (u.util < 1) u.throttle |= 0x1;      // GpuIdle
      if (u.power >= 672) u.throttle |= 0x4;  // SwPowerCap
      if (u.temp >= 87) u.throttle |= 0x20;   // SwThermalSlowdown
      if (u.temp >= 90) u.throttle |= 0x40;   // HwThermalSlowdown
    }
  }
}

HostLoad Model::Host(int h, int64_t t, const std::vector<Fault>& faults) const {
  HostLoad l;
  double surge = 1, prompt_factor = 1, queue_rate = 0, queue_since = 0;
  double tenant_rate[kTenants] = {1, 1, 1}, tenant_tok[kTenants] = {1, 1, 1};
  bool kvsat = false;
  l.spec_alpha = 0.72;
  for (const auto& f : faults) {
    if (!f.ActiveAt(t)) continue;
    switch (f.kind) {
      case FaultKind::kTrafficSurge:
        if (f.Hits(h)) surge *= f.factor;
        break;
      case FaultKind::kKvSaturation:
        kvsat |= f.host == h;
        break;
      case FaultKind::kQueueBuildup:
        if (f.host == h) {
          queue_rate += f.rate;
          queue_since = std::max(queue_since, double(t - f.start));
        }
        break;
      case FaultKind::kLongPrompts:
        if (f.Hits(h)) prompt_factor *= f.factor;
        break;
      case FaultKind::kEngineHang:
        l.hung |= f.host == h;
        break;
      case FaultKind::kTargetDown:
        l.down |= f.page == PageKind::kEngine && f.host == h;
        break;
      case FaultKind::kSpecDecodeLow:
        if (f.Hits(h)) l.spec_alpha = f.rate;
        break;
      case FaultKind::kTenantSurge:
        for (int i = 0; i < kTenants; ++i) {
          if (f.tenant == kTenantNames[i]) {
            tenant_tok[i] *= f.factor;
            tenant_rate[i] *= 1.5;
          }
        }
        break;
      default:
        break;
    }
  }
  // Arrivals: daily shape (peak 14:00 UTC, trough a fifth of it) and
  // smooth noise, per host.
  double tod = double(((t % 86400) + 86400) % 86400);
  double shape = 0.6 + 0.4 * std::sin(2 * kPi * (tod - 8 * 3600) / 86400);
  double noise = 1 + 0.08 * SmoothNoise(c_.seed, uint64_t(h) * 16 + 1, t, 300) +
                 0.03 * SmoothNoise(c_.seed, uint64_t(h) * 16 + 2, t, 37);
  double sum = 0, tok = 0;
  for (int i = 0; i < kTenants; ++i) sum += kTenantBase[i] * tenant_rate[i];
  for (int i = 0; i < kTenants; ++i) {
    l.tenant_share[i] = kTenantBase[i] * tenant_rate[i] / sum;
    l.tenant_tokens[i] = tenant_tok[i];
    tok += l.tenant_share[i] * tenant_tok[i];
  }
  double lambda = c_.rps * Weight(h) * shape * noise * surge * sum;
  l.arrivals = lambda;
  l.prompt_mean = 900 * prompt_factor * tok;
  l.gen_mean = 250 * tok;
  l.serving = !l.hung && !l.down;
  // Solve the engine twice: the second pass sees the clock throttling that
  // the first pass's GPU heat causes.
  double theta = 1;
  for (int pass = 0; pass < 2; ++pass) {
    double a = l.prompt_mean / kPrefillTps * theta;
    double t0 = kTpot0 * theta;
    double g = l.gen_mean * t0;
    double per_req = (l.prompt_mean + l.gen_mean / 2) * (kvsat ? 5.0 : 1);
    double r_cap =
        std::min(double(MaxNumSeqs()), 0.96 * KvCapacityTokens() / per_req);
    double den = 1 - lambda * g / kBatchKnee;
    double r_free = den > 0.02 ? lambda * (a + g) / den : 1e18;
    if (r_free <= r_cap) {
      double rho = r_free / r_cap;
      l.running = r_free;
      l.finished = lambda;
      l.waiting = lambda * 0.05 * std::pow(rho, 6) / (1.05 - rho);
    } else {
      l.running = r_cap;
      l.finished = r_cap / (a + g * (1 + r_cap / kBatchKnee));
      l.waiting = std::min(2000.0, (lambda - l.finished) * 120);
    }
    if (queue_rate > 0) {
      l.waiting += std::min(3000.0, queue_rate * queue_since);
      l.finished = std::min(l.finished, lambda);
    }
    l.kv = std::min(0.999, l.running * per_req / KvCapacityTokens());
    if (kvsat) {
      l.kv = std::min(
          0.999,
          std::max(
              l.kv,
              0.984 + 0.012 *
                          (1 + SmoothNoise(c_.seed, uint64_t(h) + 900, t, 30)) /
                          2));
    }
    l.preempt_rate = kvsat        ? 0.4 + 0.3 * noise
                     : l.kv > 0.9 ? (l.kv - 0.9) * 4
                                  : 0;
    l.tpot = t0 * (1 + l.running / kBatchKnee);
    l.queue = l.waiting / std::max(l.finished, 0.05);
    l.prefill = a * (1 + l.running / 512);
    l.ttft = l.queue + l.prefill + l.tpot;
    l.decode = l.gen_mean * l.tpot;
    l.e2e = l.ttft + l.decode;
    l.prefix_hit =
        kvsat ? 0.08
              : std::max(0.0, 0.38 + 0.04 * noise - std::max(0.0, l.kv - 0.8));
    if (!l.serving) {
      l.running = l.waiting = l.finished = l.kv = l.preempt_rate = 0;
    }
    Gpus(h, t, faults, &l);
    bool lost = false;
    theta = 1;
    for (const auto& u : l.gpus) {
      lost |= u.lost;
      if (u.sm_clock > kIdleClock)
        theta = std::max(theta, kMaxClock / u.sm_clock);
    }
    if (lost && l.serving) {
      // Tensor parallelism over every GPU: one lost GPU fails the engine.
      l.errors = lambda;
      l.finished = lambda;
      l.running = l.waiting = 0;
      l.serving = false;
    }
    if (theta == 1) break;
  }
  l.cpu_busy =
      std::min(double(c_.cpus), 2.5 + 0.03 * l.running + 0.12 * l.arrivals);
  return l;
}

}  // namespace vigil::sim
