#include "server/diagnose/thresholds.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "core/go/strconv.h"
#include "core/goyaml/decoder.h"
#include "fmt/format.h"
#include "re2/re2.h"

namespace vigil::diagnose {

namespace {

using goyaml::Field;
using goyaml::GoYamlDecoder;
using goyaml::SourcePos;

absl::Status Error(std::string_view file, SourcePos at, std::string_view text) {
  if (at.line <= 0) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", file, text));
  }
  return absl::InvalidArgumentError(
      fmt::format("{}:{}:{}: {}", file, at.line, at.column, text));
}

// A validation failure found after decoding, with where it was.
struct Invalid {
  SourcePos pos;
  std::string text;
};

// The NVML clock-throttle reason bits, by the names the file uses.
struct ReasonBit {
  const char* name;
  int64_t bit;
};
constexpr ReasonBit kReasons[] = {
    {"idle", 0x1},
    {"applications_clocks", 0x2},
    {"sw_power_cap", 0x4},
    {"hw_slowdown", 0x8},
    {"sync_boost", 0x10},
    {"sw_thermal", 0x20},
    {"hw_thermal", 0x40},
    {"hw_power_brake", 0x80},
    {"display_clocks", 0x100},
};

class Decoder {
 public:
  // yaml.v2 strict mode, as prometheus.yml is read.
  explicit Decoder(std::string_view text) : d_(text) { d_.set_yaml_v2(true); }
  GoYamlDecoder& d() { return d_; }
  std::vector<Invalid>& invalid() { return invalid_; }

  // A float64 (ints and floats; a quoted string is a type error). With
  // `positive`, zero and negatives are invalid.
  void Float(const Field& f, double* out, bool positive = true) {
    const std::string tag = d_.ShortTag(f.value);
    if (tag != "!!int" && tag != "!!float") {
      d_.TypeMismatch(f.value, "float64");
      return;
    }
    std::string s;
    d_.String(f.value, &s);
    auto v = go::ParseFloat(s);
    if (!v.ok()) {
      d_.TypeMismatch(f.value, "float64");
      return;
    }
    if (positive && !(*v > 0)) {
      Bad(f, fmt::format("{}: must be greater than 0; have {}", f.key, s));
      return;
    }
    *out = *v;
  }
  void Duration(const Field& f, int64_t* out) {
    int64_t ms = 0;
    if (!d_.Duration(f.value, &ms)) return;
    if (ms <= 0) {
      Bad(f, fmt::format("{}: must be a duration greater than 0", f.key));
      return;
    }
    *out = ms;
  }
  void Regex(const Field& f, std::string* out) {
    std::string s;
    if (!d_.String(f.value, &s)) return;
    RE2::Options ro;
    ro.set_log_errors(false);
    RE2 re("^(?:" + s + ")$", ro);
    if (!re.ok() || s.empty()) {
      Bad(f, fmt::format("{}: invalid regular expression {}: {}", f.key,
                         go::Quote(s), s.empty() ? "empty" : re.error()));
      return;
    }
    *out = s;
  }
  void Reasons(const Field& f, int64_t* out) {
    auto items = d_.Sequence(f.value, "[]string");
    if (!items) return;
    int64_t mask = 0;
    for (const YAML::Node& n : *items) {
      std::string s;
      if (!d_.String(n, &s)) continue;
      bool found = false;
      for (const auto& r : kReasons) {
        if (s == r.name) mask |= r.bit, found = true;
      }
      if (!found) {
        invalid_.push_back(
            {goyaml::PosOf(n),
             fmt::format("throttle_reasons: unknown reason {} (want one of "
                         "idle, applications_clocks, sw_power_cap, "
                         "hw_slowdown, sync_boost, sw_thermal, hw_thermal, "
                         "hw_power_brake, display_clocks)",
                         go::Quote(s))});
      }
    }
    *out = mask;
  }

 private:
  void Bad(const Field& f, std::string text) {
    invalid_.push_back({goyaml::PosOf(f.value), std::move(text)});
  }
  GoYamlDecoder d_;
  std::vector<Invalid> invalid_;
};

void DecodeSections(Decoder& x, const YAML::Node& root, Thresholds* t) {
  GoYamlDecoder& d = x.d();
  auto top =
      d.Struct(root, "diagnose.Thresholds",
               {"windows", "jobs", "latency", "capacity", "gpu", "engine"});
  for (const Field& s : goyaml::Items(top)) {
    if (s.key == "windows") {
      auto fs = d.Struct(s.value, "diagnose.Windows",
                         {"recent", "baseline", "baseline_offset"});
      for (const Field& f : goyaml::Items(fs)) {
        if (f.key == "recent") x.Duration(f, &t->window_ms);
        if (f.key == "baseline") x.Duration(f, &t->baseline_window_ms);
        if (f.key == "baseline_offset") x.Duration(f, &t->baseline_offset_ms);
      }
    } else if (s.key == "jobs") {
      auto fs = d.Struct(s.value, "diagnose.Jobs", {"engine", "gpu", "probe"});
      for (const Field& f : goyaml::Items(fs)) {
        if (f.key == "engine") x.Regex(f, &t->engine_jobs);
        if (f.key == "gpu") x.Regex(f, &t->gpu_jobs);
        if (f.key == "probe") x.Regex(f, &t->probe_job);
      }
    } else if (s.key == "latency") {
      auto fs = d.Struct(s.value, "diagnose.Latency",
                         {"ttft_p99_seconds", "tpot_p95_seconds", "rise_ratio",
                          "flat_throughput_tolerance"});
      for (const Field& f : goyaml::Items(fs)) {
        if (f.key == "ttft_p99_seconds") x.Float(f, &t->ttft_p99_seconds);
        if (f.key == "tpot_p95_seconds") x.Float(f, &t->tpot_p95_seconds);
        if (f.key == "rise_ratio") x.Float(f, &t->rise_ratio);
        if (f.key == "flat_throughput_tolerance") {
          x.Float(f, &t->flat_tolerance);
        }
      }
    } else if (s.key == "capacity") {
      auto fs = d.Struct(s.value, "diagnose.Capacity",
                         {"queue_high", "kv_cache_high"});
      for (const Field& f : goyaml::Items(fs)) {
        if (f.key == "queue_high") x.Float(f, &t->queue_high);
        if (f.key == "kv_cache_high") x.Float(f, &t->kv_high);
      }
    } else if (s.key == "gpu") {
      auto fs = d.Struct(s.value, "diagnose.GPU",
                         {"temp_celsius", "throttle_reasons",
                          "ecc_sbe_increase", "ecc_dbe_window"});
      for (const Field& f : goyaml::Items(fs)) {
        if (f.key == "temp_celsius") x.Float(f, &t->gpu_temp_celsius);
        if (f.key == "throttle_reasons") x.Reasons(f, &t->throttle_mask);
        if (f.key == "ecc_sbe_increase") x.Float(f, &t->ecc_sbe_increase);
        if (f.key == "ecc_dbe_window") x.Duration(f, &t->ecc_window_ms);
      }
    } else if (s.key == "engine") {
      auto fs =
          d.Struct(s.value, "diagnose.Engine",
                   {"prefix_cache_collapse_ratio", "prefix_cache_min_baseline",
                    "spec_decode_acceptance_low"});
      for (const Field& f : goyaml::Items(fs)) {
        if (f.key == "prefix_cache_collapse_ratio") {
          x.Float(f, &t->prefix_collapse_ratio);
        }
        if (f.key == "prefix_cache_min_baseline") {
          x.Float(f, &t->prefix_min_baseline, false);
        }
        if (f.key == "spec_decode_acceptance_low") {
          x.Float(f, &t->spec_acceptance_low);
        }
      }
    }
    if (d.fatal()) return;
  }
}

}  // namespace

absl::StatusOr<Thresholds> ParseThresholds(std::string_view text,
                                           std::string_view filename) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Error(filename, {e.mark.line + 1, e.mark.column + 1},
                 "yaml: " + e.msg);
  }
  if (auto open = goyaml::FindUnterminatedQuote(text, root)) {
    return Error(filename, *open, "yaml: found unexpected end of stream");
  }
  Thresholds t;
  if (!root || root.IsNull()) return t;  // an empty file: the defaults
  Decoder x(text);
  DecodeSections(x, root, &t);
  GoYamlDecoder& d = x.d();
  if (d.fatal()) return Error(filename, d.fatal()->pos, d.fatal()->text);
  if (!d.type_errors().empty()) {
    return Error(filename, goyaml::FirstPos(d.type_errors()),
                 goyaml::UnmarshalErrorsText(d.type_errors()));
  }
  if (!x.invalid().empty()) {
    return Error(filename, x.invalid()[0].pos, x.invalid()[0].text);
  }
  return t;
}

absl::StatusOr<Thresholds> LoadThresholdsFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        fmt::format("{}: cannot read thresholds file", path));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseThresholds(ss.str(), path);
}

}  // namespace vigil::diagnose
