#include "server/diagnose/report.h"

#include <cmath>
#include <map>

#include "core/time.h"
#include "fmt/format.h"

namespace vigil::diagnose {

const char* CauseName(Cause c) {
  switch (c) {
    case Cause::kUpstream:
      return "upstream";
    case Cause::kDecodeBound:
      return "decode_bound";
    case Cause::kCapacityExhausted:
      return "capacity_exhausted";
    case Cause::kSaturationKnee:
      return "saturation_knee";
    case Cause::kHardware:
      return "hardware";
    case Cause::kDemandSide:
      return "demand_side";
    case Cause::kSupplySide:
      return "supply_side";
    case Cause::kKvHighWater:
      return "kv_high_water";
    case Cause::kPrefixCacheCollapse:
      return "prefix_cache_collapse";
    case Cause::kGpuHang:
      return "gpu_hang";
    case Cause::kEngineDown:
      return "engine_down";
    case Cause::kSpecDecodeLow:
      return "spec_decode_low";
  }
  return "unknown";
}

namespace {

void Str(std::string* out, std::string_view s) {
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\t':
        *out += "\\t";
        break;
      default:
        if (c < 0x20 || c == '<' || c == '>' || c == '&') {
          *out += fmt::format("\\u{:04x}", c);
        } else {
          out->push_back(char(c));
        }
    }
  }
  out->push_back('"');
}

// A JSON number; null for NaN and infinities (JSON has neither).
void Num(std::string* out, double v) {
  if (!std::isfinite(v)) {
    *out += "null";
    return;
  }
  *out += fmt::format("{}", v);
}

void Key(std::string* out, std::string_view k) {
  Str(out, k);
  out->push_back(':');
}

void EvidenceJson(std::string* out, const Evidence& e) {
  *out += "{";
  Key(out, "metric");
  Str(out, e.metric);
  *out += ",";
  Key(out, "value");
  Num(out, e.value);
  *out += ",";
  Key(out, "window");
  Str(out, e.window);
  if (!std::isnan(e.baseline)) {
    *out += ",";
    Key(out, "baseline");
    Num(out, e.baseline);
    *out += ",";
    Key(out, "baseline_window");
    Str(out, e.baseline_window);
  }
  if (!std::isnan(e.threshold)) {
    *out += ",";
    Key(out, "threshold");
    Num(out, e.threshold);
  }
  if (!e.labels.empty()) {
    *out += ",";
    Key(out, "labels");
    Str(out, e.labels);
  }
  *out += "}";
}

void FindingJson(std::string* out, const Finding& f) {
  *out += "{";
  Key(out, "cause");
  Str(out, CauseName(f.cause));
  for (auto [k, v] :
       {std::pair<const char*, const std::string*>{"severity", &f.severity},
        {"variant", &f.variant},
        {"instance", &f.instance},
        {"node", &f.node},
        {"summary", &f.summary}}) {
    *out += ",";
    Key(out, k);
    Str(out, *v);
  }
  *out += ",";
  Key(out, "evidence");
  *out += "[";
  for (size_t i = 0; i < f.evidence.size(); ++i) {
    if (i) *out += ",";
    EvidenceJson(out, f.evidence[i]);
  }
  *out += "],";
  Key(out, "next");
  *out += "[";
  for (size_t i = 0; i < f.next.size(); ++i) {
    if (i) *out += ",";
    Str(out, f.next[i]);
  }
  *out += "]}";
}

}  // namespace

std::string HumanNumber(double v) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  double a = std::fabs(v);
  if (a != 0 && (a < 0.001 || a >= 1e7)) return fmt::format("{:.3g}", v);
  if (a == 0) return "0";
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3f}", v);
}

std::string ReportJson(const Report& r) {
  std::string out = "{";
  Key(&out, "time");
  Num(&out, double(r.time) / 1000);
  out += ",";
  Key(&out, "variant");
  Str(&out, r.variant);
  out +=
      fmt::format(",\"engines\":{},\"gpu_hosts\":{},", r.engines, r.gpu_hosts);
  Key(&out, "findings");
  out += "[";
  for (size_t i = 0; i < r.findings.size(); ++i) {
    if (i) out += ",";
    FindingJson(&out, r.findings[i]);
  }
  out += "],";
  Key(&out, "missing");
  out += "[";
  for (size_t i = 0; i < r.missing.size(); ++i) {
    const Missing& m = r.missing[i];
    if (i) out += ",";
    out += "{";
    Key(&out, "kind");
    Str(&out, m.kind);
    out += ",";
    Key(&out, "job");
    Str(&out, m.job);
    out += ",";
    Key(&out, "instance");
    Str(&out, m.instance);
    out += ",";
    Key(&out, "message");
    Str(&out, m.message);
    out += "}";
  }
  out += "]}";
  return out;
}

std::string ReportEnvelope(const Report& r) {
  return "{\"status\":\"success\",\"data\":" + ReportJson(r) + "}";
}

std::string ReportText(const Report& r) {
  std::string out =
      fmt::format("diagnosis at {}{}: {} engine target(s), {} GPU host(s)\n",
                  FormatRfc3339Seconds(r.time),
                  r.variant.empty() ? "" : " for variant " + r.variant,
                  r.engines, r.gpu_hosts);
  if (r.findings.empty()) {
    out += "\nno finding: nothing in the diagnosis map matches.\n";
  }
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const Finding& f = r.findings[i];
    std::string where = f.instance;
    if (!f.variant.empty()) where = f.variant + " " + where;
    if (!f.node.empty()) where += " (" + f.node + ")";
    out += fmt::format("\n{}. [{}] {}: {}\n   {}\n", i + 1, f.severity,
                       CauseName(f.cause), where, f.summary);
    for (const Evidence& e : f.evidence) {
      std::string line = fmt::format(
          "     {}{} = {}{}", e.metric,
          e.labels.empty() ? "" : "{" + e.labels + "}", HumanNumber(e.value),
          e.window == "now" ? " now" : " over " + e.window);
      if (!std::isnan(e.baseline)) {
        line += fmt::format(" (baseline {} over {})", HumanNumber(e.baseline),
                            e.baseline_window);
      }
      if (!std::isnan(e.threshold)) {
        line += fmt::format(", threshold {}", HumanNumber(e.threshold));
      }
      out += line + "\n";
    }
    for (const std::string& n : f.next) out += "   next: " + n + "\n";
  }
  if (!r.missing.empty()) {
    out += "\nmissing data (not guessed):\n";
    // A big fleet repeats a kind per target: three lines each, then a count.
    std::map<std::string, int> shown;
    for (const Missing& m : r.missing) {
      if (++shown[m.kind] <= 3) {
        out += fmt::format("  - {}: {}\n", m.kind, m.message);
      }
    }
    for (const auto& [kind, n] : shown) {
      if (n > 3) out += fmt::format("  - {}: ... and {} more\n", kind, n - 3);
    }
  }
  return out;
}

}  // namespace vigil::diagnose
