#include "examples/sim/config.h"

#include <charconv>
#include <ctime>

#include "absl/strings/str_split.h"
#include "core/time.h"
#include "fmt/format.h"

namespace vigil::sim {

const char* EngineName(EngineKind k) {
  switch (k) {
    case EngineKind::kVllmV1:
      return "vllm-v1";
    case EngineKind::kVllmV0:
      return "vllm-v0";
    case EngineKind::kSglang:
      return "sglang";
    case EngineKind::kTrtllm:
      return "trtllm";
  }
  return "?";
}

const char* EngineJob(EngineKind k) {
  switch (k) {
    case EngineKind::kVllmV1:
    case EngineKind::kVllmV0:
      return "vllm";
    case EngineKind::kSglang:
      return "sglang";
    case EngineKind::kTrtllm:
      return "trtllm";
  }
  return "?";
}

const char* PageName(PageKind k) {
  switch (k) {
    case PageKind::kEngine:
      return "engine";
    case PageKind::kDcgm:
      return "dcgm";
    case PageKind::kNode:
      return "node";
    case PageKind::kGateway:
      return "gateway";
  }
  return "?";
}

int64_t WallNow() { return int64_t(std::time(nullptr)); }

std::string Usage() {
  return R"(usage: vigil-sim [flags]
  --hosts=N             engine hosts (default 4)
  --engines=LIST        engine per host, cycled: vllm-v1,vllm-v0,sglang (default vllm-v1)
  --trtllm-hosts=N      extra TensorRT-LLM hosts; /metrics answers 404 (default 0)
  --gpus=N              GPUs per host (default 8)
  --cpus=N              CPUs per host (default 64)
  --rps=R               fleet requests/s at the daily peak (default 10 per host)
  --model=NAME          served model (default meta-llama/Llama-3.1-70B-Instruct)
  --seed=N              (default 1)
  --start=UNIX          when the simulated processes started (default now)
  --fixed-time=UNIX     pages without ?t= show this second (tests)
  --listen=HOST:PORT    control port; gateway PORT+1, host h PORT+2+3h (engine),
                        +3+3h (dcgm), +4+3h (node). PORT 0: free ports (default 127.0.0.1:0)
  --sd-file=PATH        write a Prometheus file_sd JSON of every page
  --scenario=FILE       faults to inject (YAML or JSON, examples/sim/README.md)
  --ecc                 export DCGM_FI_DEV_ECC_* (off in dcgm-exporter's default CSV)
  --no-spec-decode      no speculative-decoding metrics
  --backfill=DURATION   write DURATION of history (e.g. 3h) and exit
  --backfill-step=DUR   sample interval of the history (default 15s)
  --backfill-file=PATH  OpenMetrics output (default backfill.om)
  --backfill-probe      also backfill the inference probe's probe_success
  --live                after the backfill, serve (history continues into the pages)
  --threads=N           render threads (default 2)
  --churn=DURATION      engine pods restart with new pod/instance labels this often
  --explode=N           N series of a per-request label on each engine page ...
  --explode-every=DUR   ... in a window opening this often (default 1h) ...
  --explode-for=DUR     ... and lasting this long (default 10m)
)";
}

namespace {

absl::StatusOr<int64_t> Int(const std::string& flag, const std::string& v,
                            int64_t lo, int64_t hi) {
  int64_t x = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  if (r.ec != std::errc() || r.ptr != v.data() + v.size() || x < lo || x > hi) {
    return absl::InvalidArgumentError(fmt::format(
        "--{}: want an integer in [{}, {}]; have {:?}", flag, lo, hi, v));
  }
  return x;
}

absl::StatusOr<int64_t> Seconds(const std::string& flag, const std::string& v) {
  auto ms = ParseDuration(v);
  if (!ms.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("--{}: {}", flag, std::string(ms.status().message())));
  }
  if (*ms % 1000 != 0) {
    return absl::InvalidArgumentError(
        fmt::format("--{}: want whole seconds; have {:?}", flag, v));
  }
  return *ms / 1000;
}

}  // namespace

absl::StatusOr<Config> ParseFlags(int argc, char** argv) {
  Config c;
  int64_t hosts = 4, trtllm = 0;
  std::vector<EngineKind> cycle = {EngineKind::kVllmV1};
  bool have_start = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) {
      return absl::InvalidArgumentError(
          fmt::format("unexpected argument {:?}", a));
    }
    std::string name = a.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    auto bool_flag = [&](bool* dst) -> absl::Status {
      if (!has_value || value == "true") {
        *dst = true;
      } else if (value == "false") {
        *dst = false;
      } else {
        return absl::InvalidArgumentError(
            fmt::format("--{}: want true or false; have {:?}", name, value));
      }
      return absl::OkStatus();
    };
    if (name == "backfill-probe") {
      if (auto s = bool_flag(&c.backfill_probe); !s.ok()) return s;
      continue;
    }
    if (name == "ecc" || name == "live" || name == "spec-decode") {
      bool* dst = name == "ecc"    ? &c.ecc
                  : name == "live" ? &c.live
                                   : &c.spec_decode;
      if (auto s = bool_flag(dst); !s.ok()) return s;
      continue;
    }
    if (name == "no-spec-decode" || name == "no-ecc") {
      (name == "no-ecc" ? c.ecc : c.spec_decode) = false;
      continue;
    }
    if (name == "help" || name == "h") {
      return absl::InvalidArgumentError("");
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(
            fmt::format("--{}: missing value", name));
      }
      value = argv[++i];
    }
    absl::StatusOr<int64_t> n;
    if (name == "hosts") {
      if (!(n = Int(name, value, 0, 10000)).ok()) return n.status();
      hosts = *n;
    } else if (name == "trtllm-hosts") {
      if (!(n = Int(name, value, 0, 10000)).ok()) return n.status();
      trtllm = *n;
    } else if (name == "engines") {
      cycle.clear();
      for (absl::string_view e : absl::StrSplit(value, ',')) {
        if (e == "vllm-v1" || e == "vllm") {
          cycle.push_back(EngineKind::kVllmV1);
        } else if (e == "vllm-v0") {
          cycle.push_back(EngineKind::kVllmV0);
        } else if (e == "sglang") {
          cycle.push_back(EngineKind::kSglang);
        } else if (e == "trtllm") {
          cycle.push_back(EngineKind::kTrtllm);
        } else {
          return absl::InvalidArgumentError(fmt::format(
              "--engines: unknown engine {:?} (want vllm-v1, vllm-v0, "
              "sglang, trtllm)",
              std::string(e)));
        }
      }
    } else if (name == "gpus") {
      if (!(n = Int(name, value, 1, 16)).ok()) return n.status();
      c.gpus = int(*n);
    } else if (name == "cpus") {
      if (!(n = Int(name, value, 1, 512)).ok()) return n.status();
      c.cpus = int(*n);
    } else if (name == "rps") {
      char* end = nullptr;
      c.rps = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != 0 || !(c.rps >= 0)) {
        return absl::InvalidArgumentError(
            fmt::format("--rps: want a non-negative number; have {:?}", value));
      }
    } else if (name == "seed") {
      if (!(n = Int(name, value, 0, INT64_MAX)).ok()) return n.status();
      c.seed = uint64_t(*n);
    } else if (name == "start") {
      if (!(n = Int(name, value, 0, int64_t(1) << 40)).ok()) return n.status();
      c.start = *n;
      have_start = true;
    } else if (name == "fixed-time") {
      if (!(n = Int(name, value, 0, int64_t(1) << 40)).ok()) return n.status();
      c.fixed_now = *n;
    } else if (name == "listen") {
      auto colon = value.rfind(':');
      if (colon == std::string::npos) {
        return absl::InvalidArgumentError(
            fmt::format("--listen: want HOST:PORT; have {:?}", value));
      }
      c.listen_host = value.substr(0, colon);
      if (!(n = Int(name, value.substr(colon + 1), 0, 65535)).ok()) {
        return n.status();
      }
      c.base_port = int(*n);
    } else if (name == "sd-file") {
      c.sd_file = value;
    } else if (name == "scenario") {
      c.scenario = value;
    } else if (name == "backfill") {
      if (!(n = Seconds(name, value)).ok()) return n.status();
      c.backfill = *n;
    } else if (name == "backfill-step") {
      if (!(n = Seconds(name, value)).ok()) return n.status();
      if (*n <= 0) {
        return absl::InvalidArgumentError("--backfill-step: must be > 0");
      }
      c.backfill_step = *n;
    } else if (name == "backfill-file") {
      c.backfill_file = value;
    } else if (name == "threads") {
      if (!(n = Int(name, value, 1, 64)).ok()) return n.status();
      c.threads = int(*n);
    } else if (name == "churn") {
      if (!(n = Seconds(name, value)).ok()) return n.status();
      c.churn = *n;
    } else if (name == "explode") {
      if (!(n = Int(name, value, 0, 1000000)).ok()) return n.status();
      c.explode_series = int(*n);
    } else if (name == "explode-every") {
      if (!(n = Seconds(name, value)).ok()) return n.status();
      if (*n <= 0) {
        return absl::InvalidArgumentError("--explode-every: must be > 0");
      }
      c.explode_every = *n;
    } else if (name == "explode-for") {
      if (!(n = Seconds(name, value)).ok()) return n.status();
      c.explode_for = *n;
    } else if (name == "model") {
      c.model = value;
    } else {
      return absl::InvalidArgumentError(fmt::format("unknown flag --{}", name));
    }
  }
  if (cycle.empty()) {
    return absl::InvalidArgumentError("--engines: empty list");
  }
  for (int64_t h = 0; h < hosts; ++h) {
    c.engines.push_back(cycle[size_t(h) % cycle.size()]);
  }
  for (int64_t h = 0; h < trtllm; ++h) c.engines.push_back(EngineKind::kTrtllm);
  if (c.engines.empty()) {
    return absl::InvalidArgumentError("--hosts: the fleet has no host");
  }
  if (c.rps == 0) c.rps = 10.0 * double(c.engines.size());
  if (c.base_port != 0 && c.base_port + 1 + 3 * c.hosts() > 65535) {
    return absl::InvalidArgumentError(
        fmt::format("--listen: {} hosts need ports {}..{}, beyond 65535",
                    c.hosts(), c.base_port, c.base_port + 1 + 3 * c.hosts()));
  }
  if (c.explode_for > c.explode_every) {
    return absl::InvalidArgumentError(
        fmt::format("--explode-for: {}s is longer than --explode-every ({}s)",
                    c.explode_for, c.explode_every));
  }
  if (c.backfill > 0 && (c.churn > 0 || c.explode_series > 0)) {
    return absl::InvalidArgumentError(
        "--churn, --explode: not supported with --backfill (the history "
        "has one pod per host)");
  }
  if (c.backfill > 0 && c.backfill_file.empty()) {
    c.backfill_file = "backfill.om";
  }
  if (!have_start) {
    int64_t now = c.fixed_now ? *c.fixed_now : WallNow();
    now -= now % 60;
    c.start = now - c.backfill;
    c.start -= c.start % c.backfill_step;
  }
  return c;
}

}  // namespace vigil::sim
