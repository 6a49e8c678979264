#include "rules/manager.h"

#include <glob.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/thread_name.h"
#include "rules/rule_file.h"

namespace vigil::rules {

// One group and the thread evaluating it.
struct Manager::Runner {
  std::shared_ptr<Group> group;
  uint64_t slot_hash = 0;
  Timestamp first_eval = 0;  // set before the thread starts
  bool restore = false;      // restore `for` state after the 2nd evaluation
  std::thread thread;
  vigil::Mutex mu;
  vigil::CondVar cv;
  bool stop ABSL_GUARDED_BY(mu) = false;

  void RequestStop() {
    vigil::MutexLock lock(&mu);
    stop = true;
    cv.SignalAll();
  }
  void Join() {
    if (thread.joinable()) thread.join();
  }
};

Manager::Manager(ManagerOptions opts)
    : opts_(std::move(opts)),
      clock_(opts_.clock ? opts_.clock : Clock::Real()) {}

Manager::~Manager() { Stop(); }

uint64_t Manager::SlotHash(const std::string& name, const std::string& file) {
  return Labels{{"name", name}, {"file", file}}.Hash();
}

Timestamp Manager::EvalTimestamp(int64_t interval_ms, uint64_t slot_hash,
                                 Timestamp now) {
  const int64_t offset =
      static_cast<int64_t>(slot_hash % static_cast<uint64_t>(interval_ms));
  const int64_t adj = now - offset;
  int64_t rem = adj % interval_ms;
  if (rem < 0) rem += interval_ms;
  return adj - rem + offset;
}

// Parses every file matching `files` into new (not started) runners.
absl::Status Manager::Load(const std::vector<std::string>& files,
                           std::vector<std::unique_ptr<Runner>>* out) const {
  std::vector<std::string> paths;
  for (const std::string& pattern : files) {
    glob_t g{};
    if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) paths.push_back(g.gl_pathv[i]);
    }
    globfree(&g);
  }
  std::string errors;
  for (const std::string& p : paths) {
    ParsedRuleFile f = ReadRuleFile(p);
    for (const auto& e : f.errors)
      errors += (errors.empty() ? "" : "\n") + e.ToString();
    for (const RuleGroup& rg : f.groups) {
      auto r = std::make_unique<Runner>();
      r->group = std::make_shared<Group>(rg, opts_.group);
      r->slot_hash = SlotHash(rg.name, rg.source_file);
      out->push_back(std::move(r));
    }
  }
  if (!errors.empty()) return absl::InvalidArgumentError(errors);
  return absl::OkStatus();
}

absl::Status Manager::Update(const std::vector<std::string>& files) {
  vigil::MutexLock lifecycle(&lifecycle_mu_);
  std::vector<std::unique_ptr<Runner>> fresh;
  if (absl::Status s = Load(files, &fresh); !s.ok()) return s;

  std::vector<std::unique_ptr<Runner>> old;
  {
    vigil::MutexLock lock(&mu_);
    old.swap(runners_);
  }
  for (auto& r : old) r->RequestStop();
  for (auto& r : old) r->Join();
  std::map<std::pair<std::string, std::string>, Group*> by_key;
  for (auto& r : old) {
    by_key[{r->group->file(), r->group->name()}] = r->group.get();
  }
  // Groups that are gone: their output goes stale now (Prometheus waits two
  // intervals so renamed rules can take over first; a series a new group
  // still writes just resumes at its next evaluation).
  std::set<std::pair<std::string, std::string>> kept;
  for (auto& r : fresh) kept.insert({r->group->file(), r->group->name()});
  for (auto& [key, g] : by_key) {
    if (!kept.count(key)) g->MarkStale(g->OutputSeries(), clock_->NowMs());
  }
  vigil::MutexLock lock(&mu_);
  const bool restore = !loaded_once_ && opts_.queryable != nullptr;
  loaded_once_ = true;
  for (auto& r : fresh) {
    if (restore) {
      r->restore = true;
      r->group->SetRestored(false);
    }
    auto it = by_key.find({r->group->file(), r->group->name()});
    if (it != by_key.end()) r->group->CopyState(*it->second);
    if (started_) StartRunner(r.get());
  }
  runners_ = std::move(fresh);
  return absl::OkStatus();
}

void Manager::SetGroupDefaults(Labels external_labels, std::string external_url,
                               int64_t default_interval_ms,
                               int64_t default_query_offset_ms) {
  // Load() reads opts_.group under lifecycle_mu_ (from Update).
  vigil::MutexLock lifecycle(&lifecycle_mu_);
  opts_.group.external_labels = std::move(external_labels);
  opts_.group.external_url = std::move(external_url);
  opts_.group.default_interval_ms = default_interval_ms;
  opts_.group.default_query_offset_ms = default_query_offset_ms;
}

void Manager::Start() {
  vigil::MutexLock lifecycle(&lifecycle_mu_);
  vigil::MutexLock lock(&mu_);
  if (started_) return;
  started_ = true;
  for (auto& r : runners_) StartRunner(r.get());
}

void Manager::StartRunner(Runner* r) {
  // The first slot is fixed here, not when the thread gets going.
  const int64_t interval = r->group->interval_ms();
  r->first_eval =
      EvalTimestamp(interval, r->slot_hash, clock_->NowMs()) + interval;
  r->thread = std::thread([this, r] {
    SetCurrentThreadName("vigil-rules");
    Run(r);
  });
}

void Manager::Stop() {
  vigil::MutexLock lifecycle(&lifecycle_mu_);
  std::vector<Runner*> rs;
  {
    vigil::MutexLock lock(&mu_);
    started_ = false;
    for (auto& r : runners_) rs.push_back(r.get());
  }
  for (Runner* r : rs) r->RequestStop();
  for (Runner* r : rs) r->Join();
  // Runners may be restarted by a later Start().
  for (Runner* r : rs) {
    vigil::MutexLock lock(&r->mu);
    r->stop = false;
  }
}

std::vector<std::shared_ptr<Group>> Manager::Groups() const {
  vigil::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<Group>> out;
  for (const auto& r : runners_) out.push_back(r->group);
  return out;
}

// Prometheus's Group.run: wait for the group's first slot after now, then
// evaluate at slot + k*interval, skipping missed slots.
void Manager::Run(Runner* r) {
  const int64_t interval = r->group->interval_ms();
  Timestamp next = r->first_eval;
  int evals = 0;
  const bool real = clock_ == Clock::Real();
  while (true) {
    const Timestamp now = clock_->NowMs();
    if (now >= next) {
      const int64_t missed = (now - next) / interval;
      if (missed > 0) r->group->AddMissedIterations(missed);
      next += missed * interval;
      r->group->Eval(next);
      next += interval;
      if (r->restore && ++evals == 2) {
        r->restore = false;
        // Errors leave the alerts to start afresh; nothing else to do.
        r->group
            ->RestoreForState(opts_.queryable, clock_->NowMs(),
                              opts_.outage_tolerance_ms,
                              opts_.for_grace_period_ms)
            .IgnoreError();
      }
      continue;
    }
    // A fake clock moves without notice: poll it.
    const int64_t wait_ms =
        real ? next - now : std::min<int64_t>(next - now, 2);
    vigil::MutexLock lock(&r->mu);
    if (r->stop) return;
    r->cv.WaitWithTimeout(&r->mu, absl::Milliseconds(wait_ms));
    if (r->stop) return;
  }
}

}  // namespace vigil::rules
