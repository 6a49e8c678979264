// RedactSecrets: prometheus.yml as /api/v1/status/config shows it, with
// the values of secret keys replaced by "<secret>" as Prometheus's
// config.Secret marshals them.
#include <regex>
#include <sstream>

#include "server/config/config.h"

namespace vigil::config {
namespace {

// The lists of secrets: proxy_connect_header's values (map[string][]Secret)
// and http_headers' `secrets`. Line-based, keeping the file's layout.
std::string RedactSecretLists(const std::string& yaml) {
  static const std::regex kKey(
      R"(^([ \t]*(?:-[ \t]+)?)(proxy_connect_header|secrets)[ \t]*:[ \t]*(.*)$)");
  static const std::regex kFlowList(R"(\[[^\]]*\])");
  static const std::regex kItem(R"(^([ \t]*-[ \t]+)[^#\n].*$)");
  static const std::regex kChild(R"(^([ \t]*[^\s:#-][^:]*:[ \t]*)(\S.*)$)");
  std::istringstream in(yaml);
  std::string out, line;
  int block_col = -1;  // column of the key whose values are secrets
  bool block_is_list = false;
  bool first = true;
  while (std::getline(in, line)) {
    if (!first) out += '\n';
    first = false;
    const size_t text = line.find_first_not_of(" \t");
    const bool blank = text == std::string::npos || line[text] == '#';
    if (block_col >= 0 && !blank) {
      const int col = static_cast<int>(text);
      const bool item = line.compare(text, 2, "- ") == 0;
      if (col > block_col || (block_is_list && col == block_col && item)) {
        if (item) {
          line = std::regex_replace(line, kItem, "$1<secret>");
        } else {
          std::smatch m;
          if (std::regex_match(line, m, kChild)) {
            const std::string v = m[2].str();
            line = m[1].str() + (v[0] == '[' ? "[<secret>]" : "<secret>");
          }
        }
        out += line;
        continue;
      }
      block_col = -1;
    }
    std::smatch m;
    if (std::regex_match(line, m, kKey)) {
      if (m[3].length() == 0 || m[3].str()[0] == '#') {
        block_col = static_cast<int>(m[1].length());
        block_is_list = m[2] == "secrets";
      } else {
        line = m[1].str() + m[2].str() + ": " +
               std::regex_replace(m[3].str(), kFlowList, "[<secret>]");
      }
    }
    out += line;
  }
  if (!yaml.empty() && yaml.back() == '\n') out += '\n';
  return out;
}

}  // namespace

std::string RedactSecrets(std::string_view yaml) {
  // `key: value` in block style (to the end of the line, a trailing
  // comment included) and in flow style (to the next `,` or `}`).
  static const std::regex kBlock(
      R"(((?:^|\n)[ \t]*(?:-[ \t]+)?(?:password|credentials|bearer_token|client_secret|secret_key)[ \t]*:[ \t]*)[^\n{\[][^\n]*)");
  static const std::regex kFlow(
      R"(([{,][ \t]*(?:password|credentials|bearer_token|client_secret|secret_key)[ \t]*:[ \t]*)[^,}\n]+)");
  std::string out = std::regex_replace(std::string(yaml), kBlock, "$1<secret>");
  out = std::regex_replace(out, kFlow, "$1<secret>");
  // http_headers' `secrets: [a, b]` inside a flow mapping.
  static const std::regex kFlowSecrets(
      R"(([{,][ \t]*secrets[ \t]*:[ \t]*)\[[^\]]*\])");
  out = std::regex_replace(out, kFlowSecrets, "$1[<secret>]");
  return RedactSecretLists(out);
}

}  // namespace vigil::config
