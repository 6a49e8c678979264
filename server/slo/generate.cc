// Generate: Sloth's SLI, metadata and alert rules (its plugins
// sloth.dev/core/{sli_rules,metadata_rules,alert_rules}/v1 with the
// default, optimised 30-day SLI), written from its documented output.
#include "server/slo/generate.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "fmt/format.h"
#include "server/slo/decode.h"

namespace vigil::slo {

// Burn factors are budget share * 30d / long window: 2 % over 1h, 5 % over
// 6h, 10 % over 1d and 10 % over 3d (Sloth's google-30d.yaml).
const BurnWindow kPageQuick = {"5m", "1h", 14.4};
const BurnWindow kPageSlow = {"30m", "6h", 6};
const BurnWindow kTicketQuick = {"2h", "1d", 3};
const BurnWindow kTicketSlow = {"6h", "3d", 1};
const char* const kSliWindows[8] = {"5m", "30m", "1h", "2h",
                                    "6h", "1d",  "3d", "30d"};

namespace {

constexpr char kPeriod[] = "30d";
constexpr char kPeriodDays[] = "30";

std::string SliMetric(std::string_view window) {
  return fmt::format("slo:sli_error:ratio_rate{}", window);
}

// Go's %q for the label values of a filter (names are restricted; values
// are the service and SLO names, which are too).
std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// model.LabelSet.String() of the SLO's id labels.
std::string Filter(const SloFile& f, const SloSpec& s) {
  return fmt::format("{{sloth_id={}, sloth_service={}, sloth_slo={}}}",
                     GoQuote(f.service + "-" + s.name), GoQuote(f.service),
                     GoQuote(s.name));
}

StringMap IdLabels(const SloFile& f, const SloSpec& s) {
  return {{"sloth_id", f.service + "-" + s.name},
          {"sloth_service", f.service},
          {"sloth_slo", s.name}};
}

void MergeInto(StringMap* dst, const StringMap& src) {
  for (const auto& [k, v] : src) (*dst)[k] = v;
}

absl::StatusOr<Rule> SliRule(const SloFile& f, const SloSpec& s,
                             const EventsSli* events, std::string_view window) {
  Rule r;
  r.record = SliMetric(window);
  r.labels = IdLabels(f, s);
  r.labels["sloth_window"] = std::string(window);
  MergeInto(&r.labels, f.labels);
  MergeInto(&r.labels, s.labels);
  if (window == kPeriod) {
    const std::string m = SliMetric(kPageQuick.short_window) + Filter(f, s);
    r.expr = fmt::format(
        "sum_over_time({0}[{1}])\n/ ignoring (sloth_window)\n"
        "count_over_time({0}[{1}])\n",
        m, window);
    return r;
  }
  const std::string tpl =
      events != nullptr ? fmt::format("({})\n/\n({})\n", events->error_query,
                                      events->total_query)
                        : fmt::format("({})", s.sli.raw->error_ratio_query);
  auto expr = RenderWindow(tpl, window);
  if (!expr.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("could not render SLI expression of {:?} for window {}: {}",
                    f.service + "-" + s.name, window,
                    std::string(expr.status().message())));
  }
  r.expr = *std::move(expr);
  return r;
}

std::vector<Rule> MetaRules(const SloFile& f, const SloSpec& s,
                            const GenerateOptions& o) {
  const StringMap labels = SloLabels(f, s);
  const std::string filter = Filter(f, s);
  const std::string ratio = GoFloat(s.objective / 100);
  auto burn = [&](std::string_view window) {
    return fmt::format(
        "{}{}\n/ on(sloth_id, sloth_slo, sloth_service) group_left\n"
        "slo:error_budget:ratio{}\n",
        SliMetric(window), filter, filter);
  };
  std::vector<Rule> rules = {
      {"slo:objective:ratio", "", fmt::format("vector({})", ratio), labels, {}},
      {"slo:error_budget:ratio",
       "",
       fmt::format("vector(1-{})", ratio),
       labels,
       {}},
      {"slo:time_period:days",
       "",
       fmt::format("vector({})", kPeriodDays),
       labels,
       {}},
      {"slo:current_burn_rate:ratio",
       "",
       burn(kPageQuick.short_window),
       labels,
       {}},
      {"slo:period_burn_rate:ratio", "", burn(kPeriod), labels, {}},
      {"slo:period_error_budget_remaining:ratio",
       "",
       "1 - slo:period_burn_rate:ratio" + filter,
       labels,
       {}},
  };
  Rule info{"sloth_slo_info", "", "vector(1)", labels, {}};
  info.labels["sloth_version"] = o.version;
  info.labels["sloth_mode"] = o.mode;
  info.labels["sloth_spec"] = "prometheus/v1";
  info.labels["sloth_objective"] = GoFloatFixed(s.objective);
  rules.push_back(std::move(info));
  return rules;
}

Rule AlertRule(const SloFile& f, const SloSpec& s, const AlertSpec& a,
               const char* severity, const BurnWindow& quick,
               const BurnWindow& slow) {
  const std::string filter = Filter(f, s);
  const std::string budget = GoFloat((100 - s.objective) / 100);
  auto clause = [&](const BurnWindow& w) {
    const std::string factor = GoFloat(w.factor);
    return fmt::format(
        "    max({0}{1} > ({2} * {3})) without (sloth_window)\n"
        "    and\n"
        "    max({4}{1} > ({2} * {3})) without (sloth_window)\n",
        SliMetric(w.short_window), filter, factor, budget,
        SliMetric(w.long_window));
  };
  Rule r;
  r.alert = s.alerting.name;
  r.expr = fmt::format("(\n{})\nor\n(\n{})\n", clause(quick), clause(slow));
  r.labels = {{"sloth_severity", severity}};
  MergeInto(&r.labels, s.alerting.labels);
  MergeInto(&r.labels, a.labels);
  r.annotations = {
      {"title", fmt::format("({}) {{{{$labels.sloth_service}}}} "
                            "{{{{$labels.sloth_slo}}}} SLO error budget burn "
                            "rate is too fast.",
                            severity)},
      {"summary",
       "{{$labels.sloth_service}} {{$labels.sloth_slo}} SLO error budget "
       "burn rate is over expected."}};
  MergeInto(&r.annotations, s.alerting.annotations);
  MergeInto(&r.annotations, a.annotations);
  return r;
}

// "2.5" or, for a whole number, either of "2" and "2.0".
std::string LeMatcher(double threshold) {
  const std::string t = GoFloat(threshold);
  if (t.find_first_of(".e") == std::string::npos) {
    return fmt::format("le=~\"{0}|{0}\\\\.0\"", t);
  }
  return fmt::format("le=\"{}\"", t);
}

// The digits and decimal exponent of the shortest repr of v > 0.
void ShortestDigits(double v, std::string* digits, int* exp10) {
  char buf[64];
  auto res =
      std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view s(buf, size_t(res.ptr - buf));
  const size_t e = s.find('e');
  for (char c : s.substr(0, e)) {
    if (c != '.') *digits += c;
  }
  *exp10 = std::atoi(std::string(s.substr(e + 1)).c_str());
}

std::string Fixed(const std::string& digits, int exp10) {
  // value = 0.d1d2... * 10^(exp10+1); dp = exp10 + 1 digits before point.
  const int dp = exp10 + 1;
  std::string out;
  if (dp <= 0) {
    out = "0." + std::string(size_t(-dp), '0') + digits;
  } else if (size_t(dp) >= digits.size()) {
    out = digits + std::string(size_t(dp) - digits.size(), '0');
  } else {
    out = digits.substr(0, size_t(dp)) + "." + digits.substr(size_t(dp));
  }
  return out;
}

}  // namespace

std::string GoFloat(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  const std::string sign = v < 0 ? "-" : "";
  std::string digits;
  int exp10 = 0;
  ShortestDigits(std::fabs(v), &digits, &exp10);
  if (exp10 < -4 || exp10 >= 6) {
    std::string m = digits.substr(0, 1);
    if (digits.size() > 1) m += "." + digits.substr(1);
    return fmt::format("{}{}e{}{:02d}", sign, m, exp10 < 0 ? '-' : '+',
                       std::abs(exp10));
  }
  return sign + Fixed(digits, exp10);
}

std::string GoFloatFixed(double v) {
  if (!std::isfinite(v)) return GoFloat(v);
  if (v == 0) return "0";
  std::string digits;
  int exp10 = 0;
  ShortestDigits(std::fabs(v), &digits, &exp10);
  return (v < 0 ? "-" : "") + Fixed(digits, exp10);
}

EventsSli ExpandLatency(const LatencySli& l) {
  const std::string agg =
      l.by.empty() ? "sum"
                   : fmt::format("sum by ({}) ", absl::StrJoin(l.by, ", "));
  const std::string m = l.matchers;
  const std::string le = LeMatcher(l.threshold);
  std::vector<std::string> errors, totals;
  for (const std::string& h : l.histograms) {
    const std::string count =
        fmt::format("{}(rate({}_count{}[{{{{.window}}}}]))", agg, h,
                    m.empty() ? "" : "{" + m + "}");
    const std::string fast =
        fmt::format("{}(rate({}_bucket{{{}}}[{{{{.window}}}}]))", agg, h,
                    m.empty() ? le : m + ", " + le);
    errors.push_back(fmt::format("({} - {})", count, fast));
    totals.push_back(count);
  }
  return {absl::StrJoin(errors, "\nor\n"), absl::StrJoin(totals, "\nor\n")};
}

StringMap SloLabels(const SloFile& f, const SloSpec& slo) {
  StringMap labels = IdLabels(f, slo);
  MergeInto(&labels, f.labels);
  MergeInto(&labels, slo.labels);
  return labels;
}

absl::StatusOr<std::vector<RuleGroup>> Generate(const SloFile& f,
                                                const GenerateOptions& o) {
  std::vector<RuleGroup> out;
  for (const SloSpec& s : f.slos) {
    const std::string id = f.service + "-" + s.name;
    std::optional<EventsSli> events = s.sli.events;
    if (s.sli.latency) events = ExpandLatency(*s.sli.latency);
    RuleGroup sli{"sloth-slo-sli-recordings-" + id, {}};
    for (const char* w : kSliWindows) {
      auto r = SliRule(f, s, events ? &*events : nullptr, w);
      if (!r.ok()) return r.status();
      sli.rules.push_back(*std::move(r));
    }
    out.push_back(std::move(sli));
    out.push_back({"sloth-slo-meta-recordings-" + id, MetaRules(f, s, o)});
    RuleGroup alerts{"sloth-slo-alerts-" + id, {}};
    const Alerting& a = s.alerting;
    if (!a.page_alert.disable) {
      alerts.rules.push_back(
          AlertRule(f, s, a.page_alert, "page", kPageQuick, kPageSlow));
    }
    if (!a.ticket_alert.disable) {
      alerts.rules.push_back(
          AlertRule(f, s, a.ticket_alert, "ticket", kTicketQuick, kTicketSlow));
    }
    if (!alerts.rules.empty()) out.push_back(std::move(alerts));
  }
  return out;
}

}  // namespace vigil::slo
