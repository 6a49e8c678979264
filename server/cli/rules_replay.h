// -----------------------------------------------------------------------------
// File: cli/rules_replay.h
// -----------------------------------------------------------------------------
//
// Shared by `vigil rules replay` (rules_replay.cc) and its --compare mode
// (rules_replay_compare.cc). Not a public header.
#ifndef VIGIL_SERVER_CLI_RULES_REPLAY_H_
#define VIGIL_SERVER_CLI_RULES_REPLAY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/time.h"
#include "rules/rule_file.h"
#include "storage/db.h"

namespace vigil::cli {

// Per alert name, what a replay saw.
struct ReplaySum {
  int fired = 0, pending_only = 0;
  int64_t firing_ms = 0;
};

// Evaluates `defs` over [start, end] on `db` (recording results are
// written into it) and sums the alerts; `errors` gets the failed
// evaluations (the first ten are printed to stderr).
std::map<std::string, ReplaySum> ReplaySums(
    storage::DB* db, const std::vector<rules::RuleGroup>& defs, Timestamp start,
    Timestamp end, int64_t interval, size_t* errors);

// --compare=OLD[,OLD...]: replays the OLD files and the NEW ones, each on a
// snapshot of `db` (the stored data is not changed), and prints per alert
// how the firing counts and times change. Exit code as the command's.
int RulesReplayCompare(storage::DB* db, const std::string& old_files,
                       const std::vector<std::string>& new_files,
                       Timestamp start, Timestamp end, int64_t interval);

}  // namespace vigil::cli

#endif  // VIGIL_SERVER_CLI_RULES_REPLAY_H_
