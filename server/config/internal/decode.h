// Decoding helpers shared by the prometheus.yml decoder's files: yaml.v2
// scalars (bools, uints, byte sizes), label sets, relabel rules, the
// inlined HTTP client settings and the service discoveries.
#ifndef VIGIL_SERVER_CONFIG_INTERNAL_DECODE_H_
#define VIGIL_SERVER_CONFIG_INTERNAL_DECODE_H_

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "core/goyaml/decoder.h"
#include "server/config/config.h"

namespace vigil::config::internal {

using goyaml::Field;
using goyaml::GoYamlDecoder;

// An absent key or an explicit null.
inline bool IsNullNode(const YAML::Node& n) { return !n || n.IsNull(); }

// yaml.v2 booleans (true/false, yes/no, on/off, y/n in their cases).
bool Bool(GoYamlDecoder& d, const YAML::Node& n, bool* out);
// A Go unsigned integer; `type` names it in errors ("uint", "uint64").
bool Uint(GoYamlDecoder& d, const YAML::Node& n, std::string_view type,
          uint64_t* out);
// A Go int (ports).
bool Int(GoYamlDecoder& d, const YAML::Node& n, int* out);
// alecthomas/units Base2Bytes ("10MB", "1KiB"); a bad value is fatal.
bool Bytes(GoYamlDecoder& d, const YAML::Node& n, int64_t* out);
// []string.
bool StringList(GoYamlDecoder& d, const YAML::Node& n, std::string_view type,
                std::vector<std::string>* out);
// model.LabelSet: a map whose names must be valid (fatal otherwise).
bool LabelSet(GoYamlDecoder& d, const YAML::Node& n, Labels* out);

// "line N: KEY is not supported by vigil" as the fatal error.
void Unsupported(GoYamlDecoder& d, const Field& f);
// Rejects keys ending in "_sd_configs" other than static/file/dns.
void RejectOtherSD(GoYamlDecoder& d, const YAML::Node& mapping);

// A list of relabel rules ([]*relabel.Config); null items are recorded in
// *nulls. Rules are decoded, not validated (see ValidateRelabelList).
void RelabelList(GoYamlDecoder& d, const YAML::Node& n,
                 std::vector<RelabelConfig>* out, bool* nulls);
[[nodiscard]] absl::Status ValidateRelabelList(
    const std::vector<RelabelConfig>& rules);

// The raw inlined HTTP client settings before Validate folds them.
struct RawHTTP {
  HTTPClientConfig cfg;
  std::string bearer_token, bearer_token_file;
  bool has_authorization = false;
};
// Decodes `f` if it is an HTTP client key; false if it is not one.
bool HTTPField(GoYamlDecoder& d, const Field& f, RawHTTP* h);
// prometheus/common's HTTPClientConfig.Validate (folds bearer tokens).
[[nodiscard]] absl::Status ValidateHTTP(RawHTTP* h);

// Decodes `f` if it is a service discovery key; false otherwise.
bool SDField(GoYamlDecoder& d, const Field& f, ServiceDiscovery* sd);
// checkStaticTargets: `"x/y" is not a valid hostname`.
[[nodiscard]] absl::Status CheckStaticTargets(const ServiceDiscovery& sd);

// prometheus.yml's remote_write list (remote_write.cc): decoded and
// validated per entry as RemoteWriteConfig.UnmarshalYAML, names unique.
void DecodeRemoteWrite(GoYamlDecoder& d, const YAML::Node& n,
                       std::vector<RemoteWriteConfig>* out);

// The HTTP client and SD keys of prometheus/common and Prometheus, for
// the Struct() known-key lists.
#define VIGIL_CONFIG_HTTP_KEYS                                                \
  "basic_auth", "authorization", "oauth2", "bearer_token",                    \
      "bearer_token_file", "proxy_url", "no_proxy", "proxy_from_environment", \
      "proxy_connect_header", "tls_config", "follow_redirects",               \
      "enable_http2", "http_headers"
#define VIGIL_CONFIG_SD_KEYS \
  "static_configs", "file_sd_configs", "dns_sd_configs"

}  // namespace vigil::config::internal

#endif  // VIGIL_SERVER_CONFIG_INTERNAL_DECODE_H_
