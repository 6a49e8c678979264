#include "rules/group.h"

#include <chrono>

#include "core/clock.h"
#include "core/matcher.h"

namespace vigil::rules {

std::string_view RuleHealthName(RuleHealth h) {
  switch (h) {
    case RuleHealth::kOk:
      return "ok";
    case RuleHealth::kErr:
      return "err";
    case RuleHealth::kUnknown:
      break;
  }
  return "unknown";
}

Group::Group(const RuleGroup& def, GroupOptions opts)
    : def_(def),
      opts_(std::move(opts)),
      interval_ms_(def.interval_ms > 0 ? def.interval_ms
                                       : opts_.default_interval_ms) {
  for (const Rule& r : def_.rules) {
    Entry e;
    e.def = r;
    if (!def_.labels.empty()) {
      LabelsBuilder b(def_.labels);
      for (const Label& l : r.labels) b.Set(l.name, l.value);
      e.def.labels = b.Build();
    }
    if (r.kind == RuleKind::kRecording) {
      e.recording = std::make_unique<RecordingRule>(e.def);
    } else {
      e.alerting = std::make_unique<AlertingRule>(e.def);
    }
    rules_.push_back(std::move(e));
  }
  status_.resize(rules_.size());
}

void Group::CopyState(const Group& from) {
  missed_.fetch_add(from.iterations_missed(), std::memory_order_relaxed);
  evaluations_.fetch_add(from.evaluations_total(), std::memory_order_relaxed);
  failures_.fetch_add(from.evaluation_failures_total(),
                      std::memory_order_relaxed);
  std::map<std::string, std::vector<size_t>> by_key;
  auto key = [](const Rule& r) { return r.name + r.labels.ToString(); };
  for (size_t i = 0; i < from.rules_.size(); ++i)
    by_key[key(from.rules_[i].def)].push_back(i);
  for (Entry& e : rules_) {
    auto it = by_key.find(key(e.def));
    if (it == by_key.end() || it->second.empty()) continue;
    const Entry& old = from.rules_[it->second.front()];
    it->second.erase(it->second.begin());
    e.prev_series = old.prev_series;
    if (e.alerting && old.alerting) e.alerting->CopyStateFrom(*old.alerting);
  }
  stale_series_ = from.stale_series_;
  for (const auto& [_, unmatched] : by_key) {
    for (size_t fi : unmatched) {
      for (const auto& [lset, _] : from.rules_[fi].prev_series) {
        stale_series_.push_back(lset);
      }
    }
  }
}

std::vector<Labels> Group::OutputSeries() const {
  std::vector<Labels> out = stale_series_;
  for (const Entry& e : rules_) {
    for (const auto& [lset, _] : e.prev_series) out.push_back(lset);
  }
  return out;
}

void Group::MarkStale(const std::vector<Labels>& series, Timestamp t) {
  if (series.empty()) return;
  auto app = opts_.appendable->NewAppender();
  for (const Labels& l : series) app->Append(0, l, t, StaleNaN()).IgnoreError();
  app->Commit().IgnoreError();
}

void Group::SetRestored(bool v) {
  for (Entry& e : rules_) {
    if (e.alerting) e.alerting->set_restored(v);
  }
}

// The newest sample of each ALERTS_FOR_STATE series of `rule`, keyed by the
// series' labels without __name__ (= the alert's labels).
static absl::StatusOr<std::map<Labels, std::pair<Timestamp, double>>>
LastForState(storage::Querier* q, const Rule& rule) {
  std::vector<Matcher> ms;
  for (auto [n, v] : {std::pair<std::string_view, std::string_view>{
                          kMetricName, "ALERTS_FOR_STATE"},
                      {"alertname", rule.name}}) {
    auto m = Matcher::Make(MatchType::kEqual, n, v);
    if (!m.ok()) return m.status();
    ms.push_back(std::move(*m));
  }
  auto set = q->Select(ms);
  if (!set.ok()) return set.status();
  std::map<Labels, std::pair<Timestamp, double>> out;
  while ((*set)->Next()) {
    const storage::Series& s = (*set)->At();
    auto it = s.Iterator();
    bool any = false;
    std::pair<Timestamp, double> last;
    while (it->Next()) {
      last = {it->t(), it->v()};
      any = true;
    }
    if (any) out[LabelsBuilder(s.labels()).Del(kMetricName).Build()] = last;
  }
  return out;
}

absl::Status Group::RestoreForState(storage::Queryable* q, Timestamp ts,
                                    int64_t outage_tolerance_ms,
                                    int64_t grace_ms) {
  absl::Status result;
  auto querier = q->NewQuerier(ts - outage_tolerance_ms, ts);
  for (Entry& e : rules_) {
    if (!e.alerting) continue;
    if (querier.ok() && e.def.for_ms >= grace_ms) {
      auto last = LastForState(querier->get(), e.def);
      if (last.ok()) {
        e.alerting->RestoreForState(*last, ts, grace_ms);
      } else {
        result = last.status();
      }
    }
    e.alerting->set_restored(true);
  }
  return querier.ok() ? result : querier.status();
}

RuleStatus Group::status(size_t i) const {
  vigil::MutexLock lock(&mu_);
  return status_[i];
}

void Group::Eval(Timestamp t) {
  EvalContext ctx;
  ctx.query = opts_.query;
  ctx.external_labels = opts_.external_labels;
  ctx.external_url = opts_.external_url;
  ctx.query_offset_ms =
      def_.query_offset_ms.value_or(opts_.default_query_offset_ms);
  ctx.limit = def_.limit;
  const auto start = std::chrono::steady_clock::now();
  const Timestamp wall = Clock::Real()->NowMs();
  for (size_t i = 0; i < rules_.size(); ++i) EvalRule(i, t, ctx);
  MarkStale(stale_series_, t - ctx.query_offset_ms);
  stale_series_.clear();
  const auto dur = std::chrono::steady_clock::now() - start;
  vigil::MutexLock lock(&mu_);
  group_status_.last_eval_ts = t;
  group_status_.last_eval_wall_ms = wall;
  group_status_.eval_duration_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(dur).count();
}

RuleStatus Group::last_eval() const {
  vigil::MutexLock lock(&mu_);
  return group_status_;
}

void Group::EvalRule(size_t i, Timestamp t, const EvalContext& ctx) {
  Entry& e = rules_[i];
  const auto start = std::chrono::steady_clock::now();
  const Timestamp wall = Clock::Real()->NowMs();
  absl::StatusOr<promql::Vector> vec =
      e.recording ? e.recording->Eval(t, ctx) : e.alerting->Eval(t, ctx);
  absl::Status err = vec.status();
  if (vec.ok()) {
    if (e.alerting && opts_.notify) {
      opts_.notify(
          e.alerting->expr_text(),
          e.alerting->AlertsToSend(t, opts_.resend_delay_ms, interval_ms_));
    }
    AppendResult(e, *vec, t - ctx.query_offset_ms, &err);
  }
  const auto dur = std::chrono::steady_clock::now() - start;
  evaluations_.fetch_add(1, std::memory_order_relaxed);
  if (!err.ok()) failures_.fetch_add(1, std::memory_order_relaxed);
  vigil::MutexLock lock(&mu_);
  RuleStatus& st = status_[i];
  st.health = err.ok() ? RuleHealth::kOk : RuleHealth::kErr;
  st.last_error = err.ok() ? "" : std::string(err.message());
  st.last_eval_wall_ms = wall;
  st.last_eval_ts = t;
  st.eval_duration_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(dur).count();
}

// Appends `vec`, marks series of the previous evaluation that are gone as
// stale at `stale_t`, and commits. As in Prometheus, any append error makes
// the rule unhealthy (the other samples are still appended); out-of-order
// and duplicate errors on stale markers are expected (another rule may own
// the series) and ignored.
void Group::AppendResult(Entry& e, const promql::Vector& vec, Timestamp stale_t,
                         absl::Status* err) {
  auto app = opts_.appendable->NewAppender();
  std::map<Labels, bool> returned;
  for (const promql::Sample& s : vec) {
    auto r = app->Append(0, s.metric, s.t, s.v);
    if (!r.ok()) {
      *err = r.status();
    } else {
      returned.emplace(s.metric, true);
    }
  }
  for (const auto& [lset, _] : e.prev_series) {
    if (returned.count(lset)) continue;
    auto r = app->Append(0, lset, stale_t, StaleNaN());
    (void)r;  // expected when another rule now writes the series
  }
  absl::Status c = app->Commit();
  if (!c.ok()) {
    *err = c;
    return;
  }
  e.prev_series = std::move(returned);
}

}  // namespace vigil::rules
