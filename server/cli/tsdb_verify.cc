// `vigil tsdb verify DIR` and `vigil tsdb repair DIR`: storage::Verify and
// storage::Repair (storage/verify.h) over a data directory, with the
// server's own records of the `state` family (the built-in Alertmanager's
// silences, notification log and alert history) decoded as the server
// would. Exit codes: 0 nothing damaged (or, for repair, repaired without
// losing anything), 1 damage found (verify) or repaired with losses
// (repair), 2 usage, a directory that cannot be checked, or a repair that
// failed.
#include <cstdio>
#include <string>

#include "fmt/format.h"
#include "server/alerting/history.h"
#include "server/alerting/nflog.h"
#include "server/alerting/silences.h"
#include "server/cli/cli.h"
#include "storage/verify.h"

namespace vigil::cli {

namespace {

// Decodes a `state` value by its key, as the server reads it back.
absl::Status CheckState(std::string_view key, std::string_view value) {
  auto check = [](const auto& decoded) {
    return decoded.ok() ? absl::OkStatus() : decoded.status();
  };
  if (key.starts_with("alerting/silence/"))
    return check(alerting::DecodeSilence(value));
  if (key.starts_with("alerting/nflog/"))
    return check(alerting::DecodeNflogEntry(value));
  if (key.starts_with("alerting/history/n/"))
    return check(alerting::DecodeNotification(value));
  if (key.starts_with("alerting/history/f/"))
    return check(alerting::DecodeFeedback(value));
  return absl::OkStatus();  // a key of a newer build: left as it is
}

storage::VerifyOptions Options() {
  storage::VerifyOptions o;
  o.check_state = CheckState;
  return o;
}

const char* kNotCovered =
    "not covered: snapshots/ (each is a copy to verify on its own), and "
    "files that are not RocksDB's";

void PrintVerify(const storage::VerifyReport& r) {
  uint64_t records = 0;
  for (const auto& [family, n] : r.records) records += n;
  if (r.clean()) {
    std::printf("%s: no damage found (%llu table files, %llu records)\n",
                r.dir.c_str(), static_cast<unsigned long long>(r.table_files),
                static_cast<unsigned long long>(records));
  } else {
    std::printf("%s: %zu damaged:\n", r.dir.c_str(), r.damage.size());
    for (const auto& d : r.damage) {
      std::printf("  %s%s\n", d.family.empty() ? "" : (d.family + ": ").c_str(),
                  storage::FormatDamage(d).c_str());
    }
  }
  for (const auto& n : r.notes) std::printf("note: %s\n", n.c_str());
}

bool JsonFormat(const Args& args, const char* cmd, int* code) {
  std::string f = args.Get("format").value_or("text");
  if (f != "text" && f != "json") {
    std::fprintf(stderr,
                 "vigil tsdb %s: --format=%s: not supported (text or json)\n",
                 cmd, f.c_str());
    *code = 2;
  }
  return f == "json";
}

}  // namespace

int TsdbVerify(const std::vector<std::string>& argv) {
  Args args(argv, {"format"}, {});
  if (!args.ok() || args.positional().size() != 1) {
    std::fprintf(stderr, "usage: vigil tsdb verify DIR [--format=json]\n%s\n",
                 args.error().c_str());
    return 2;
  }
  int code = 0;
  const bool json = JsonFormat(args, "verify", &code);
  if (code) return code;
  const std::string& dir = args.positional()[0];
  auto r = storage::Verify(dir, Options());
  if (!r.ok()) {
    std::fprintf(stderr, "vigil tsdb verify: %s\n",
                 std::string(r.status().message()).c_str());
    return 2;
  }
  if (json) {
    std::printf("%s\n", storage::VerifyReportJson(*r).c_str());
  } else {
    PrintVerify(*r);
    std::printf("note: %s\n", kNotCovered);
    if (!r->clean()) {
      std::printf(
          "Run `vigil tsdb repair %s` (with vigil stopped) to move the "
          "damaged data aside and keep the rest.\n",
          dir.c_str());
    }
  }
  return r->clean() ? 0 : 1;
}

int TsdbRepair(const std::vector<std::string>& argv) {
  Args args(argv, {"format", "aside-dir"}, {});
  if (!args.ok() || args.positional().size() != 1) {
    std::fprintf(stderr,
                 "usage: vigil tsdb repair DIR [--aside-dir=DIR] "
                 "[--format=json]\n%s\n",
                 args.error().c_str());
    return 2;
  }
  int code = 0;
  const bool json = JsonFormat(args, "repair", &code);
  if (code) return code;
  const std::string& dir = args.positional()[0];
  storage::RepairOptions ro;
  ro.verify = Options();
  ro.aside_dir = args.Get("aside-dir").value_or("");
  auto r = storage::Repair(dir, ro);
  if (!r.ok()) {
    std::fprintf(stderr, "vigil tsdb repair: %s\n",
                 std::string(r.status().message()).c_str());
    return 2;
  }
  const bool still = !r->after.clean();
  if (json) {
    std::printf("%s\n", storage::RepairReportJson(*r).c_str());
    return still ? 2 : r->lost.empty() ? 0 : 1;
  }
  if (r->found.clean()) {
    PrintVerify(r->found);
    std::printf("nothing to repair\n");
    return 0;
  }
  PrintVerify(r->found);
  std::printf("repair:\n");
  for (const auto& a : r->actions) std::printf("  %s\n", a.c_str());
  std::printf("lost (%zu, kept in %s):\n", r->lost.size(),
              r->aside_dir.c_str());
  for (const auto& d : r->lost) {
    std::printf("  %s%s\n", d.family.empty() ? "" : (d.family + ": ").c_str(),
                storage::FormatDamage(d).c_str());
  }
  if (still) {
    std::printf("still damaged after the repair:\n");
    PrintVerify(r->after);
    return 2;
  }
  std::printf("%s: repaired; it opens\n", dir.c_str());
  return r->lost.empty() ? 0 : 1;
}

}  // namespace vigil::cli
