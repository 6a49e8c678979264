// -----------------------------------------------------------------------------
// File: probe/config.h
// -----------------------------------------------------------------------------
//
// probes.yml (--probe.config.file) in blackbox_exporter's own format:
//
//   modules:
//     llm_completion:
//       prober: http
//       timeout: 10s
//       http:
//         method: POST
//         headers: {Content-Type: application/json}
//         body: '{"model":"m","prompt":"ping","max_tokens":1}'
//         valid_status_codes: [200]
//         fail_if_body_not_matches_regexp: ['"choices"']
//     port_open:
//       prober: tcp
//       timeout: 3s
//
// Decoded strictly with yaml.v2's semantics, as blackbox_exporter decodes
// it (unknown keys are errors); every error names the file, line and
// column. The http and tcp probers are implemented; icmp, dns and grpc, the
// http `compression` option and the tcp `query_response` / `tls` options
// are "not supported by vigil" errors.
#ifndef VIGIL_SERVER_PROBE_CONFIG_H_
#define VIGIL_SERVER_PROBE_CONFIG_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "re2/re2.h"
#include "server/config/config.h"

namespace vigil::probe {

// A regexp of probes.yml, compiled at load (Go RE2 syntax, unanchored).
struct Regexp {
  std::string text;
  std::shared_ptr<const re2::RE2> re;
};

// fail_if_header_matches / fail_if_header_not_matches entries.
struct HeaderMatch {
  std::string header;
  Regexp regexp;
  bool allow_missing = false;
};

struct HttpProbe {
  // Default: empty (any 2xx)
  std::vector<int> valid_status_codes;
  // "HTTP/1.1", "HTTP/2.0"... Default: empty (any)
  std::vector<std::string> valid_http_versions;
  // "ip4" or "ip6" (anything else is ip6, as in blackbox_exporter).
  // Default: ip6, falling back to ip4.
  bool prefer_ip6 = true;
  bool ip_protocol_fallback = true;
  bool fail_if_ssl = false;
  bool fail_if_not_ssl = false;
  std::string method = "GET";  // Default: GET
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::vector<Regexp> fail_if_body_matches_regexp;
  std::vector<Regexp> fail_if_body_not_matches_regexp;
  std::vector<HeaderMatch> fail_if_header_matches;
  std::vector<HeaderMatch> fail_if_header_not_matches;
  // Bytes of body read at most; more fails the probe. Default: 0 (no limit)
  int64_t body_size_limit = 0;
  // The inlined HTTP client settings (tls_config, basic_auth, bearer
  // token (folded into authorization), proxy_url, follow_redirects,
  // enable_http2), as prometheus.yml's.
  config::HTTPClientConfig client;
};

struct TcpProbe {
  bool prefer_ip6 = true;  // Default: ip6, falling back to ip4
  bool ip_protocol_fallback = true;
};

struct Module {
  std::string prober;      // "http" or "tcp"
  int64_t timeout_ms = 0;  // Default: 0 (the scrape's timeout decides)
  HttpProbe http;
  TcpProbe tcp;
  std::string yaml;  // the module as written, re-emitted (debug=true)
};

struct ProbeConfig {
  std::map<std::string, Module> modules;
};

// Decodes probes.yml text. InvalidArgument "FILE:LINE:COL: what" (one line
// per problem) for YAML syntax, unknown keys, wrong types, bad durations
// and regexps, and unsupported probers or options.
absl::StatusOr<ProbeConfig> ParseProbeConfig(std::string_view yaml,
                                             std::string_view filename);

// Reads and decodes `path`; relative secret and TLS files in it are joined
// to its directory. InvalidArgument as above, or naming an unreadable file.
absl::StatusOr<ProbeConfig> LoadProbeConfigFile(const std::string& path);

}  // namespace vigil::probe

#endif  // VIGIL_SERVER_PROBE_CONFIG_H_
