// `vigil rules replay --compare=OLD.yml NEW.yml ...`: how a rule change
// would have changed the alerts over the stored history, judged before it
// ships.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include "absl/strings/str_split.h"
#include "fmt/format.h"
#include "server/cli/rules_replay.h"

namespace vigil::cli {

namespace {

absl::StatusOr<std::vector<rules::RuleGroup>> Load(
    const std::vector<std::string>& files) {
  std::vector<rules::RuleGroup> defs;
  for (const auto& f : files) {
    auto groups = rules::LoadRuleFile(f);
    if (!groups.ok()) return groups.status();
    for (auto& g : *groups) defs.push_back(std::move(g));
  }
  return defs;
}

// Replays `defs` on a snapshot of `db` in `dir` (removed afterwards).
absl::StatusOr<std::map<std::string, ReplaySum>> OnSnapshot(
    storage::DB* db, const std::string& dir,
    const std::vector<rules::RuleGroup>& defs, Timestamp start, Timestamp end,
    int64_t interval, size_t* errors) {
  if (absl::Status s = db->Snapshot(dir); !s.ok()) return s;
  storage::Options opts;
  opts.retention_ms = 0;
  std::map<std::string, ReplaySum> sums;
  {
    auto copy = storage::DB::Open(opts, dir);
    if (!copy.ok()) return copy.status();
    sums = ReplaySums(copy->get(), defs, start, end, interval, errors);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return sums;
}

std::string Signed(int64_t v) {
  return v > 0 ? fmt::format("+{}", v) : fmt::format("{}", v);
}

}  // namespace

int RulesReplayCompare(storage::DB* db, const std::string& old_files,
                       const std::vector<std::string>& new_files,
                       Timestamp start, Timestamp end, int64_t interval) {
  std::vector<std::string> olds =
      absl::StrSplit(old_files, ',', absl::SkipEmpty());
  if (olds.empty()) {
    std::fprintf(stderr, "error: --compare: no rule file given\n");
    return 2;
  }
  auto old_defs = Load(olds);
  auto new_defs = Load(new_files);
  for (const auto* d : {&old_defs, &new_defs}) {
    if (!d->ok()) {
      std::fprintf(stderr, "error: %s\n",
                   std::string(d->status().message()).c_str());
      return 1;
    }
  }
  std::string tmp = (std::filesystem::temp_directory_path() /
                     fmt::format("vigil-replay-compare-{}", getpid()))
                        .string();
  std::error_code ec;
  std::filesystem::create_directories(tmp, ec);
  size_t old_err = 0, new_err = 0;
  auto old_sums =
      OnSnapshot(db, tmp + "/old", *old_defs, start, end, interval, &old_err);
  auto new_sums = old_sums.ok() ? OnSnapshot(db, tmp + "/new", *new_defs, start,
                                             end, interval, &new_err)
                                : old_sums;
  std::filesystem::remove_all(tmp, ec);
  if (!new_sums.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(new_sums.status().message()).c_str());
    return 1;
  }
  std::printf(
      "Replayed %s (old) and %s (new) from %s to %s (%zu / %zu rule "
      "errors)\n\n",
      old_files.c_str(), fmt::format("{}", fmt::join(new_files, ",")).c_str(),
      FormatRfc3339Seconds(start).c_str(), FormatRfc3339Seconds(end).c_str(),
      old_err, new_err);
  std::printf("%-32s %8s %8s %7s %12s %12s\n", "ALERT", "OLD", "NEW", "CHANGE",
              "OLD FIRING", "NEW FIRING");
  std::set<std::string> names;
  for (const auto& [n, s] : *old_sums) names.insert(n);
  for (const auto& [n, s] : *new_sums) names.insert(n);
  if (names.empty()) std::printf("(no alert became pending on either side)\n");
  for (const auto& n : names) {
    ReplaySum o, w;
    if (auto it = old_sums->find(n); it != old_sums->end()) o = it->second;
    if (auto it = new_sums->find(n); it != new_sums->end()) w = it->second;
    std::printf("%-32s %8d %8d %7s %12s %12s\n", n.c_str(), o.fired, w.fired,
                Signed(w.fired - o.fired).c_str(),
                FormatDurationMs(o.firing_ms).c_str(),
                FormatDurationMs(w.firing_ms).c_str());
  }
  return old_err + new_err > 0 ? 1 : 0;
}

}  // namespace vigil::cli
