#include "server/probe/result.h"

#include <cmath>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/go/strconv.h"
#include "fmt/format.h"

namespace vigil::probe {
namespace {

// The text format's label value escaping: backslash, quote, newline.
std::string Escape(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return go::FormatFloatG(v);
}

}  // namespace

void ProbeResult::Declare(std::string_view name, std::string_view help) {
  auto it = families_.find(name);
  if (it == families_.end()) {
    families_.emplace(std::string(name), Family{std::string(help), {}});
  }
}

void ProbeResult::Set(std::string_view name, std::string_view help, double v,
                      const LabelPairs& labels) {
  Declare(name, help);
  families_.find(name)->second.children[labels] = v;
}

double ProbeResult::Get(std::string_view name, const LabelPairs& labels) const {
  auto it = families_.find(name);
  if (it == families_.end()) return 0;
  auto c = it->second.children.find(labels);
  return c == it->second.children.end() ? 0 : c->second;
}

bool ProbeResult::Has(std::string_view name) const {
  auto it = families_.find(name);
  return it != families_.end() && !it->second.children.empty();
}

void ProbeResult::Log(std::string_view level, std::string_view msg,
                      const LabelPairs& kv) {
  log_ += fmt::format("ts={} level={} msg={:?}",
                      absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::Now(),
                                       absl::UTCTimeZone()),
                      level, msg);
  for (const auto& [k, v] : kv) log_ += fmt::format(" {}={:?}", k, v);
  log_ += "\n";
}

std::string ProbeResult::Render() const {
  std::string out;
  for (const auto& [name, f] : families_) {
    if (f.children.empty()) continue;
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, f.help, name);
    for (const auto& [labels, v] : f.children) {
      out += name;
      if (!labels.empty()) {
        out += "{";
        for (size_t i = 0; i < labels.size(); ++i) {
          out += fmt::format("{}{}=\"{}\"", i == 0 ? "" : ",", labels[i].first,
                             Escape(labels[i].second));
        }
        out += "}";
      }
      out += " " + Value(v) + "\n";
    }
  }
  return out;
}

}  // namespace vigil::probe
