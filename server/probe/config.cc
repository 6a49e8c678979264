#include "server/probe/config.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/goyaml/decoder.h"
#include "fmt/format.h"
#include "server/config/internal/decode.h"

namespace vigil::probe {
namespace {

using config::internal::Field;
using config::internal::GoYamlDecoder;
using goyaml::PosOf;

// Go's time.ParseDuration: "10s", "1.5s", "500ms", "1m30s", "0". Returns
// false on anything else.
bool ParseGoDuration(std::string_view s, int64_t* ns) {
  if (s == "0") {
    *ns = 0;
    return true;
  }
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  double total = 0;
  while (!s.empty()) {
    size_t i = 0;
    while (i < s.size() &&
           (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) {
      ++i;
    }
    if (i == 0 || (i == 1 && s[0] == '.')) return false;
    double v = std::atof(std::string(s.substr(0, i)).c_str());
    s.remove_prefix(i);
    size_t u = 0;
    while (u < s.size() && !std::isdigit(static_cast<unsigned char>(s[u])) &&
           s[u] != '.') {
      ++u;
    }
    std::string_view unit = s.substr(0, u);
    s.remove_prefix(u);
    double mult = 0;
    if (unit == "ns") {
      mult = 1;
    } else if (unit == "us" || unit == "\u00b5s" || unit == "\u03bcs") {
      mult = 1e3;
    } else if (unit == "ms") {
      mult = 1e6;
    } else if (unit == "s") {
      mult = 1e9;
    } else if (unit == "m") {
      mult = 60e9;
    } else if (unit == "h") {
      mult = 3600e9;
    } else {
      return false;
    }
    total += v * mult;
  }
  if (total > 9.2e18) return false;
  *ns = static_cast<int64_t>(std::llround(neg ? -total : total));
  return true;
}

// A time.Duration field: a Go duration string, or an integer of
// nanoseconds (yaml.v2 decodes both).
void Duration(GoYamlDecoder& d, const YAML::Node& n, int64_t* ms) {
  if (n.IsNull()) return;
  int64_t ns = 0;
  if (!n.IsScalar()) return d.TypeMismatch(n, "time.Duration");
  const std::string tag = d.ShortTag(n);
  if (tag == "!!int") {
    uint64_t u = 0;
    if (config::internal::Uint(d, n, "time.Duration", &u)) {
      *ms = static_cast<int64_t>(u / 1000000);
    }
    return;
  }
  if (!ParseGoDuration(n.Scalar(), &ns)) {
    return d.TypeMismatch(n, "time.Duration");
  }
  *ms = ns / 1000000;
}

void Regexps(GoYamlDecoder& d, const YAML::Node& n, std::vector<Regexp>* out) {
  auto items = d.Sequence(n, "[]config.Regexp");
  for (const YAML::Node& item : goyaml::Items(items)) {
    Regexp r;
    if (!d.String(item, &r.text)) continue;
    re2::RE2::Options o;
    o.set_log_errors(false);
    auto re = std::make_shared<re2::RE2>(r.text, o);
    if (!re->ok()) {
      const auto pos = PosOf(item);
      d.Fail(pos, fmt::format("line {}: error parsing regexp `{}`: {}",
                              pos.line, r.text, re->error()));
      continue;
    }
    r.re = std::move(re);
    out->push_back(std::move(r));
  }
}

void HeaderMatches(GoYamlDecoder& d, const YAML::Node& n,
                   std::vector<HeaderMatch>* out) {
  auto items = d.Sequence(n, "[]config.HeaderMatch");
  for (const YAML::Node& item : goyaml::Items(items)) {
    HeaderMatch m;
    auto fs = d.Struct(item, "config.HeaderMatch",
                       {"header", "regexp", "allow_missing"});
    for (const Field& f : goyaml::Items(fs)) {
      if (f.key == "header") {
        d.String(f.value, &m.header);
      } else if (f.key == "regexp") {
        std::vector<Regexp> one;
        YAML::Node seq(YAML::NodeType::Sequence);
        seq.push_back(f.value);
        Regexps(d, seq, &one);
        if (!one.empty()) m.regexp = one[0];
      } else {
        config::internal::Bool(d, f.value, &m.allow_missing);
      }
    }
    if (fs && m.header.empty()) {
      const auto pos = PosOf(item);
      d.Fail(pos, fmt::format("line {}: header name must be set", pos.line));
    }
    out->push_back(std::move(m));
  }
}

void IpProtocol(GoYamlDecoder& d, const YAML::Node& n, bool* prefer_ip6) {
  std::string v;
  if (d.String(n, &v)) *prefer_ip6 = v != "ip4";
}

void DecodeHttp(GoYamlDecoder& d, const YAML::Node& n, HttpProbe* h) {
  config::internal::RawHTTP raw;
  auto fs = d.Struct(
      n, "config.HTTPProbe",
      {"valid_status_codes", "valid_http_versions", "preferred_ip_protocol",
       "ip_protocol_fallback", "skip_resolve_phase_with_proxy",
       "no_follow_redirects", "fail_if_ssl", "fail_if_not_ssl", "method",
       "headers", "fail_if_body_matches_regexp",
       "fail_if_body_not_matches_regexp", "fail_if_header_matches",
       "fail_if_header_not_matches", "body", "compression", "body_size_limit",
       VIGIL_CONFIG_HTTP_KEYS});
  bool no_follow = false;
  for (const Field& f : goyaml::Items(fs)) {
    if (d.fatal()) break;
    const std::string& k = f.key;
    if (k == "valid_status_codes") {
      auto items = d.Sequence(f.value, "[]int");
      for (const YAML::Node& i : goyaml::Items(items)) {
        int c = 0;
        if (d.Int(i, &c)) h->valid_status_codes.push_back(c);
      }
    } else if (k == "valid_http_versions") {
      config::internal::StringList(d, f.value, "[]string",
                                   &h->valid_http_versions);
    } else if (k == "preferred_ip_protocol") {
      IpProtocol(d, f.value, &h->prefer_ip6);
    } else if (k == "ip_protocol_fallback") {
      config::internal::Bool(d, f.value, &h->ip_protocol_fallback);
    } else if (k == "skip_resolve_phase_with_proxy") {
      bool ignored = false;
      config::internal::Bool(d, f.value, &ignored);
    } else if (k == "no_follow_redirects") {
      config::internal::Bool(d, f.value, &no_follow);
    } else if (k == "fail_if_ssl") {
      config::internal::Bool(d, f.value, &h->fail_if_ssl);
    } else if (k == "fail_if_not_ssl") {
      config::internal::Bool(d, f.value, &h->fail_if_not_ssl);
    } else if (k == "method") {
      d.String(f.value, &h->method);
    } else if (k == "headers") {
      goyaml::StringMapEntries es;
      if (d.StringMap(f.value, &es)) {
        for (auto& [field, v] : es) h->headers.emplace_back(field.key, v);
      }
    } else if (k == "fail_if_body_matches_regexp") {
      Regexps(d, f.value, &h->fail_if_body_matches_regexp);
    } else if (k == "fail_if_body_not_matches_regexp") {
      Regexps(d, f.value, &h->fail_if_body_not_matches_regexp);
    } else if (k == "fail_if_header_matches") {
      HeaderMatches(d, f.value, &h->fail_if_header_matches);
    } else if (k == "fail_if_header_not_matches") {
      HeaderMatches(d, f.value, &h->fail_if_header_not_matches);
    } else if (k == "body") {
      d.String(f.value, &h->body);
    } else if (k == "compression") {
      std::string c;
      if (d.String(f.value, &c) && !c.empty())
        config::internal::Unsupported(d, f);
    } else if (k == "body_size_limit") {
      config::internal::Bytes(d, f.value, &h->body_size_limit);
    } else {
      config::internal::HTTPField(d, f, &raw);
    }
  }
  if (h->method.empty()) h->method = "GET";
  if (!fs || d.failed()) return;
  if (absl::Status st = config::internal::ValidateHTTP(&raw); !st.ok()) {
    const auto pos = PosOf(n);
    d.Fail(pos,
           fmt::format("line {}: {}", pos.line, std::string(st.message())));
  }
  h->client = raw.cfg;
  if (no_follow) h->client.follow_redirects = false;
}

void DecodeTcp(GoYamlDecoder& d, const YAML::Node& n, TcpProbe* t) {
  auto fs =
      d.Struct(n, "config.TCPProbe",
               {"preferred_ip_protocol", "ip_protocol_fallback",
                "source_ip_address", "query_response", "tls", "tls_config"});
  for (const Field& f : goyaml::Items(fs)) {
    if (f.key == "preferred_ip_protocol") {
      IpProtocol(d, f.value, &t->prefer_ip6);
    } else if (f.key == "ip_protocol_fallback") {
      config::internal::Bool(d, f.value, &t->ip_protocol_fallback);
    } else if (f.key == "tls") {
      bool on = false;
      if (config::internal::Bool(d, f.value, &on) && on) {
        config::internal::Unsupported(d, f);
      }
    } else if (!f.value.IsNull()) {
      // source_ip_address, query_response, tls_config.
      config::internal::Unsupported(d, f);
    }
  }
}

void DecodeModule(GoYamlDecoder& d, const Field& entry, Module* m) {
  auto fs =
      d.Struct(entry.value, "config.Module",
               {"prober", "timeout", "http", "tcp", "icmp", "dns", "grpc"});
  // Where `prober` is, taken in the loop: the loop's fields are a copy that
  // ends with it (a pointer kept past it read freed memory: ASan).
  std::optional<goyaml::SourcePos> prober_pos;
  for (const Field& f : goyaml::Items(fs)) {
    if (d.fatal()) break;
    if (f.key == "prober") {
      d.String(f.value, &m->prober);
      prober_pos = PosOf(f.value);
    } else if (f.key == "timeout") {
      Duration(d, f.value, &m->timeout_ms);
    } else if (f.key == "http") {
      DecodeHttp(d, f.value, &m->http);
    } else if (f.key == "tcp") {
      DecodeTcp(d, f.value, &m->tcp);
    } else if (!f.value.IsNull()) {
      config::internal::Unsupported(d, f);  // icmp, dns, grpc sections
    }
  }
  if (!fs || d.failed()) return;
  const goyaml::SourcePos pos =
      prober_pos ? *prober_pos : PosOf(entry.key_node);
  if (m->prober == "http" || m->prober == "tcp") return;
  if (m->prober == "icmp" || m->prober == "dns" || m->prober == "grpc") {
    d.Fail(pos, fmt::format("line {}: prober {} is not supported by vigil "
                            "(module {:?}; http and tcp are)",
                            pos.line, m->prober, entry.key));
  } else if (m->prober.empty()) {
    d.Fail(pos, fmt::format("line {}: module {:?} has no prober", pos.line,
                            entry.key));
  } else {
    d.Fail(pos, fmt::format("line {}: unknown prober {:?} in module {:?}",
                            pos.line, m->prober, entry.key));
  }
}

// "line 3: text" -> "FILE:3:COL: text".
std::string Located(std::string_view file, const goyaml::TypeError& e) {
  std::string_view text = e.text;
  if (text.rfind("line ", 0) == 0) {
    size_t colon = text.find(": ");
    if (colon != std::string_view::npos) text.remove_prefix(colon + 2);
  }
  return fmt::format("{}:{}:{}: {}", file, e.pos.line, e.pos.column, text);
}

void JoinFiles(ProbeConfig* c, std::string_view dir) {
  for (auto& [name, m] : c->modules) {
    config::HTTPClientConfig& h = m.http.client;
    for (std::string* p : {&h.tls_config.ca_file, &h.tls_config.cert_file,
                           &h.tls_config.key_file}) {
      *p = config::JoinDir(dir, *p);
    }
    if (h.basic_auth) {
      h.basic_auth->password_file =
          config::JoinDir(dir, h.basic_auth->password_file);
      h.basic_auth->username_file =
          config::JoinDir(dir, h.basic_auth->username_file);
    }
    if (h.authorization) {
      h.authorization->credentials_file =
          config::JoinDir(dir, h.authorization->credentials_file);
    }
  }
}

}  // namespace

absl::StatusOr<ProbeConfig> ParseProbeConfig(std::string_view yaml,
                                             std::string_view filename) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("{}:{}:{}: yaml: {}",
                                                  filename, e.mark.line + 1,
                                                  e.mark.column + 1, e.msg));
  }
  if (auto open = goyaml::FindUnterminatedQuote(yaml, root)) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}:{}: yaml: found unexpected end of stream", filename,
                    open->line, open->column));
  }
  ProbeConfig c;
  GoYamlDecoder d(yaml);
  d.set_yaml_v2(true);
  auto top = d.Struct(root, "config.plain", {"modules"});
  for (const Field& f : goyaml::Items(top)) {
    if (f.value.IsNull()) continue;
    if (!f.value.IsMap()) {
      d.TypeMismatch(f.value, "map[string]config.Module");
      continue;
    }
    for (auto it = f.value.begin(); it != f.value.end(); ++it) {
      if (c.modules.count(it->first.Scalar()) != 0) {
        const auto pos = PosOf(it->first);
        d.Fail(pos, fmt::format("line {}: key {:?} already set in map",
                                pos.line, it->first.Scalar()));
        break;
      }
      Field entry{it->first.Scalar(), it->first, it->second};
      Module m;
      DecodeModule(d, entry, &m);
      m.yaml = YAML::Dump(entry.value);
      c.modules[entry.key] = std::move(m);
      if (d.fatal()) break;
    }
  }
  std::vector<goyaml::TypeError> errors = d.type_errors();
  if (d.fatal()) errors.insert(errors.begin(), *d.fatal());
  if (!errors.empty()) {
    std::string out;
    for (const auto& e : errors) {
      if (!out.empty()) out += "\n";
      out += Located(filename, e);
    }
    return absl::InvalidArgumentError(out);
  }
  return c;
}

absl::StatusOr<ProbeConfig> LoadProbeConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(fmt::format(
        "error loading probe config file {:?}: cannot read it", path));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto c = ParseProbeConfig(ss.str(), path);
  if (!c.ok()) return c.status();
  size_t slash = path.rfind('/');
  JoinFiles(&*c, slash == std::string::npos ? "" : path.substr(0, slash));
  return c;
}

}  // namespace vigil::probe
