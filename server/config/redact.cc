// RedactSecrets: prometheus.yml as /api/v1/status/config shows it, with
// the values of secret keys replaced by "<secret>" as Prometheus's
// config.Secret marshals them.
#include <regex>

#include "server/config/config.h"

namespace vigil::config {

std::string RedactSecrets(std::string_view yaml) {
  // `key: value` in block style (to the end of the line, a trailing
  // comment included) and in flow style (to the next `,` or `}`).
  static const std::regex kBlock(
      R"(((?:^|\n)[ \t]*(?:-[ \t]+)?(?:password|credentials|bearer_token|client_secret|secret_key)[ \t]*:[ \t]*)[^\n{\[][^\n]*)");
  static const std::regex kFlow(
      R"(([{,][ \t]*(?:password|credentials|bearer_token|client_secret|secret_key)[ \t]*:[ \t]*)[^,}\n]+)");
  std::string out = std::regex_replace(std::string(yaml), kBlock, "$1<secret>");
  return std::regex_replace(out, kFlow, "$1<secret>");
}

}  // namespace vigil::config
