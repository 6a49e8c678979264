// `vigil calibrate`: proposes alert thresholds from load-test and
// production windows (server/calibrate/, docs/calibration.md).
#include "server/calibrate/calibrate.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "fmt/format.h"
#include "promql/engine.h"
#include "rules/rule_file.h"
#include "server/calibrate/output.h"
#include "server/calibrate/source.h"
#include "server/cli/cli.h"
#include "storage/db.h"

namespace vigil::cli {

namespace {

constexpr char kCalibrateUsage[] =
    "usage: vigil calibrate (--storage.tsdb.path=DIR | --server=URL)\n"
    "         --window=NAME=START..END [--window=...]  (RFC 3339 or Unix "
    "seconds)\n"
    "         [--rules=FILE]... [--recording-rules=FILE]... "
    "[--baseline=NAME]\n"
    "         [--step=15s] [--warning-fraction=0.75] [--slo=ALERT=VALUE]...\n"
    "         [--capacity-metric=EXPR] [--concurrency-metric=EXPR]\n"
    "         [--write=DIR] [--ledger=FILE] [--author=NAME] [-o json]\n";

int CalibrateFail(const std::string& msg, int code = 2) {
  std::fprintf(stderr, "error: %s\n", msg.c_str());
  return code;
}

}  // namespace

int Calibrate(const std::vector<std::string>& argv) {
  Args a(argv,
         {"storage.tsdb.path", "server", "window", "rules", "recording-rules",
          "baseline", "step", "warning-fraction", "slo", "capacity-metric",
          "concurrency-metric", "write", "ledger", "author", "o", "output"},
         {});
  if (!a.ok() || !a.positional().empty()) {
    std::fprintf(stderr, "%s%s\n", kCalibrateUsage,
                 a.ok() ? ("unexpected argument: " + a.positional()[0]).c_str()
                        : a.error().c_str());
    return 2;
  }
  auto path = a.Get("storage.tsdb.path");
  auto server = a.Get("server");
  if (path.has_value() == server.has_value()) {
    std::fputs(kCalibrateUsage, stderr);
    return CalibrateFail(
        "give exactly one of --storage.tsdb.path and --server");
  }
  calibrate::Options opts;
  for (const auto& w : a.GetAll("window")) {
    auto win = calibrate::ParseWindow(w);
    if (!win.ok()) return CalibrateFail(std::string(win.status().message()));
    opts.windows.push_back(*win);
  }
  if (opts.windows.empty()) {
    std::fputs(kCalibrateUsage, stderr);
    return CalibrateFail(
        "no --window given (want at least one NAME=START..END)");
  }
  opts.baseline = a.Get("baseline").value_or("");
  if (auto s = a.Get("step")) {
    auto d = ParseDuration(*s);
    if (!d.ok() || *d <= 0)
      return CalibrateFail(
          fmt::format("--step \"{}\": not a positive duration", *s));
    opts.step_ms = *d;
  }
  if (auto f = a.Get("warning-fraction")) {
    char* end = nullptr;
    opts.warning_fraction = std::strtod(f->c_str(), &end);
    if (f->empty() || *end != '\0')
      return CalibrateFail(
          fmt::format("--warning-fraction \"{}\": not a number", *f));
  }
  for (const auto& s : a.GetAll("slo")) {
    size_t eq = s.rfind('=');
    char* end = nullptr;
    double v =
        eq == std::string::npos ? 0 : std::strtod(s.c_str() + eq + 1, &end);
    if (eq == std::string::npos || eq == 0 || end == s.c_str() + eq + 1 ||
        *end != '\0')
      return CalibrateFail(fmt::format(
          "--slo \"{}\": want ALERT=VALUE or EXPR=VALUE (a number)", s));
    opts.slo[s.substr(0, eq)] = v;
  }
  if (auto m = a.Get("capacity-metric")) opts.capacity_metric = *m;
  if (auto m = a.Get("concurrency-metric")) opts.concurrency_metric = *m;

  std::vector<std::string> rule_files = a.GetAll("rules");
  if (rule_files.empty()) rule_files.push_back("examples/llm/rules/alerts.yml");
  std::vector<std::string> rec_files = a.GetAll("recording-rules");
  if (rec_files.empty()) {
    auto sib =
        std::filesystem::path(rule_files[0]).parent_path() / "recording.yml";
    if (std::filesystem::exists(sib)) rec_files.push_back(sib.string());
  }
  std::vector<rules::RuleGroup> groups;
  for (const auto& f : rule_files) {
    auto g = rules::LoadRuleFile(f);
    if (!g.ok()) return CalibrateFail(std::string(g.status().message()), 1);
    for (auto& x : *g) groups.push_back(std::move(x));
  }
  for (const auto& f : rec_files) {
    auto g = rules::LoadRuleFile(f);
    if (!g.ok()) return CalibrateFail(std::string(g.status().message()), 1);
    for (const auto& grp : *g)
      for (const auto& r : grp.rules)
        if (r.kind == rules::RuleKind::kRecording)
          opts.recording[r.name] = r.expr_text;
  }
  for (const auto& grp : groups)
    for (const auto& r : grp.rules)
      if (r.kind == rules::RuleKind::kRecording)
        opts.recording[r.name] = r.expr_text;

  std::string format = a.Get("o").value_or(a.Get("output").value_or("text"));
  if (format != "text" && format != "json")
    return CalibrateFail(fmt::format("-o \"{}\": want text or json", format));

  std::unique_ptr<storage::DB> db;
  promql::Engine engine;
  std::unique_ptr<calibrate::QuerySource> src;
  if (path) {
    storage::Options so;
    so.read_only = true;
    so.create_if_missing = false;
    auto d = storage::DB::Open(so, *path);
    if (!d.ok())
      return CalibrateFail(fmt::format("--storage.tsdb.path {}: {}", *path,
                                       std::string(d.status().message())),
                           1);
    db = *std::move(d);
    src = calibrate::DbSource(db.get(), &engine, *path);
  } else {
    if (server->rfind("http://", 0) != 0 && server->rfind("https://", 0) != 0)
      return CalibrateFail(
          fmt::format("--server \"{}\": want http:// or https://", *server));
    src = calibrate::HttpSource(*server);
  }
  auto c = calibrate::Run(groups, opts, src.get());
  if (!c.ok()) return CalibrateFail(std::string(c.status().message()));
  std::fputs(format == "json" ? calibrate::FormatJson(*c).c_str()
                              : calibrate::FormatTable(*c).c_str(),
             stdout);

  if (auto dir = a.Get("write")) {
    std::error_code ec;
    std::filesystem::create_directories(*dir, ec);
    std::string out = (std::filesystem::path(*dir) /
                       std::filesystem::path(rule_files[0]).filename())
                          .string();
    {
      std::ofstream f(out);
      f << calibrate::ProposedRuleFile(groups, *c);
      if (!f) return CalibrateFail("cannot write " + out, 1);
    }
    calibrate::LedgerEntry e;
    const char* user = std::getenv("USER");
    e.who = a.Get("author").value_or(user ? user : "unknown");
    e.when_ms = int64_t(std::time(nullptr)) * 1000;
    e.rule_file = rule_files[0];
    e.written = out;
    std::string ledger = a.Get("ledger").value_or(
        (std::filesystem::path(*dir) / "thresholds-ledger.yml").string());
    std::ofstream l(ledger, std::ios::app);
    l << calibrate::LedgerYaml(*c, e);
    if (!l) return CalibrateFail("cannot append to " + ledger, 1);
    std::fprintf(stderr, "wrote %s; ledger entry appended to %s\n", out.c_str(),
                 ledger.c_str());
  }
  for (const auto& r : c->rows)
    if (!r.error.empty()) return 1;
  return 0;
}

}  // namespace vigil::cli
