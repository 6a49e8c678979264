// -----------------------------------------------------------------------------
// File: net/proxy_select.h
// -----------------------------------------------------------------------------
//
// Which proxy a request goes through, as Go's net/http decides it for
// prometheus/common's HTTP client: proxy_url alone proxies everything
// (http.ProxyURL); proxy_url with no_proxy, or proxy_from_environment,
// follow golang.org/x/net/http/httpproxy: "localhost" and loopback IPs are
// never proxied, NO_PROXY entries exclude hosts ("*" all; "example.com" the
// name and its subdomains; ".example.com" and "*.example.com" subdomains
// only; IPs and CIDRs; any of them with ":port"), and from the environment
// https URLs use HTTPS_PROXY, http ones HTTP_PROXY (not under CGI, where
// REQUEST_METHOD is set), each upper-case first, then lower-case.
#ifndef VIGIL_SERVER_NET_PROXY_SELECT_H_
#define VIGIL_SERVER_NET_PROXY_SELECT_H_

#include <string>
#include <string_view>

namespace vigil::net {

// True when `no_proxy` (Go's NO_PROXY syntax) or the loopback rule keeps
// `host` (a name or IP, IPv6 without brackets) on `port` off the proxy.
bool BypassProxy(std::string_view no_proxy, std::string_view host,
                 std::string_view port);

// The proxy URL for `url` ("" = connect directly). `proxy_url` and
// `no_proxy` as in prometheus.yml; with `from_environment` both are
// ignored and the environment is read. A proxy without a scheme gets
// "http://", as Go does.
std::string SelectProxy(std::string_view url, const std::string& proxy_url,
                        const std::string& no_proxy, bool from_environment);

}  // namespace vigil::net

#endif  // VIGIL_SERVER_NET_PROXY_SELECT_H_
