// `vigil check rules FILE...` and `vigil check config FILE...`: promtool
// 2.42's `check rules` / `check config`, same output on the same streams and
// the same exit codes:
//
//   stdout: "Checking FILE", "  SUCCESS: N rules found", blank separators;
//   stderr: "  FAILED:" then one line per error ("FILE: 5:15: group ...");
//   exit 0 when every file is valid, 1 on any error. The duplicate-rule
//   lint (`--lint=duplicate-rules`, the default; `all`; `none`) prints a
//   FAILED block but exits 0, or 3 with `--lint-fatal`.
//
// Rule-file errors also carry a "LINE:COL: " where promtool has none (see
// rules/rule_file.h), and YAML syntax errors have yaml-cpp's wording.
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/go/path.h"
#include "core/go/strconv.h"
#include "core/labels.h"
#include "fmt/format.h"
#include "rules/rule_file.h"
#include "server/cli/cli.h"
#include "server/config/config.h"
#include "server/config/file_sd.h"

namespace vigil::cli {
namespace {

using rules::ParsedRuleFile;

struct LintSettings {
  bool duplicate_rules = false;
  bool fatal = false;
};

// promtool's newLintConfig: comma-separated; unknown options only warn.
LintSettings ParseLint(const Args& a) {
  LintSettings ls;
  ls.fatal = a.Has("lint-fatal") && a.Get("lint-fatal") != "false";
  const std::string value = a.Get("lint").value_or("duplicate-rules");
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(',', start);
    if (end == std::string::npos) end = value.size();
    const std::string item = value.substr(start, end - start);
    if (item == "all" || item == "duplicate-rules") {
      ls.duplicate_rules = true;
    } else if (item != "none") {
      std::printf("WARNING: unknown lint option %s\n", item.c_str());
    }
    start = end + 1;
  }
  return ls;
}

struct RuleKey {
  std::string metric;
  Labels labels;
};

int CompareKeys(const RuleKey& a, const RuleKey& b) {
  if (int c = a.metric.compare(b.metric); c != 0) return c < 0 ? -1 : 1;
  return Compare(a.labels, b.labels);
}

// promtool's checkDuplicates: rules with the same name and labels, each
// reported once, in sorted order.
std::vector<RuleKey> FindDuplicates(const ParsedRuleFile& f) {
  std::vector<RuleKey> all, dups;
  for (const auto& g : f.groups) {
    for (const auto& r : g.rules) all.push_back({r.name, r.labels});
  }
  if (all.size() < 2) return dups;
  std::sort(all.begin(), all.end(), [](const RuleKey& a, const RuleKey& b) {
    return CompareKeys(a, b) < 0;
  });
  for (size_t i = 1; i < all.size(); ++i) {
    if (CompareKeys(all[i - 1], all[i]) != 0) continue;
    if (dups.empty() || CompareKeys(all[i - 1], dups.back()) != 0) {
      dups.push_back(all[i]);
    }
  }
  return dups;
}

std::string DuplicatesText(const std::vector<RuleKey>& dups) {
  std::string s =
      fmt::format("lint error {} duplicate rule(s) found.\n", dups.size());
  for (const auto& d : dups) {
    s += fmt::format("Metric: {}\nLabel(s):\n", d.metric);
    for (const auto& l : d.labels)
      s += fmt::format("\t{}: {}\n", l.name, l.value);
  }
  return s + "Might cause inconsistency while recording expressions";
}

struct FileVerdict {
  bool failed = false;
  bool has_errors = false;  // failed for more than a lint
};

// promtool's checkRules plus its caller's printing; `indent` is the
// prefix of each error line ("" for check rules, "     " for check config).
FileVerdict CheckRuleFile(const std::string& path, const LintSettings& ls,
                          const char* indent) {
  std::printf("Checking %s\n", path.c_str());
  const ParsedRuleFile parsed = rules::ReadRuleFile(path);
  FileVerdict v;
  std::vector<std::string> lines;
  if (!parsed.ok()) {
    for (const auto& e : parsed.errors) lines.push_back(e.ToString());
    v.failed = v.has_errors = true;
  } else if (ls.duplicate_rules) {
    if (auto dups = FindDuplicates(parsed); !dups.empty()) {
      lines.push_back(DuplicatesText(dups));
      v.failed = true;
    }
  }
  if (v.failed) {
    std::fflush(stdout);
    std::fputs("  FAILED:\n", stderr);
    for (const auto& l : lines)
      std::fprintf(stderr, "%s%s\n", indent, l.c_str());
    std::fflush(stderr);
  } else {
    std::printf("  SUCCESS: %zu rules found\n", parsed.RuleCount());
  }
  std::printf("\n");
  return v;
}

int ExitCode(bool failed, bool has_errors, const LintSettings& ls) {
  if (failed && has_errors) return 1;
  if (failed && ls.fatal) return 3;
  return 0;
}

// kingpin's ExistingFiles check, which runs before any output.
bool CheckExisting(const std::vector<std::string>& files, const char* what) {
  if (files.empty()) {
    std::fprintf(
        stderr,
        "vigil: error: required argument '%s' not provided, try --help\n",
        what);
    return false;
  }
  for (const auto& f : files) {
    struct stat st;
    if (stat(f.c_str(), &st) != 0) {
      std::fprintf(stderr,
                   "vigil: error: path '%s' does not exist, try --help\n",
                   f.c_str());
      return false;
    }
    if (S_ISDIR(st.st_mode)) {
      std::fprintf(stderr, "vigil: error: '%s' is a directory, try --help\n",
                   f.c_str());
      return false;
    }
  }
  return true;
}

// One character of a Go filepath.Match class at s[*i]; false if malformed.
bool GoClassChar(const std::string& s, size_t* i) {
  if (*i >= s.size() || s[*i] == '-' || s[*i] == ']') return false;
  if (s[*i] == '\\' && ++*i >= s.size()) return false;
  ++*i;
  while (*i < s.size() && (static_cast<unsigned char>(s[*i]) & 0xC0) == 0x80)
    ++*i;
  return true;
}

// Whether `p` is a well-formed Go filepath.Match pattern (glob(3) takes
// an unclosed '[' literally; Go's Glob fails with ErrBadPattern).
bool GoPatternOk(const std::string& p) {
  size_t i = 0;
  while (i < p.size()) {
    if (p[i] == '\\') {
      if (i + 1 >= p.size()) return false;
      i += 2;
    } else if (p[i] == '[') {
      ++i;
      if (i < p.size() && p[i] == '^') ++i;
      for (int nrange = 0;; ++nrange) {
        if (i < p.size() && p[i] == ']' && nrange > 0) {
          ++i;
          break;
        }
        if (!GoClassChar(p, &i)) return false;
        if (i < p.size() && p[i] == '-') {
          ++i;
          if (!GoClassChar(p, &i)) return false;
        }
      }
    } else {
      ++i;
    }
  }
  return true;
}

// The rule files a config names: patterns joined to the config's directory
// and globbed; a pattern without '*' must match an existing file.
bool ResolveRuleFiles(const std::string& /*config_path*/,
                      const std::vector<std::string>& patterns,
                      std::vector<std::string>* files, std::string* err) {
  for (const std::string& rf : patterns) {
    const std::string& pat = rf;  // already joined to the config's dir
    if (!GoPatternOk(pat)) {
      *err = "syntax error in pattern";
      return false;
    }
    glob_t g{};
    const int rc = glob(pat.c_str(), GLOB_PERIOD, nullptr, &g);
    std::vector<std::string> matches;
    if (rc == 0) matches.assign(g.gl_pathv, g.gl_pathv + g.gl_pathc);
    globfree(&g);
    if (rc != 0 && rc != GLOB_NOMATCH) {
      *err = "syntax error in pattern";
      return false;
    }
    if (rf.find('*') == std::string::npos && matches.empty()) {
      *err = go::Quote(pat) + " does not point to an existing file";
      return false;
    }
    files->insert(files->end(), matches.begin(), matches.end());
  }
  return true;
}

// Go's os.Stat error for a missing file ("stat f: no such file or
// directory"), or "" when `path` is empty or exists.
std::string StatError(const std::string& path) {
  struct stat st;
  if (path.empty() || stat(path.c_str(), &st) == 0) return "";
  return fmt::format(
      "stat {}: {}", path,
      errno == EACCES ? "permission denied" : "no such file or directory");
}

// promtool's checks of the files a scrape or Alertmanager config names:
// credentials and TLS files exist, file_sd files parse (a missing one is
// a WARNING on stdout).
bool CheckHTTPFiles(const config::HTTPClientConfig& h, std::string* err) {
  if (h.authorization) {
    const std::string& f = h.authorization->credentials_file;
    if (std::string e = StatError(f); !e.empty()) {
      *err = fmt::format(
          "error checking authorization credentials or bearer token file "
          "{}: {}",
          go::Quote(f), e);
      return false;
    }
  }
  const config::TLSConfig& t = h.tls_config;
  if (std::string e = StatError(t.cert_file); !e.empty()) {
    *err = fmt::format("error checking client cert file {}: {}",
                       go::Quote(t.cert_file), e);
    return false;
  }
  if (std::string e = StatError(t.key_file); !e.empty()) {
    *err = fmt::format("error checking client key file {}: {}",
                       go::Quote(t.key_file), e);
    return false;
  }
  return true;
}

bool CheckFileSD(const config::ServiceDiscovery& sd, const std::string& where,
                 std::string* err) {
  for (const config::FileSDConfig& c : sd.file_sd_configs) {
    for (const std::string& pattern : c.files) {
      const auto files = config::ListFileSDFiles({pattern}, ".");
      if (files.empty()) {
        std::printf("  WARNING: file %s for file_sd in %s does not exist\n",
                    go::Quote(pattern).c_str(), where.c_str());
        continue;
      }
      for (const std::string& f : files) {
        auto groups = config::ReadFileSDFile(f);
        if (!groups.ok()) {
          *err = fmt::format("checking SD file {}: {}", go::Quote(pattern),
                             std::string(groups.status().message()));
          return false;
        }
      }
    }
  }
  return true;
}

bool CheckReferencedFiles(const config::Config& cfg, bool syntax_only,
                          std::string* err) {
  if (syntax_only) return true;
  for (const config::ScrapeConfig& s : cfg.scrape_configs) {
    if (!CheckHTTPFiles(s.http, err)) return false;
    if (!CheckFileSD(s.sd, "scrape job " + go::Quote(s.job_name), err)) {
      return false;
    }
  }
  for (const config::AlertmanagerConfig& am : cfg.alerting.alertmanagers) {
    if (!CheckFileSD(am.sd, "alertmanager config", err)) return false;
  }
  return true;
}

// promtool's checkConfig: prints "Checking"; returns the rule files.
bool CheckConfigFile(const std::string& path, bool syntax_only,
                     std::vector<std::string>* rule_files, std::string* err) {
  std::printf("Checking %s\n", path.c_str());
  auto cfg = config::LoadConfigFile(path);
  if (!cfg.ok()) {
    *err = std::string(cfg.status().message());
    return false;
  }
  if (!syntax_only &&
      !ResolveRuleFiles(path, cfg->rule_files, rule_files, err)) {
    return false;
  }
  return CheckReferencedFiles(*cfg, syntax_only, err);
}

}  // namespace

int CheckRules(const std::vector<std::string>& args) {
  Args a(args, {"lint"}, {"lint-fatal"});
  if (!a.ok()) {
    std::fprintf(stderr, "vigil: error: %s, try --help\n", a.error().c_str());
    return 1;
  }
  if (!CheckExisting(a.positional(), "rule-files")) return 1;
  const LintSettings ls = ParseLint(a);
  bool failed = false, has_errors = false;
  for (const auto& f : a.positional()) {
    const FileVerdict v = CheckRuleFile(f, ls, "");
    failed = failed || v.failed;
    has_errors = has_errors || v.has_errors;
  }
  return ExitCode(failed, has_errors, ls);
}

int CheckConfig(const std::vector<std::string>& args) {
  Args a(args, {"lint"}, {"lint-fatal", "syntax-only", "agent"});
  if (!a.ok()) {
    std::fprintf(stderr, "vigil: error: %s, try --help\n", a.error().c_str());
    return 1;
  }
  if (!CheckExisting(a.positional(), "config-files")) return 1;
  const LintSettings ls = ParseLint(a);
  const bool syntax_only =
      a.Has("syntax-only") && a.Get("syntax-only") != "false";
  bool failed = false, has_errors = false;
  for (const auto& f : a.positional()) {
    std::vector<std::string> rule_files;
    std::string err;
    if (!CheckConfigFile(f, syntax_only, &rule_files, &err)) {
      std::fflush(stdout);
      std::fprintf(stderr, "  FAILED: %s\n", err.c_str());
      std::fflush(stderr);
      failed = has_errors = true;
      rule_files.clear();
    } else {
      if (!rule_files.empty()) {
        std::printf("  SUCCESS: %zu rule files found\n", rule_files.size());
      }
      std::printf(" SUCCESS: %s is valid prometheus config file syntax\n",
                  f.c_str());
    }
    std::printf("\n");
    for (const auto& rf : rule_files) {
      const FileVerdict v = CheckRuleFile(rf, ls, "     ");
      failed = failed || v.failed;
      has_errors = has_errors || v.has_errors;
    }
  }
  return ExitCode(failed, has_errors, ls);
}

}  // namespace vigil::cli
