// alerting/template.h: the notification template set — Vigil's defaults
// and the `templates:` files, executed with Alertmanager's data model.
#include "server/alerting/template.h"

#include <fcntl.h>
#include <glob.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "rules/template/text/ast.h"
#include "rules/template/text/exec.h"
#include "rules/template/text/parser.h"
#include "server/alerting/template_data.h"

namespace vigil::alerting {

namespace tmpl = rules::tmpl;

class TemplateSet::Impl {
 public:
  // Parses `text` as the template `name` with Alertmanager's functions.
  static absl::StatusOr<std::unique_ptr<tmpl::TemplateTree>> Parse(
      std::string_view name, std::string_view text) {
    static const tmpl::HasFunction* has =
        new tmpl::HasFunction([](std::string_view fn) {
          return AlertmanagerFuncs().Find(fn) != nullptr ||
                 tmpl::LookupBuiltin(fn) != nullptr;
        });
    return tmpl::ParseTemplate(name, text, *has);
  }

  // Go's AddParseTree for the tree and its {{define}}s: a later definition
  // replaces an earlier one unless it is empty.
  void Add(std::unique_ptr<tmpl::TemplateTree> tree) {
    auto associate = [this, &tree](const std::string& name,
                                   const tmpl::Node* root) {
      auto it = library_.find(name);
      if (it != library_.end() && IsEmpty(*root)) return;
      library_[name] = tmpl::TemplateRef{root, tree.get()};
    };
    for (const auto& [name, root] : tree->defined) associate(name, root);
    associate(tree->name, tree->root.get());
    trees_.push_back(std::move(tree));
  }

  absl::StatusOr<std::string> Execute(std::string_view text,
                                      const Notification& n, bool html) const {
    if (text.empty()) return std::string();
    auto tree = Parse("", text);
    if (!tree.ok()) return tree.status();
    tmpl::FuncEnv env;
    env.funcs = &AlertmanagerFuncs();
    env.now_ms = n.now;
    env.external_url = n.external_url;
    tmpl::ExecOptions options;
    options.library = &library_;
    options.escape_html = html;
    return tmpl::ExecuteTemplate(**tree, NotificationData(n), env, options);
  }

 private:
  // Go's parse.IsEmptyTree: nothing but white space.
  static bool IsEmpty(const tmpl::Node& n) {
    if (n.type == tmpl::NodeType::kText)
      return n.text.find_first_not_of(" \t\r\n") == std::string::npos;
    if (n.type != tmpl::NodeType::kList) return false;
    for (const tmpl::NodePtr& c : n.args) {
      if (!IsEmpty(*c)) return false;
    }
    return true;
  }

  std::vector<std::unique_ptr<tmpl::TemplateTree>> trees_;
  tmpl::TemplateLibrary library_;
};

namespace {

// Go's text of an errno: strerror with a lower-case first letter
// ("no such file or directory").
std::string Errno(int err) {
  std::string s = std::strerror(err);
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z')
    s[0] = static_cast<char>(s[0] - 'A' + 'a');
  return s;
}

std::string Basename(const std::string& path) {
  size_t end = path.find_last_not_of('/');
  if (end == std::string::npos) return path.empty() ? "." : "/";
  size_t slash = path.rfind('/', end);
  return path.substr(slash == std::string::npos ? 0 : slash + 1,
                     end - (slash == std::string::npos ? 0 : slash + 1) + 1);
}

// os.ReadFile, with Go's error text ("open PATH: no such file or
// directory", "read PATH: is a directory").
absl::StatusOr<std::string> ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InvalidArgumentError(
        fmt::format("open {}: {}", path, Errno(errno)));
  }
  std::string data;
  char buf[65536];
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int err = errno;
      ::close(fd);
      return absl::InvalidArgumentError(
          fmt::format("read {}: {}", path, Errno(err)));
    }
    if (r == 0) break;
    data.append(buf, static_cast<size_t>(r));
  }
  ::close(fd);
  return data;
}

// filepath.Glob: the matches in lexical order; none is not an error.
absl::StatusOr<std::vector<std::string>> Glob(const std::string& pattern) {
  int open_brackets = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      ++i;
    } else if (pattern[i] == '[') {
      ++open_brackets;
    } else if (pattern[i] == ']' && open_brackets > 0) {
      --open_brackets;
    }
  }
  if (open_brackets > 0)
    return absl::InvalidArgumentError("syntax error in pattern");
  glob_t g;
  int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> out;
  if (rc == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  if (rc != 0 && rc != GLOB_NOMATCH) {
    return absl::InvalidArgumentError(
        fmt::format("glob {}: cannot read the directory", pattern));
  }
  return out;
}

}  // namespace

TemplateSet::TemplateSet(std::shared_ptr<const Impl> impl)
    : impl_(std::move(impl)) {}

absl::StatusOr<std::shared_ptr<const TemplateSet>> TemplateSet::Load(
    const std::vector<std::string>& files) {
  auto impl = std::make_shared<Impl>();
  auto defaults = Impl::Parse("default.tmpl", DefaultTemplates());
  if (!defaults.ok()) return defaults.status();  // a bug in Vigil
  impl->Add(std::move(*defaults));
  for (const std::string& pattern : files) {
    auto paths = Glob(pattern);
    if (!paths.ok()) return paths.status();
    for (const std::string& path : *paths) {
      auto text = ReadFile(path);
      if (!text.ok()) return text.status();
      auto tree = Impl::Parse(Basename(path), *text);
      if (!tree.ok()) return tree.status();
      impl->Add(std::move(*tree));
    }
  }
  return std::make_shared<const TemplateSet>(std::move(impl));
}

absl::StatusOr<std::string> TemplateSet::ExecuteText(
    std::string_view text, const Notification& n) const {
  return impl_->Execute(text, n, /*html=*/false);
}

absl::StatusOr<std::string> TemplateSet::ExecuteHtml(
    std::string_view text, const Notification& n) const {
  return impl_->Execute(text, n, /*html=*/true);
}

absl::Status TemplateSet::Check(std::string_view text) const {
  return Impl::Parse("", text).status();
}

}  // namespace vigil::alerting
