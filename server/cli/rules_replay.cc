// `vigil rules replay --storage.tsdb.path=DIR --start=T --end=T RULEFILE...`
// evaluates rule groups over stored data as if they had been running (like
// `promtool tsdb create-blocks-from rules` and vmalert's replay mode):
// recording-rule results are written into DIR, and the alert timeline
// (pending, firing, resolved, with labels and rendered annotations) is
// printed, then per alert how often and how long it fired.
#include "server/cli/rules_replay.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "core/time.h"
#include "fmt/format.h"
#include "promql/engine.h"
#include "rules/alerting.h"
#include "rules/group.h"
#include "rules/rule_file.h"
#include "server/cli/cli.h"
#include "storage/db.h"

namespace vigil::cli {

namespace {

// One pending→(firing→)resolved life of an alert.
struct Episode {
  std::string alertname;
  Labels labels;
  Labels annotations;
  Timestamp active_at = kMinTimestamp;
  Timestamp fired_at = kMinTimestamp;
  Timestamp resolved_at = kMinTimestamp;  // or when it left the pending state
  bool open = true;
};

}  // namespace

class Timeline {
 public:
  std::map<std::string, ReplaySum> Sums(Timestamp end) const {
    std::map<std::string, ReplaySum> sums;
    for (const auto& e : episodes_) {
      ReplaySum& s = sums[e.alertname];
      if (e.fired_at == kMinTimestamp) {
        s.pending_only++;
        continue;
      }
      s.fired++;
      s.firing_ms += (e.open ? end : e.resolved_at) - e.fired_at;
    }
    return sums;
  }

  // Records the state of one alerting rule's alerts after an evaluation at t.
  void Observe(const std::string& alertname,
               const std::vector<rules::Alert>& alerts, Timestamp t) {
    std::map<std::string, bool> seen;
    for (const auto& a : alerts) {
      std::string key = alertname + a.labels.ToString();
      seen[key] = true;
      auto it = last_.find(key);
      Episode* e = it == last_.end() ? nullptr : &episodes_[it->second];
      if (!e || e->active_at != a.active_at) {
        // Resolved alerts stay listed for 15 minutes: not a new episode.
        if (a.state == rules::AlertState::kInactive) continue;
        if (e && e->open) Close(e, t);
        last_[key] = episodes_.size();
        episodes_.push_back({alertname, a.labels, a.annotations, a.active_at});
        e = &episodes_.back();
      }
      if (!e->open) continue;
      e->annotations = a.annotations;
      if (a.fired_at != rules::kNoTime && e->fired_at == kMinTimestamp)
        e->fired_at = a.fired_at;
      if (a.state == rules::AlertState::kInactive) {
        Close(e, a.resolved_at != rules::kNoTime ? a.resolved_at : t);
      }
    }
    // A pending alert whose condition cleared disappears without a trace.
    for (auto& [key, idx] : last_) {
      Episode& e = episodes_[idx];
      if (e.open && e.alertname == alertname && !seen.count(key)) Close(&e, t);
    }
  }

  void Print(Timestamp end) const {
    std::vector<std::pair<Timestamp, std::string>> lines;
    for (const auto& e : episodes_) {
      std::string who = fmt::format("{} {}", e.alertname, e.labels.ToString());
      lines.push_back(
          {e.active_at, fmt::format("{} pending   {}",
                                    FormatRfc3339Seconds(e.active_at), who)});
      if (e.fired_at != kMinTimestamp) {
        std::string ann;
        for (const auto& l : e.annotations)
          ann += fmt::format("\n      {}: {}", l.name, l.value);
        lines.push_back(
            {e.fired_at,
             fmt::format("{} firing    {}{}", FormatRfc3339Seconds(e.fired_at),
                         who, ann)});
      }
      if (!e.open) {
        lines.push_back(
            {e.resolved_at,
             fmt::format(
                 "{} {} {}", FormatRfc3339Seconds(e.resolved_at),
                 e.fired_at != kMinTimestamp ? "resolved " : "cleared  ",
                 who)});
      }
    }
    std::stable_sort(
        lines.begin(), lines.end(),
        [](const auto& a, const auto& b) { return a.first < b.first; });
    std::printf("Alert timeline:\n");
    if (lines.empty()) std::printf("  (no alert became pending)\n");
    for (const auto& [t, line] : lines) std::printf("  %s\n", line.c_str());

    std::map<std::string, ReplaySum> sums = Sums(end);
    std::printf("\nPer alert:\n");
    if (sums.empty()) std::printf("  (none)\n");
    for (const auto& [name, s] : sums) {
      std::printf(
          "  %-40s fired %d time(s), firing for %s in total; pending without "
          "firing %d time(s)\n",
          name.c_str(), s.fired, FormatDurationMs(s.firing_ms).c_str(),
          s.pending_only);
    }
  }

 private:
  static void Close(Episode* e, Timestamp t) {
    e->open = false;
    e->resolved_at = t;
  }
  std::vector<Episode> episodes_;
  std::map<std::string, size_t> last_;  // newest episode per alert
};

size_t ReplayGroups(storage::DB* dbp, const std::vector<rules::RuleGroup>& defs,
                    Timestamp start, Timestamp end, int64_t interval,
                    Timeline* timeline, size_t* num_evals) {
  promql::Engine engine;
  rules::GroupOptions go;
  go.appendable = dbp;
  go.default_interval_ms = interval;
  go.query = rules::EngineQueryFunc(&engine, dbp);

  std::vector<std::unique_ptr<rules::Group>> groups;
  for (const auto& d : defs)
    groups.push_back(std::make_unique<rules::Group>(d, go));
  // Evaluate all groups on one time line so a group reading another's
  // recording rules sees them as in a live server.
  std::vector<std::pair<Timestamp, size_t>> evals;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (Timestamp t = start; t <= end; t += groups[g]->interval_ms())
      evals.push_back({t, g});
  }
  std::stable_sort(evals.begin(), evals.end());
  size_t errors = 0;
  for (const auto& [t, g] : evals) {
    rules::Group& grp = *groups[g];
    grp.Eval(t);
    for (size_t i = 0; i < grp.size(); ++i) {
      if (grp.status(i).health == rules::RuleHealth::kErr &&
          grp.status(i).last_eval_ts == t) {
        if (errors++ < 10) {
          std::fprintf(stderr, "%s: group %s, rule %s: %s\n",
                       FormatRfc3339Seconds(t).c_str(), grp.name().c_str(),
                       grp.rule_def(i).name.c_str(),
                       grp.status(i).last_error.c_str());
        }
      }
      if (auto* a = grp.alerting(i))
        timeline->Observe(grp.rule_def(i).name, a->AllAlerts(), t);
    }
  }
  *num_evals = evals.size();
  return errors;
}

std::map<std::string, ReplaySum> ReplaySums(
    storage::DB* db, const std::vector<rules::RuleGroup>& defs, Timestamp start,
    Timestamp end, int64_t interval, size_t* errors) {
  Timeline timeline;
  size_t evals = 0;
  *errors = ReplayGroups(db, defs, start, end, interval, &timeline, &evals);
  return timeline.Sums(end);
}

int RulesReplay(const std::vector<std::string>& argv) {
  Args args(argv,
            {"storage.tsdb.path", "start", "end", "eval-interval", "compare"},
            {});
  auto path = args.Get("storage.tsdb.path");
  if (!args.ok() || !path || !args.Get("start") || !args.Get("end") ||
      args.positional().empty()) {
    std::fprintf(
        stderr,
        "usage: vigil rules replay --storage.tsdb.path=DIR --start=T --end=T "
        "[--eval-interval=1m] [--compare=OLD.yml,...] RULEFILE...\n%s\n",
        args.error().c_str());
    return 2;
  }
  auto start = ParseTime(*args.Get("start"));
  auto end = ParseTime(*args.Get("end"));
  auto interval = ParseDuration(args.Get("eval-interval").value_or("1m"));
  if (!start.ok() || !end.ok() || !interval.ok() || *interval <= 0 ||
      *end < *start) {
    std::fprintf(stderr, "error: invalid --start/--end/--eval-interval: %s\n",
                 std::string((!start.ok() ? start.status()
                              : !end.ok() ? end.status()
                                          : interval.status())
                                 .message())
                     .c_str());
    return 2;
  }
  std::vector<rules::RuleGroup> defs;
  for (const auto& f : args.positional()) {
    auto groups = rules::LoadRuleFile(f);
    if (!groups.ok()) {
      std::fprintf(stderr, "error: %s\n",
                   std::string(groups.status().message()).c_str());
      return 1;
    }
    for (auto& g : *groups) defs.push_back(std::move(g));
  }
  storage::Options opts;
  opts.retention_ms = 0;  // replaying old data must not expire it
  auto db = storage::DB::Open(opts, *path);
  if (!db.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(db.status().message()).c_str());
    return 1;
  }
  if (auto c = args.Get("compare")) {
    return RulesReplayCompare(db->get(), *c, args.positional(), *start, *end,
                              *interval);
  }
  Timeline timeline;
  size_t evals = 0;
  size_t errors =
      ReplayGroups(db->get(), defs, *start, *end, *interval, &timeline, &evals);
  if (auto s = (*db)->Flush(); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf(
      "Replayed %zu group(s) from %s to %s (%zu evaluations, %zu rule "
      "errors)\n\n",
      defs.size(), FormatRfc3339Seconds(*start).c_str(),
      FormatRfc3339Seconds(*end).c_str(), evals, errors);
  timeline.Print(*end);
  return errors > 0 ? 1 : 0;
}

}  // namespace vigil::cli
