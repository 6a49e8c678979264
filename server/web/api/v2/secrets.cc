#include "server/web/api/v2/secrets.h"

#include <array>
#include <vector>

namespace vigil::web::api::v2 {
namespace {

// Alertmanager 0.25's Secret / SecretURL keys, the secrets of
// prometheus/common's HTTPClientConfig (tls_config's inline `key` too),
// SigV4's secret_key, and Vigil's robot signing secret.
constexpr std::array<std::string_view, 20> kSecretKeys = {"key",
                                                          "secret_key",
                                                          "auth_password",
                                                          "auth_secret",
                                                          "smtp_auth_password",
                                                          "smtp_auth_secret",
                                                          "slack_api_url",
                                                          "api_url",
                                                          "webhook_url",
                                                          "bot_token",
                                                          "password",
                                                          "bearer_token",
                                                          "credentials",
                                                          "client_secret",
                                                          "secret",
                                                          "service_key",
                                                          "routing_key",
                                                          "api_key",
                                                          "api_secret",
                                                          "user_key"};

bool IsSecretKey(std::string_view k) {
  if (k.size() >= 2 && (k.front() == '"' || k.front() == '\'') &&
      k.back() == k.front()) {
    k = k.substr(1, k.size() - 2);
  }
  for (std::string_view s : kSecretKeys) {
    if (k == s) return true;
  }
  return k == "token";
}

bool KeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '"' || c == '\'';
}

size_t Indent(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  return i;
}

// The end of a plain or quoted scalar starting at `i`: a closing quote, or
// (unquoted) a comment, or in flow context a ',' / '}' / ']'.
size_t ValueEnd(std::string_view line, size_t i, bool flow) {
  if (i < line.size() && (line[i] == '"' || line[i] == '\'')) {
    const char q = line[i];
    for (size_t j = i + 1; j < line.size(); ++j) {
      if (q == '"' && line[j] == '\\') {
        ++j;
        continue;
      }
      if (line[j] == q) {
        if (q == '\'' && j + 1 < line.size() && line[j + 1] == '\'') {
          ++j;
          continue;
        }
        return j + 1;
      }
    }
    return line.size();
  }
  size_t j = i;
  for (; j < line.size(); ++j) {
    const char c = line[j];
    if (c == '#' && j > i && line[j - 1] == ' ') break;
    if (flow && (c == ',' || c == '}' || c == ']')) break;
  }
  while (j > i && line[j - 1] == ' ') --j;
  return j;
}

// Masks the secret values on one line; sets *block to the key's column when
// a secret is a block scalar (`|`, `>`) whose lines follow.
std::string MaskLine(std::string_view line, int* block) {
  std::string out;
  size_t copied = 0;
  int flow_depth = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '#' && (i == 0 || line[i - 1] == ' ')) break;  // a comment
    if ((c == '"' || c == '\'') && (i == 0 || !KeyChar(line[i - 1]))) {
      // A quoted key or value: jump to its end (a key's ':' comes next).
      i = ValueEnd(line, i, false) - 1;
      continue;
    }
    if (c == '{' || c == '[') ++flow_depth;
    if (c == '}' || c == ']') --flow_depth;
    if (c != ':' || (i + 1 < line.size() && line[i + 1] != ' ')) continue;
    // `c` is a mapping colon; the key is the run of key characters before.
    size_t k = i;
    while (k > 0 && KeyChar(line[k - 1])) --k;
    if (!IsSecretKey(line.substr(k, i - k))) continue;
    size_t v = i + 1;
    while (v < line.size() && line[v] == ' ') ++v;
    if (v >= line.size() || line[v] == '#') continue;  // value below: a map
    if (line[v] == '|' || line[v] == '>') *block = static_cast<int>(k);
    size_t end = (line[v] == '|' || line[v] == '>')
                     ? ValueEnd(line, v, false)
                     : ValueEnd(line, v, flow_depth > 0);
    out.append(line.substr(copied, v - copied));
    out.append("<secret>");
    copied = end;
    i = end == 0 ? 0 : end - 1;
  }
  out.append(line.substr(copied));
  return out;
}

}  // namespace

std::string MaskSecrets(std::string_view yaml) {
  std::string out;
  out.reserve(yaml.size());
  int block = -1;  // column of a secret block scalar's key, while in it
  size_t start = 0;
  while (start <= yaml.size()) {
    size_t nl = yaml.find('\n', start);
    const bool last = nl == std::string_view::npos;
    std::string_view line =
        yaml.substr(start, last ? std::string_view::npos : nl - start);
    if (block >= 0) {
      const bool blank = line.find_first_not_of(' ') == std::string_view::npos;
      if (blank || static_cast<int>(Indent(line)) > block) {
        if (last) break;
        start = nl + 1;
        continue;  // a line of the secret: dropped
      }
      block = -1;
    }
    out.append(MaskLine(line, &block));
    if (last) break;
    out.push_back('\n');
    start = nl + 1;
  }
  return out;
}

}  // namespace vigil::web::api::v2
