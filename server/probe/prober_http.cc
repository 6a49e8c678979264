// blackbox_exporter's http prober (prober/http.go), over net::ProbeHttp.
#include <algorithm>
#include <cctype>

#include "fmt/format.h"
#include "server/http_config.h"
#include "server/net/probe_client.h"
#include "server/probe/prober.h"
#include "server/probe/prober_util.h"

namespace vigil::probe {
namespace {

constexpr char kPhaseHelp[] =
    "Duration of http request by phase, summed over all redirects";

// Declares the families blackbox_exporter registers before it resolves,
// at their zero values, so a failed resolution still reports them.
void DeclareHttp(ProbeResult* r) {
  r->Declare("probe_http_duration_seconds", kPhaseHelp);
  r->Set("probe_http_content_length", "Length of http content response", 0);
  r->Set("probe_http_uncompressed_body_length",
         "Length of uncompressed response body", 0);
  r->Set("probe_http_redirects", "The number of redirects", 0);
  r->Set("probe_http_ssl", "Indicates if SSL was used for the final redirect",
         0);
  r->Set("probe_http_status_code", "Response HTTP status code", 0);
  r->Set("probe_http_version",
         "Returns the version of HTTP of the probe response", 0);
  r->Set("probe_failed_due_to_regex", "Indicates if probe failed due to regex",
         0);
}

void SetRegexFailed(ProbeResult* r, bool failed) {
  r->Set("probe_failed_due_to_regex", "Indicates if probe failed due to regex",
         failed ? 1 : 0);
}

std::vector<std::string_view> HeaderValues(const net::HeaderList& h,
                                           std::string_view name) {
  std::string lower(name);
  for (char& c : lower) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  std::vector<std::string_view> out;
  for (const auto& [k, v] : h) {
    if (k == lower) out.push_back(v);
  }
  return out;
}

bool MatchHeaders(const net::HeaderList& h, const HttpProbe& c,
                  ProbeResult* r) {
  for (const HeaderMatch& m : c.fail_if_header_matches) {
    auto values = HeaderValues(h, m.header);
    if (values.empty()) {
      if (m.allow_missing) continue;
      r->Log("error", "Missing required header", {{"header", m.header}});
      return false;
    }
    for (std::string_view v : values) {
      if (re2::RE2::PartialMatch(v, *m.regexp.re)) {
        r->Log("error", "Header matched regular expression",
               {{"header", m.header}, {"regexp", m.regexp.text}});
        return false;
      }
    }
  }
  for (const HeaderMatch& m : c.fail_if_header_not_matches) {
    auto values = HeaderValues(h, m.header);
    if (values.empty()) {
      if (m.allow_missing) continue;
      r->Log("error", "Missing required header", {{"header", m.header}});
      return false;
    }
    bool any = std::any_of(values.begin(), values.end(), [&](auto v) {
      return re2::RE2::PartialMatch(v, *m.regexp.re);
    });
    if (!any) {
      r->Log("error", "Header did not match regular expression",
             {{"header", m.header}, {"regexp", m.regexp.text}});
      return false;
    }
  }
  return true;
}

bool MatchBody(const std::string& body, const HttpProbe& c, ProbeResult* r) {
  for (const Regexp& re : c.fail_if_body_matches_regexp) {
    if (re2::RE2::PartialMatch(body, *re.re)) {
      r->Log("error", "Body matched regular expression", {{"regexp", re.text}});
      return false;
    }
  }
  for (const Regexp& re : c.fail_if_body_not_matches_regexp) {
    if (!re2::RE2::PartialMatch(body, *re.re)) {
      r->Log("error", "Body did not match regular expression",
             {{"regexp", re.text}});
      return false;
    }
  }
  return true;
}

// The status, header, body and version checks of a response, in the
// exporter's order.
bool CheckResponse(const net::ProbeHttpResult& res, const HttpProbe& c,
                   ProbeResult* r) {
  bool ok = false;
  if (!c.valid_status_codes.empty()) {
    ok = std::find(c.valid_status_codes.begin(), c.valid_status_codes.end(),
                   res.status) != c.valid_status_codes.end();
    if (!ok) {
      r->Log("info", "Invalid HTTP response status code",
             {{"status_code", std::to_string(res.status)}});
    }
  } else {
    ok = res.status >= 200 && res.status < 300;
    if (!ok) {
      r->Log("info", "Invalid HTTP response status code, wanted 2xx",
             {{"status_code", std::to_string(res.status)}});
    }
  }
  if (ok && (!c.fail_if_header_matches.empty() ||
             !c.fail_if_header_not_matches.empty())) {
    ok = MatchHeaders(res.headers, c, r);
    SetRegexFailed(r, !ok);
  }
  if (ok && (!c.fail_if_body_matches_regexp.empty() ||
             !c.fail_if_body_not_matches_regexp.empty())) {
    ok = MatchBody(res.body, c, r);
    SetRegexFailed(r, !ok);
  }
  if (!c.valid_http_versions.empty() &&
      std::find(c.valid_http_versions.begin(), c.valid_http_versions.end(),
                res.proto) == c.valid_http_versions.end()) {
    r->Log("error", "Invalid HTTP version number", {{"version", res.proto}});
    ok = false;
  }
  return ok;
}

void SetTiming(const net::ProbeHttpResult& res, ProbeResult* r) {
  auto phase = [r](const char* p, double v) {
    r->Set("probe_http_duration_seconds", kPhaseHelp, v, {{"phase", p}});
  };
  phase("connect", res.connect);
  phase("tls", res.tls_handshake);
  phase("processing", res.processing);
  phase("transfer", res.transfer);
}

void SetTls(const net::ProbeHttpResult& res, ProbeResult* r) {
  r->Set("probe_http_ssl", "Indicates if SSL was used for the final redirect",
         1);
  r->Set("probe_ssl_earliest_cert_expiry",
         "Returns last SSL chain expiry in unixtime",
         static_cast<double>(res.earliest_cert_expiry));
  r->Set("probe_ssl_last_chain_expiry_timestamp_seconds",
         "Returns last SSL chain expiry in timestamp",
         static_cast<double>(res.last_chain_expiry));
  if (!res.leaf_fingerprint.empty()) {
    r->Set("probe_ssl_last_chain_info",
           "Contains SSL leaf certificate information", 1,
           {{"fingerprint_sha256", res.leaf_fingerprint},
            {"issuer", res.leaf_issuer},
            {"subject", res.leaf_subject},
            {"subjectalternative", res.leaf_dns_names}});
  }
  r->Set("probe_tls_version_info",
         "Returns the TLS version used or NaN when unknown", 1,
         {{"version", res.tls_version}});
}

}  // namespace

bool ProbeHTTP(const ProbeParams& p, ProbeResult* r) {
  const HttpProbe& c = p.module->http;
  DeclareHttp(r);
  std::string url = p.target;
  if (url.find("://") == std::string::npos) url = "http://" + url;
  auto host = UrlHost(url);
  if (!host.ok()) {
    r->Log("error", "Could not parse target URL",
           {{"err", std::string(host.status().message())}});
    return false;
  }
  auto ip = Resolve(*host, c.prefer_ip6, c.ip_protocol_fallback, r);
  if (!ip) return false;
  r->Set("probe_http_duration_seconds", kPhaseHelp,
         r->Get("probe_dns_lookup_time_seconds"), {{"phase", "resolve"}});

  auto tmpl = server::FetchTemplate(c.client);
  if (!tmpl.ok()) {
    r->Log("error", "Error creating request",
           {{"err", std::string(tmpl.status().message())}});
    return false;
  }
  net::ProbeHttpRequest req;
  req.request = *std::move(tmpl);
  req.request.method = c.method;
  req.request.url = url;
  for (const auto& h : c.headers) req.request.headers.push_back(h);
  req.request.body = c.body;
  req.request.timeout_ms = p.timeout_ms;
  req.request.max_body_bytes = c.body_size_limit;
  req.enable_http2 = c.client.enable_http2;
  req.pin_ip = *ip;
  req.keep_body = !c.fail_if_body_matches_regexp.empty() ||
                  !c.fail_if_body_not_matches_regexp.empty();
  req.cancelled = p.cancelled;
  r->Log("info", "Making HTTP request", {{"url", url}, {"host", *host}});
  net::ProbeHttpResult res = net::ProbeHttp(req);
  SetTiming(res, r);

  bool ok = false;
  if (!res.error.empty()) {
    r->Log("error", "Error for HTTP request", {{"err", res.error}});
  } else {
    r->Log("info", "Received HTTP response",
           {{"status_code", std::to_string(res.status)}});
    ok = CheckResponse(res, c, r);
    r->Set("probe_http_version",
           "Returns the version of HTTP of the probe response", res.version);
  }
  if (res.tls) {
    SetTls(res, r);
    if (c.fail_if_ssl) {
      r->Log("error", "Final request was over SSL");
      ok = false;
    }
  } else if (c.fail_if_not_ssl) {
    r->Log("error", "Final request was not over SSL");
    ok = false;
  }
  r->Set("probe_http_status_code", "Response HTTP status code", res.status);
  r->Set("probe_http_content_length", "Length of http content response",
         static_cast<double>(res.error.empty() ? res.content_length : 0));
  r->Set("probe_http_uncompressed_body_length",
         "Length of uncompressed response body",
         static_cast<double>(res.body_bytes));
  r->Set("probe_http_redirects", "The number of redirects", res.redirects);
  return ok;
}

}  // namespace vigil::probe
