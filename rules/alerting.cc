#include "rules/alerting.h"

#include <algorithm>

#include "fmt/format.h"
#include "promql/parser.h"

namespace vigil::rules {

namespace {

// Prometheus keeps a resolved alert this long so it is re-sent as resolved.
constexpr int64_t kResolvedRetentionMs = 15 * 60 * 1000;

// The `query` template function: an instant query at the evaluation time.
TemplateQueryFunc MakeTemplateQuery(const QueryFunc& query, Timestamp t) {
  return [query, t](std::string_view text)
             -> absl::StatusOr<std::vector<QueryResultSample>> {
    auto expr = promql::ParseExpr(text);
    if (!expr.ok()) return expr.status();
    auto res = query(**expr, text, t);
    if (!res.ok()) return res.status();
    std::vector<QueryResultSample> out;
    out.reserve(res->size());
    for (auto& s : *res) out.push_back({std::move(s.metric), s.v});
    return out;
  };
}

}  // namespace

std::string_view AlertStateName(AlertState s) {
  switch (s) {
    case AlertState::kInactive:
      return "inactive";
    case AlertState::kPending:
      return "pending";
    case AlertState::kFiring:
      return "firing";
  }
  return "unknown";
}

AlertingRule::AlertingRule(Rule def)
    : def_(std::move(def)), text_(promql::Format(*def_.expr)) {
  auto parse_all = [&](const Labels& ls,
                       std::vector<std::optional<Template>>* out) {
    for (const Label& l : ls) {
      auto t = ParseAlertTemplate(def_.name, l.value);
      out->push_back(t.ok() ? std::optional<Template>(std::move(*t))
                            : std::nullopt);
    }
  };
  parse_all(def_.labels, &label_tmpls_);
  parse_all(def_.annotations, &annotation_tmpls_);
}

std::string AlertingRule::Expand(size_t idx, bool annotation,
                                 const TemplateData& data) const {
  const auto& tmpls = annotation ? annotation_tmpls_ : label_tmpls_;
  if (tmpls[idx]) return ExpandAlertTemplate(*tmpls[idx], data);
  const Labels& src = annotation ? def_.annotations : def_.labels;
  return ExpandAlertTemplate(def_.name, src[idx].value, data);
}

absl::StatusOr<std::vector<AlertingRule::Candidate>> AlertingRule::Candidates(
    const promql::Vector& res, Timestamp t, const EvalContext& ctx) const {
  std::vector<Candidate> out;
  out.reserve(res.size());
  TemplateData data;
  data.external_labels = ctx.external_labels;
  data.external_url = ctx.external_url;
  data.eval_time = t;
  data.query = MakeTemplateQuery(ctx.query, t);
  for (const promql::Sample& s : res) {
    // Templates see the sample's labels including __name__, as in Prometheus.
    data.labels = s.metric;
    data.value = s.v;
    LabelsBuilder b(s.metric);
    b.Del(kMetricName);
    for (size_t i = 0; i < def_.labels.size(); ++i) {
      b.Set(def_.labels[i].name, Expand(i, false, data));
    }
    b.Set("alertname", def_.name);
    std::vector<Label> ann;
    for (size_t i = 0; i < def_.annotations.size(); ++i) {
      ann.push_back({def_.annotations[i].name, Expand(i, true, data)});
    }
    out.push_back({b.Build(), Labels::FromUnsorted(std::move(ann)), s.v});
  }
  std::vector<const Labels*> sorted;
  for (const auto& c : out) sorted.push_back(&c.labels);
  std::sort(sorted.begin(), sorted.end(),
            [](const Labels* a, const Labels* b) { return *a < *b; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (*sorted[i - 1] == *sorted[i]) {
      return absl::InvalidArgumentError(
          "vector contains metrics with the same labelset after applying "
          "alert labels");
    }
  }
  return out;
}

absl::StatusOr<promql::Vector> AlertingRule::Eval(Timestamp t,
                                                  const EvalContext& ctx) {
  auto res = ctx.query(*def_.expr, text_, t - ctx.query_offset_ms);
  if (!res.ok()) return res.status();
  auto cands = Candidates(*res, t, ctx);
  if (!cands.ok()) return cands.status();
  vigil::MutexLock lock(&mu_);
  int num_active = 0;
  promql::Vector vec = Advance(*cands, t, ctx, &num_active);
  if (ctx.limit > 0 && num_active > ctx.limit) {
    active_.clear();
    return absl::ResourceExhaustedError(fmt::format(
        "exceeded limit of {} with {} alerts", ctx.limit, num_active));
  }
  return vec;
}

Labels AlertingRule::SeriesLabels(const Alert& a) const {
  // Prometheus's sample() and forStateSample() start from the rule's labels
  // as written, not expanded: a label whose template expanded to "" is not
  // in the alert, so its template text shows through.
  LabelsBuilder b(def_.labels);
  for (const Label& l : a.labels) b.Set(l.name, l.value);
  b.Set("alertname", def_.name);
  return b.Build();
}

// ALERTS{...} = 1 and ALERTS_FOR_STATE{...} = ActiveAt in seconds.
void AlertingRule::AppendSamples(const Alert& a, Timestamp t,
                                 promql::Vector* vec) const {
  const Labels series = SeriesLabels(a);
  LabelsBuilder b(series);
  b.Set(kMetricName, "ALERTS").Set("alertstate", AlertStateName(a.state));
  vec->push_back({b.Build(), t, 1});
  LabelsBuilder f(series);
  f.Set(kMetricName, "ALERTS_FOR_STATE");
  // Go's time.Unix(): whole seconds, rounded down.
  int64_t secs =
      a.active_at >= 0 ? a.active_at / 1000 : -((-a.active_at + 999) / 1000);
  vec->push_back({f.Build(), t, static_cast<double>(secs)});
}

promql::Vector AlertingRule::Advance(const std::vector<Candidate>& cands,
                                     Timestamp t, const EvalContext& ctx,
                                     int* num_active) {
  std::map<Labels, const Candidate*> present;
  for (const Candidate& c : cands) {
    present.emplace(c.labels, &c);
    auto it = active_.find(c.labels);
    if (it != active_.end() && it->second.state != AlertState::kInactive) {
      it->second.value = c.value;
      it->second.annotations = c.annotations;
      continue;
    }
    Alert a;
    a.labels = c.labels;
    a.annotations = c.annotations;
    a.value = c.value;
    a.active_at = t;
    a.state = AlertState::kPending;
    active_[c.labels] = std::move(a);
  }
  const Timestamp sample_t = t - ctx.query_offset_ms;
  promql::Vector vec;
  for (auto it = active_.begin(); it != active_.end();) {
    Alert& a = it->second;
    bool erase = false;
    if (!present.count(it->first)) {
      bool keep_firing = false;
      if (a.state == AlertState::kFiring && def_.keep_firing_for_ms > 0) {
        if (a.keep_firing_since == kNoTime) a.keep_firing_since = t;
        keep_firing = t - a.keep_firing_since < def_.keep_firing_for_ms;
      }
      if (a.state == AlertState::kPending ||
          (a.resolved_at != kNoTime &&
           t - a.resolved_at > kResolvedRetentionMs)) {
        erase = true;
      }
      if (a.state != AlertState::kInactive && !keep_firing) {
        a.state = AlertState::kInactive;
        a.resolved_at = t;
      }
      if (!keep_firing) {
        it = erase ? active_.erase(it) : std::next(it);
        continue;
      }
    } else {
      a.keep_firing_since = kNoTime;
    }
    ++*num_active;
    if (a.state == AlertState::kPending && t - a.active_at >= def_.for_ms) {
      a.state = AlertState::kFiring;
      a.fired_at = t;
    }
    // After a reload that lengthened `for`, a firing alert may be pending
    // again (Prometheus does the same).
    if (a.state == AlertState::kFiring && t - a.active_at < def_.for_ms) {
      a.state = AlertState::kPending;
      a.fired_at = kNoTime;
      a.last_sent_at = kNoTime;
      a.keep_firing_since = kNoTime;
    }
    if (restored_) AppendSamples(a, sample_t, &vec);
    if (erase) {
      it = active_.erase(it);
    } else {
      ++it;
    }
  }
  return vec;
}

std::vector<NotifyAlert> AlertingRule::AlertsToSend(Timestamp t,
                                                    int64_t resend_delay_ms,
                                                    int64_t interval_ms) {
  std::vector<NotifyAlert> out;
  vigil::MutexLock lock(&mu_);
  for (auto& [_, a] : active_) {
    if (a.state == AlertState::kPending) continue;
    bool needs =
        a.resolved_at > a.last_sent_at ||
        (a.last_sent_at == kNoTime ? true
                                   : a.last_sent_at + resend_delay_ms < t);
    if (!needs) continue;
    a.last_sent_at = t;
    a.valid_until = t + 4 * std::max(interval_ms, resend_delay_ms);
    NotifyAlert n;
    n.labels = a.labels;
    n.annotations = a.annotations;
    n.starts_at = a.fired_at;
    n.resolved = a.resolved_at != kNoTime;
    n.ends_at = n.resolved ? a.resolved_at : a.valid_until;
    out.push_back(std::move(n));
  }
  return out;
}

AlertState AlertingRule::State() const {
  vigil::MutexLock lock(&mu_);
  AlertState max = AlertState::kInactive;
  for (const auto& [_, a] : active_) max = std::max(max, a.state);
  return max;
}

std::vector<Alert> AlertingRule::ActiveAlerts() const {
  std::vector<Alert> out;
  vigil::MutexLock lock(&mu_);
  for (const auto& [_, a] : active_) {
    if (a.resolved_at == kNoTime) out.push_back(a);
  }
  return out;
}

void AlertingRule::RestoreForState(
    const std::map<Labels, std::pair<Timestamp, double>>& last, Timestamp ts,
    int64_t grace_ms) {
  vigil::MutexLock lock(&mu_);
  for (auto& [labels, a] : active_) {
    // The series was written with SeriesLabels(), as Prometheus looks it up.
    // Series written by Vigil before it kept unexpanded labels there carry
    // the alert's labels; those are still found.
    auto it = last.find(SeriesLabels(a));
    if (it == last.end()) it = last.find(labels);
    if (it == last.end() || IsStaleNaN(it->second.second)) continue;
    // Prometheus works in whole seconds here (time.Unix).
    const int64_t down_at = it->second.first / 1000 * 1000;
    int64_t active_at = static_cast<int64_t>(it->second.second) * 1000;
    const int64_t remaining = def_.for_ms - (down_at - active_at);
    if (remaining <= 0) {
      // Was firing: the original ActiveAt, so the next evaluation fires it.
    } else if (remaining < grace_ms) {
      active_at = ts + grace_ms - def_.for_ms;
    } else {
      active_at += ts - down_at;
    }
    a.active_at = active_at;
  }
}

void AlertingRule::CopyStateFrom(const AlertingRule& from) {
  if (&from == this) return;
  std::map<Labels, Alert> copy;
  {
    vigil::MutexLock lock(&from.mu_);
    copy = from.active_;
  }
  vigil::MutexLock lock(&mu_);
  for (auto& [k, a] : copy) active_[k] = std::move(a);
}

std::vector<Alert> AlertingRule::AllAlerts() const {
  std::vector<Alert> out;
  vigil::MutexLock lock(&mu_);
  for (const auto& [_, a] : active_) out.push_back(a);
  return out;
}

}  // namespace vigil::rules
