// amtool's commands over a local alertmanager.yml, same output and exit
// codes as amtool 0.25:
//
//   vigil check alertmanager-config FILE...   (amtool check-config)
//   vigil alertmanager routes [show] FILE     (amtool config routes show)
//   vigil alertmanager routes test FILE [--verify.receivers=a,b] [--tree]
//       label=value...                        (amtool config routes test)
//
// FILE may also be given as --config.file=FILE. Errors carry the file's
// "FILE:LINE:COL: " where amtool prints none.
#include "server/config/alertmanager.h"

#include <glob.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/labels.h"
#include "rules/template/text/funcs.h"
#include "rules/template/text/parser.h"
#include "server/alerting/route.h"
#include "server/cli/cli.h"

namespace vigil::cli {
namespace {

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// The functions a notification template may call: Go's built-ins and
// Alertmanager's (server/alerting/template.h).
bool IsTemplateFunction(std::string_view name) {
  static const std::set<std::string, std::less<>> kNames = [] {
    std::set<std::string, std::less<>> names = {
        "toUpper", "toLower",      "title",           "trimSpace",   "join",
        "match",   "reReplaceAll", "safeHtml",        "stringSlice", "date",
        "tz",      "since",        "humanizeDuration"};
    std::vector<std::pair<std::string, rules::tmpl::FuncDef>> builtins;
    rules::tmpl::AddBuiltinFuncs(&builtins);
    for (const auto& [n, def] : builtins) names.insert(n);
    return names;
  }();
  return kNames.count(name) > 0;
}

// Alertmanager's template.FromGlobs: every file a glob matches must parse
// as a Go template (globs matching nothing are fine).
std::string CheckTemplates(const std::vector<std::string>& globs) {
  for (const std::string& pattern : globs) {
    glob_t g{};
    const int rc = glob(pattern.c_str(), 0, nullptr, &g);
    std::vector<std::string> files(g.gl_pathv, g.gl_pathv + g.gl_pathc);
    globfree(&g);
    if (rc != 0 && rc != GLOB_NOMATCH) return "syntax error in pattern";
    for (const std::string& f : files) {
      std::ifstream in(f, std::ios::binary);
      if (!in) return "open " + f + ": permission denied";
      std::stringstream text;
      text << in.rdbuf();
      const std::string name = f.substr(f.rfind('/') + 1);
      auto tree =
          rules::tmpl::ParseTemplate(name, text.str(), IsTemplateFunction);
      if (!tree.ok()) return std::string(tree.status().message());
    }
  }
  return "";
}

// treeprint's layout: "." then one "├── " / "└── " line per node, children
// indented by "│" plus padding, or four spaces.
struct TreeNode {
  std::string text;
  std::vector<TreeNode> children;
};

void PrintTree(const std::vector<TreeNode>& nodes, const std::string& indent,
               std::string* out) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    const bool last = i + 1 == nodes.size();
    *out += indent + (last ? "└── " : "├── ") + nodes[i].text + "\n";
    // treeprint pads the link with two no-break spaces.
    PrintTree(nodes[i].children, indent + (last ? "    " : "│\u00a0\u00a0 "),
              out);
  }
}

std::string TreeString(const TreeNode& root) {
  std::string out = ".\n";
  PrintTree({root}, "", &out);
  return out;
}

std::string Slug(const alerting::RouteNode& r, bool show_continue,
                 bool show_receiver) {
  std::string s;
  if (r.matchers.empty()) {
    s = "default-route";
  } else {
    s = "{";
    for (size_t i = 0; i < r.matchers.size(); ++i) {
      if (i > 0) s += ',';
      s += config::am::MatcherString(r.matchers[i]);
    }
    s += "}";
  }
  if (r.continue_ && show_continue) s += "  continue: true";
  if (show_receiver) s += "  receiver: " + r.receiver;
  return s;
}

TreeNode FullTree(const alerting::RouteNode& r) {
  TreeNode n{Slug(r, true, true), {}};
  for (const auto& child : r.routes) n.children.push_back(FullTree(*child));
  return n;
}

bool MatchesAll(const alerting::RouteNode& r, const Labels& labels) {
  for (const Matcher& m : r.matchers) {
    if (!m.Matches(labels.Get(m.name()))) return false;
  }
  return true;
}

// amtool's getMatchingTree: the branches an alert walks, the receiver
// shown where it stops.
TreeNode MatchingTree(const alerting::RouteNode& r, const Labels& labels) {
  TreeNode n{Slug(r, false, false), {}};
  for (const auto& child : r.routes) {
    if (!MatchesAll(*child, labels)) continue;
    n.children.push_back(MatchingTree(*child, labels));
    if (!child->continue_) break;
  }
  if (n.children.empty()) n.text = Slug(r, false, true);
  return n;
}

int Fatal(const std::string& msg) {
  std::fprintf(stderr, "vigil: error: %s\n\n", msg.c_str());
  return 1;
}

}  // namespace

int CheckAlertmanagerConfig(const std::vector<std::string>& argv) {
  Args a(argv, {}, {});
  if (!a.ok()) return Fatal(a.error());
  std::vector<std::string> files = a.positional();
  if (files.empty()) {
    if (isatty(0)) return Fatal("Failed to read from standard input");
    files.push_back("/dev/stdin");
  }
  for (const std::string& f : files) {
    if (!Exists(f)) return Fatal("path '" + f + "' does not exist");
  }
  int failed = 0;
  for (const std::string& f : files) {
    std::printf("Checking '%s'", f.c_str());
    auto cfg = config::am::LoadAlertmanagerConfigFile(f);
    if (!cfg.ok()) {
      std::printf("  FAILED: %s\n\n",
                  std::string(cfg.status().message()).c_str());
      ++failed;
      continue;
    }
    std::printf("  SUCCESS\nFound:\n - global config\n - route\n");
    std::printf(" - %zu inhibit rules\n", cfg->inhibit_rules.size());
    std::printf(" - %zu receivers\n", cfg->receivers.size());
    std::printf(" - %zu templates\n", cfg->templates.size());
    if (!cfg->templates.empty()) {
      if (std::string err = CheckTemplates(cfg->templates); !err.empty()) {
        std::printf("  FAILED: %s\n", err.c_str());
        ++failed;
      } else {
        std::printf("  SUCCESS\n");
      }
    }
    std::printf("\n");
  }
  std::fflush(stdout);
  if (failed > 0) {
    return Fatal("failed to validate " + std::to_string(failed) + " file(s)");
  }
  return 0;
}

int AlertmanagerRoutes(const std::vector<std::string>& argv) {
  Args a(argv, {"config.file", "verify.receivers"}, {"tree"});
  if (!a.ok()) return Fatal(a.error() + ", try --help");
  std::vector<std::string> pos = a.positional();
  std::string cmd = "show";
  if (!pos.empty() && (pos[0] == "show" || pos[0] == "test")) {
    cmd = pos[0];
    pos.erase(pos.begin());
  }
  std::string file = a.Get("config.file").value_or("");
  if (file.empty()) {
    if (pos.empty())
      return Fatal("no config file given (FILE or --config.file)");
    file = pos[0];
    pos.erase(pos.begin());
  }
  if (!Exists(file)) return Fatal("path '" + file + "' does not exist");
  auto cfg = config::am::LoadAlertmanagerConfigFile(file);
  if (!cfg.ok()) return Fatal(std::string(cfg.status().message()));
  const alerting::RouteTree tree(cfg->route);
  if (cmd == "show") {
    if (!pos.empty()) return Fatal("unexpected " + pos[0] + ", try --help");
    std::printf("Routing tree:\n%s\n",
                TreeString(FullTree(tree.root())).c_str());
    return 0;
  }
  std::map<std::string, std::string> set;
  for (const std::string& l : pos) {
    auto m = config::am::ParseMatcher(l);
    if (!m.ok()) {
      return Fatal("Failed to parse labels: " +
                   std::string(m.status().message()));
    }
    if (m->type() != MatchType::kEqual) {
      return Fatal(
          "Failed to parse labels: labels must be specified as "
          "key=value pairs");
    }
    set[m->name()] = m->value();
  }
  std::vector<Label> pairs;
  for (auto& [k, v] : set) pairs.push_back({k, v});
  const Labels labels = Labels::FromSorted(std::move(pairs));
  if (a.Has("tree") && a.Get("tree") != "false") {
    std::printf("Matching routes:\n%s\n\n",
                TreeString(MatchingTree(tree.root(), labels)).c_str());
  }
  std::string receivers;
  for (const alerting::RouteNode* r : tree.Match(labels)) {
    if (!receivers.empty()) receivers += ',';
    receivers += r->receiver;
  }
  std::printf("%s\n", receivers.c_str());
  const std::string expected = a.Get("verify.receivers").value_or("");
  if (!expected.empty() && expected != receivers) {
    std::printf(
        "WARNING: Expected receivers did not match resolved receivers.\n");
    return 1;
  }
  return 0;
}

}  // namespace vigil::cli
