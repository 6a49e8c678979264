// prometheus.yml's `remote_write` list, decoded as Prometheus's
// RemoteWriteConfig.UnmarshalYAML (and QueueConfig.Validate) with their
// error texts; the queue name hash for entries without `name`.
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "core/go/strconv.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "server/config/config.h"
#include "server/config/internal/decode.h"

namespace vigil::config {
namespace internal {
namespace {

using goyaml::PosOf;

// Headers Prometheus will not let a config set (Go's reserved list).
const std::set<std::string>& ReservedHeaders() {
  static const auto* s = new std::set<std::string>{
      "host",
      "content-encoding",
      "content-length",
      "content-type",
      "user-agent",
      "connection",
      "keep-alive",
      "proxy-authenticate",
      "proxy-authorization",
      "www-authenticate",
      "accept-encoding",
      "x-prometheus-remote-write-version",
      "x-prometheus-remote-read-version",
      "x-amz-date",
      "x-amz-security-token",
      "x-amz-content-sha256",
  };
  return *s;
}

void DecodeQueue(GoYamlDecoder& d, const YAML::Node& n,
                 RemoteWriteQueueConfig* q) {
  auto fields =
      d.Struct(n, "config.QueueConfig",
               {"capacity", "max_shards", "min_shards", "max_samples_per_send",
                "batch_send_deadline", "min_backoff", "max_backoff",
                "retry_on_http_429", "sample_age_limit"});
  for (const Field& f : goyaml::Items(fields)) {
    const YAML::Node& v = f.value;
    if (f.key == "capacity") {
      d.Int(v, &q->capacity);
    } else if (f.key == "max_shards") {
      d.Int(v, &q->max_shards);
    } else if (f.key == "min_shards") {
      d.Int(v, &q->min_shards);
    } else if (f.key == "max_samples_per_send") {
      d.Int(v, &q->max_samples_per_send);
    } else if (f.key == "batch_send_deadline") {
      d.Duration(v, &q->batch_send_deadline_ms);
    } else if (f.key == "min_backoff") {
      d.Duration(v, &q->min_backoff_ms);
    } else if (f.key == "max_backoff") {
      d.Duration(v, &q->max_backoff_ms);
    } else if (f.key == "retry_on_http_429") {
      Bool(d, v, &q->retry_on_http_429);
    } else if (f.key == "sample_age_limit") {
      d.Duration(v, &q->sample_age_limit_ms);
    }
  }
}

void DecodeMetadata(GoYamlDecoder& d, const YAML::Node& n,
                    RemoteWriteMetadataConfig* m) {
  auto fields = d.Struct(n, "config.MetadataConfig",
                         {"send", "send_interval", "max_samples_per_send"});
  for (const Field& f : goyaml::Items(fields)) {
    if (f.key == "send") {
      Bool(d, f.value, &m->send);
    } else if (f.key == "send_interval") {
      d.Duration(f.value, &m->send_interval_ms);
    } else {
      d.Int(f.value, &m->max_samples_per_send);
    }
  }
}

// QueueConfig.Validate's checks, in its order.
std::string ValidateQueue(const RemoteWriteQueueConfig& q) {
  if (q.max_shards <= 0)
    return "remote write queue max_shards must be positive";
  if (q.min_shards <= 0)
    return "remote write queue min_shards must be positive";
  if (q.min_shards > q.max_shards) {
    return "remote write queue min_shards must not be greater than max_shards";
  }
  if (q.max_samples_per_send <= 0) {
    return "remote write queue max_samples_per_send must be positive";
  }
  if (q.capacity <= 0) return "remote write queue capacity must be positive";
  if (q.max_backoff_ms < q.min_backoff_ms) {
    return "remote write queue max_backoff must not be less than min_backoff";
  }
  return "";
}

struct Item {
  RemoteWriteConfig cfg;
  RawHTTP http;
  bool has_url = false;
  bool null_relabel = false;
  goyaml::StringMapEntries headers;
};

void DecodeField(GoYamlDecoder& d, const Field& f, Item* it) {
  RemoteWriteConfig& c = it->cfg;
  const YAML::Node& v = f.value;
  if (HTTPField(d, f, &it->http)) return;
  if (f.key == "url") {
    it->has_url = !IsNullNode(v);
    d.String(v, &c.url);
  } else if (f.key == "name") {
    d.String(v, &c.name);
  } else if (f.key == "remote_timeout") {
    d.Duration(v, &c.remote_timeout_ms);
  } else if (f.key == "headers") {
    d.StringMap(v, &it->headers);
  } else if (f.key == "write_relabel_configs") {
    RelabelList(d, v, &c.write_relabel_configs, &it->null_relabel);
  } else if (f.key == "send_exemplars") {
    Bool(d, v, &c.send_exemplars);
  } else if (f.key == "send_native_histograms") {
    Bool(d, v, &c.send_native_histograms);
  } else if (f.key == "round_robin_dns") {
    Bool(d, v, &c.round_robin_dns);
  } else if (f.key == "failed_request_logging") {
    bool ignored = false;
    Bool(d, v, &ignored);
  } else if (f.key == "protobuf_message") {
    d.String(v, &c.protobuf_message);
  } else if (f.key == "queue_config") {
    DecodeQueue(d, v, &c.queue_config);
  } else if (f.key == "metadata_config") {
    DecodeMetadata(d, v, &c.metadata_config);
  } else if (IsNullNode(v)) {
    // sigv4 / azuread / google_iam: null is "not configured".
  } else {
    Unsupported(d, f);
  }
}

// RemoteWriteConfig.UnmarshalYAML's checks after a clean decode.
std::string CheckItem(Item* it) {
  RemoteWriteConfig& c = it->cfg;
  if (!it->has_url) return "url for remote_write is empty";
  if (it->null_relabel) {
    return "empty or null relabeling rule in remote write config";
  }
  for (const auto& [f, value] : it->headers) {
    const std::string lower = absl::AsciiStrToLower(f.key);
    if (lower == "authorization") {
      return "authorization header must be changed via the basic_auth, "
             "authorization, oauth2, or sigv4 parameter";
    }
    if (ReservedHeaders().count(lower) != 0) {
      return f.key + " is a reserved header. It must not be changed";
    }
    c.headers[f.key] = value;
  }
  if (c.protobuf_message != "prometheus.WriteRequest" &&
      c.protobuf_message != "io.prometheus.write.v2.Request") {
    return fmt::format(
        "invalid protobuf_message value: unknown remote write protobuf "
        "message {}, supported: prometheus.WriteRequest, "
        "io.prometheus.write.v2.Request",
        c.protobuf_message);
  }
  if (auto st = ValidateHTTP(&it->http); !st.ok()) {
    return std::string(st.message());
  }
  c.http = it->http.cfg;
  if (std::string e = ValidateQueue(c.queue_config); !e.empty()) return e;
  // Vigil sends with libcurl over HTTP(S) only; Prometheus would accept
  // any URL here and fail on every send.
  if (!absl::StartsWith(c.url, "http://") &&
      !absl::StartsWith(c.url, "https://")) {
    return fmt::format(
        "remote_write url {}: unsupported scheme (want http:// or https://)",
        go::Quote(c.url));
  }
  return "";
}

}  // namespace

void DecodeRemoteWrite(GoYamlDecoder& d, const YAML::Node& n,
                       std::vector<RemoteWriteConfig>* out) {
  auto items = d.Sequence(n, "[]*config.RemoteWriteConfig");
  if (!items) return;
  std::set<std::string> names;
  for (const YAML::Node& item : *items) {
    if (d.fatal()) return;
    if (IsNullNode(item)) {
      return d.Fail(PosOf(item), "empty or null remote write config section");
    }
    const size_t errors_before = d.type_errors().size();
    auto fields =
        d.Struct(item, "config.plain",
                 {"url", "remote_timeout", "headers", "write_relabel_configs",
                  "name", "send_exemplars", "send_native_histograms",
                  "round_robin_dns", "protobuf_message",
                  "failed_request_logging", "queue_config", "metadata_config",
                  "sigv4", "azuread", "google_iam", VIGIL_CONFIG_HTTP_KEYS});
    if (!fields) continue;
    Item it;
    it.http.cfg.enable_http2 = false;  // DefaultRemoteWriteHTTPClientConfig
    for (const Field& f : *fields) DecodeField(d, f, &it);
    if (d.type_errors().size() != errors_before || d.fatal()) continue;
    if (std::string e = CheckItem(&it); !e.empty()) {
      return d.Fail(PosOf(item), e);
    }
    const std::string& name = it.cfg.name;
    if (!name.empty() && !names.insert(name).second) {
      return d.Fail(PosOf(item),
                    "found multiple remote write configs with job name " +
                        go::Quote(name));
    }
    out->push_back(std::move(it.cfg));
  }
}

}  // namespace internal

std::string RemoteWriteHashName(const RemoteWriteConfig& rw) {
  // Every field that changes what or how the queue sends, in a fixed
  // order; secrets are hashed too, as Prometheus hashes the whole struct.
  std::string s = fmt::format("url={}\ntimeout={}\nproto={}\n", rw.url,
                              rw.remote_timeout_ms, rw.protobuf_message);
  for (const auto& [k, v] : rw.headers) s += fmt::format("h:{}={}\n", k, v);
  for (const RelabelConfig& r : rw.write_relabel_configs) {
    s += "relabel:";
    for (const std::string& l : r.source_labels) s += l + ",";
    s += fmt::format("|{}|{}|{}|{}|{}|{}\n", r.separator, r.regex.source(),
                     r.modulus, r.target_label, r.replacement,
                     static_cast<int>(r.action));
  }
  const RemoteWriteQueueConfig& q = rw.queue_config;
  s += fmt::format("queue={},{},{},{},{},{},{},{},{}\n", q.capacity,
                   q.max_shards, q.min_shards, q.max_samples_per_send,
                   q.batch_send_deadline_ms, q.min_backoff_ms, q.max_backoff_ms,
                   q.retry_on_http_429, q.sample_age_limit_ms);
  const RemoteWriteMetadataConfig& m = rw.metadata_config;
  s += fmt::format("metadata={},{},{}\n", m.send, m.send_interval_ms,
                   m.max_samples_per_send);
  const HTTPClientConfig& h = rw.http;
  if (h.basic_auth) {
    s += fmt::format("basic={},{},{},{}\n", h.basic_auth->username,
                     h.basic_auth->username_file, h.basic_auth->password,
                     h.basic_auth->password_file);
  }
  if (h.authorization) {
    s += fmt::format("auth={},{},{}\n", h.authorization->type,
                     h.authorization->credentials,
                     h.authorization->credentials_file);
  }
  const TLSConfig& t = h.tls_config;
  s += fmt::format("tls={},{},{},{},{},{},{},{},{}\n", t.ca, t.cert, t.key,
                   t.ca_file, t.cert_file, t.key_file, t.server_name,
                   t.insecure_skip_verify, t.min_version);
  s += fmt::format("proxy={}\nredirects={}\n", h.proxy_url, h.follow_redirects);
  s += fmt::format("no_proxy={}\nproxy_env={}\n", h.no_proxy,
                   h.proxy_from_environment);
  for (const auto& [name, values] : h.proxy_connect_header) {
    s += fmt::format("proxy_header={}:{}\n", name, fmt::join(values, ","));
  }
  for (const auto& [name, hv] : h.http_headers) {
    s += fmt::format("header={}:{}|{}|{}\n", name, fmt::join(hv.values, ","),
                     fmt::join(hv.secrets, ","), fmt::join(hv.files, ","));
  }
  // FNV-1a 64 (the server links no crypto library); the top 24 bits.
  uint64_t sum = 14695981039346656037ULL;
  for (unsigned char ch : s) {
    sum ^= ch;
    sum *= 1099511628211ULL;
  }
  return fmt::format("{:06x}", sum >> 40);
}

}  // namespace vigil::config
