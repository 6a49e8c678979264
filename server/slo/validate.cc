// ValidateSloFile: Sloth's loader checks (version, at least one SLO) and
// its SLO validator (pkg/common/validation/slo.go), in its order and with
// its wording, each error prefixed with the SLO it is about.
#include "server/slo/validate.h"

#include <cmath>
#include <set>

#include "core/labels.h"
#include "fmt/format.h"
#include "promql/parser.h"
#include "re2/re2.h"
#include "server/slo/decode.h"
#include "server/slo/generate.h"

namespace vigil::slo {
namespace {

using goyaml::SourcePos;

std::optional<std::string> CheckName(std::string_view what,
                                     const std::string& name) {
  if (name.empty()) return fmt::format("invalid SLO {}: required", what);
  if (!IsValidSloName(name)) {
    return fmt::format(
        "invalid SLO {}: {:?}: name must start and end with an alphanumeric "
        "and can only contain alphanumeric, '.', '_', and '-'",
        what, name);
  }
  return std::nullopt;
}

std::optional<std::string> CheckLabels(std::string_view what,
                                       const StringMap& labels) {
  for (const auto& [k, v] : labels) {
    if (k == "__name__") {
      return fmt::format(
          "invalid {} label key {:?}: the label key {:?} is not "
          "allowed",
          what, k, k);
    }
    if (!IsValidLabelName(k)) {
      return fmt::format(
          "invalid {} label key {:?}: the label key {:?} is not "
          "valid",
          what, k, k);
    }
    if (v.empty()) {
      return fmt::format(
          "invalid {} label value {:?}: the label value is "
          "required",
          what, v);
    }
  }
  return std::nullopt;
}

// isValidSLIQueryTemplate + ValidateQueryExpression: `{{.window}}` present,
// and the query, rendered with a 1m window, parses as PromQL.
std::optional<std::string> CheckQuery(std::string_view what,
                                      const std::string& q) {
  static const re2::RE2 kWindow(R"(\{\{ *\.window *\}\})");
  if (q.empty()) {
    return fmt::format("{} query template: query template is required", what);
  }
  if (!re2::RE2::PartialMatch(q, kWindow)) {
    return fmt::format(
        "{} query template: template must contain the {{{{ .window }}}} "
        "variable",
        what);
  }
  auto rendered = RenderWindow(q, "1m");
  if (!rendered.ok()) {
    return fmt::format("{} query expression: {}", what,
                       std::string(rendered.status().message()));
  }
  if (auto e = promql::ParseExpr(*rendered); !e.ok()) {
    return fmt::format("{} query expression: {}", what,
                       std::string(e.status().message()));
  }
  return std::nullopt;
}

std::optional<std::string> CheckLatency(const LatencySli& l) {
  if (l.histograms.empty()) return "latency: histogram is required";
  for (const std::string& h : l.histograms) {
    if (!IsValidMetricName(h)) {
      return fmt::format("latency: histogram {:?} is not a valid metric name",
                         h);
    }
  }
  if (!(l.threshold > 0) || !std::isfinite(l.threshold)) {
    return "latency: threshold must be a positive number (a bucket bound, "
           "`le`)";
  }
  for (const std::string& b : l.by) {
    if (!IsValidLabelName(b) || b == "le") {
      return fmt::format("latency: by: {:?} is not a label to group by", b);
    }
  }
  if (!l.matchers.empty()) {
    auto m = promql::ParseMetricSelector("{" + l.matchers + "}");
    if (!m.ok()) {
      return fmt::format("latency: matchers {:?}: {}", l.matchers,
                         std::string(m.status().message()));
    }
  }
  return std::nullopt;
}

std::optional<std::string> CheckSli(const Sli& sli) {
  const int kinds = int(sli.events.has_value()) + int(sli.raw.has_value()) +
                    int(sli.latency.has_value());
  if (kinds == 0) return "at least one SLI type is required";
  if (kinds > 1) return "only one SLI type is allowed";
  EventsSli events;
  if (sli.latency) {
    if (auto bad = CheckLatency(*sli.latency)) return bad;
    events = ExpandLatency(*sli.latency);
  } else if (sli.events) {
    events = *sli.events;
  } else {
    return CheckQuery("sli raw", sli.raw->error_ratio_query);
  }
  if (events.error_query == events.total_query) {
    return "both error and total queries can't be the same";
  }
  if (auto bad = CheckQuery("sli error", events.error_query)) return bad;
  return CheckQuery("sli total", events.total_query);
}

std::optional<std::string> CheckAlert(std::string_view which, const Alerting& a,
                                      const AlertSpec& s) {
  if (s.disable) return std::nullopt;
  if (a.name.empty()) {
    return fmt::format("invalid alert: {} alert: alert name is required",
                       which);
  }
  if (!IsValidMetricName(a.name) || a.name.find(':') != std::string::npos) {
    return fmt::format("invalid alert: {} alert: invalid alert name {:?}",
                       which, a.name);
  }
  StringMap labels = a.labels;
  for (const auto& [k, v] : s.labels) labels[k] = v;
  if (auto bad = CheckLabels(fmt::format("{} alert", which), labels)) {
    return "invalid alert: " + *bad;
  }
  StringMap annotations = a.annotations;
  for (const auto& [k, v] : s.annotations) annotations[k] = v;
  for (const auto& [k, v] : annotations) {
    if (!IsValidLabelName(k)) {
      return fmt::format(
          "invalid alert: {} alert: invalid alert annotation key {:?}", which,
          k);
    }
    if (v.empty()) {
      return fmt::format(
          "invalid alert: {} alert: invalid alert annotation value {:?}: the "
          "annotation value is required",
          which, v);
    }
  }
  return std::nullopt;
}

std::optional<std::string> CheckSlo(const SloFile& f, const SloSpec& s) {
  if (auto bad = CheckName("ID", f.service + "-" + s.name)) return bad;
  if (auto bad = CheckName("name", s.name)) return bad;
  if (auto bad = CheckName("service", f.service)) return bad;
  if (!(s.objective > 0 && s.objective <= 100)) {
    return "objective must >0 and <=100";
  }
  StringMap labels = f.labels;
  for (const auto& [k, v] : s.labels) labels[k] = v;
  if (auto bad = CheckLabels("SLO", labels)) return bad;
  if (auto bad = CheckSli(s.sli)) return "invalid SLI: " + *bad;
  if (auto bad = CheckAlert("page", s.alerting, s.alerting.page_alert)) {
    return bad;
  }
  return CheckAlert("ticket", s.alerting, s.alerting.ticket_alert);
}

}  // namespace

bool IsValidSloName(std::string_view s) {
  static const re2::RE2 kName("[A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]");
  return re2::RE2::FullMatch(s, kName);
}

std::optional<ValidationError> ValidateSloFile(const SloFile& f) {
  if (f.version != "prometheus/v1") {
    return ValidationError{
        {},
        fmt::format("invalid spec version {:?}, should be \"prometheus/v1\"",
                    f.version)};
  }
  if (f.slos.empty()) {
    return ValidationError{{}, "at least one SLO is required"};
  }
  std::set<std::string> names;
  for (size_t i = 0; i < f.slos.size(); ++i) {
    const SloSpec& s = f.slos[i];
    if (auto bad = CheckSlo(f, s)) {
      return ValidationError{s.pos,
                             fmt::format("slos[{}] {:?}: {}", i, s.name, *bad)};
    }
    if (!names.insert(s.name).second) {
      return ValidationError{
          s.pos, fmt::format("slos[{}] {:?}: duplicate SLO name (the rule "
                             "groups would clash)",
                             i, s.name)};
    }
  }
  return std::nullopt;
}

}  // namespace vigil::slo
