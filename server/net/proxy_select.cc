// Go's proxy choice (http.ProxyURL, httpproxy.Config.ProxyFunc), see
// net/proxy_select.h.
#include "server/net/proxy_select.h"

#include <arpa/inet.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "server/net/http.h"

namespace vigil::net {
namespace {

// An IP as 16 bytes (IPv4 mapped into ::ffff:0:0/96, as Go's net.IP).
using Ip = std::array<unsigned char, 16>;

std::optional<Ip> ParseIp(std::string_view s) {
  std::string z(s);
  Ip ip{};
  in_addr v4;
  if (inet_pton(AF_INET, z.c_str(), &v4) == 1) {
    ip[10] = ip[11] = 0xff;
    std::memcpy(ip.data() + 12, &v4, 4);
    return ip;
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, z.c_str(), &v6) == 1) {
    std::memcpy(ip.data(), &v6, 16);
    return ip;
  }
  return std::nullopt;
}

bool IsV4(const Ip& ip) {
  static constexpr unsigned char kPrefix[12] = {0, 0, 0, 0, 0,    0,
                                                0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(ip.data(), kPrefix, 12) == 0;
}

bool IsLoopback(const Ip& ip) {
  if (IsV4(ip)) return ip[12] == 127;
  static constexpr Ip kOne = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return ip == kOne;
}

// "10.0.0.0/8", "fd00::/8": whether `ip` is inside.
std::optional<bool> InCidr(std::string_view cidr, const Ip& ip) {
  auto slash = cidr.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto net = ParseIp(cidr.substr(0, slash));
  const std::string_view len = cidr.substr(slash + 1);
  if (!net || len.empty() || len.size() > 3 ||
      len.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  const int bits = std::stoi(std::string(len));
  const bool v4 = cidr.substr(0, slash).find(':') == std::string_view::npos;
  if (bits > (v4 ? 32 : 128)) return std::nullopt;
  if (v4 && !IsV4(ip)) return false;
  const int total = v4 ? bits + 96 : bits;
  for (int i = 0; i < total; ++i) {
    const int byte = i / 8, mask = 0x80 >> (i % 8);
    if (((*net)[byte] & mask) != (ip[byte] & mask)) return false;
  }
  return true;
}

// net.SplitHostPort for a NO_PROXY entry: "host:port", "[v6]:port".
bool SplitHostPort(std::string_view s, std::string_view* host,
                   std::string_view* port) {
  if (s.starts_with("[")) {
    auto close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() ||
        s[close + 1] != ':') {
      return false;
    }
    *host = s.substr(1, close - 1);
    *port = s.substr(close + 2);
    return true;
  }
  auto colon = s.rfind(':');
  if (colon == std::string_view::npos || s.find(':') != colon) return false;
  *host = s.substr(0, colon);
  *port = s.substr(colon + 1);
  return true;
}

struct Url {
  std::string scheme, host, port;
};

// scheme://[userinfo@]host[:port][/...]; the port defaults to the
// scheme's, as Go's canonicalAddr.
std::optional<Url> SplitUrl(std::string_view url) {
  auto sep = url.find("://");
  if (sep == std::string_view::npos) return std::nullopt;
  Url u;
  u.scheme = LowerAscii(url.substr(0, sep));
  std::string_view rest = url.substr(sep + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    rest = rest.substr(at + 1);
  }
  std::string_view host = rest, port;
  if (rest.starts_with("[")) {
    auto close = rest.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') {
      port = rest.substr(close + 2);
    }
  } else if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  u.host = std::string(host);
  u.port = !port.empty()          ? std::string(port)
           : u.scheme == "https"  ? "443"
           : u.scheme == "socks5" ? "1080"
                                  : "80";
  return u;
}

std::string Env(const char* upper, const char* lower) {
  if (const char* v = std::getenv(upper); v != nullptr && *v != '\0') return v;
  if (const char* v = std::getenv(lower); v != nullptr) return v;
  return "";
}

// httpproxy's parseProxy: a value without a known scheme is http://.
std::string WithScheme(const std::string& proxy) {
  for (std::string_view s : {"http://", "https://", "socks5://"}) {
    if (LowerAscii(proxy).starts_with(s)) return proxy;
  }
  return "http://" + proxy;
}

}  // namespace

bool BypassProxy(std::string_view no_proxy, std::string_view host_in,
                 std::string_view port) {
  if (host_in == "localhost") return true;
  const std::optional<Ip> ip = ParseIp(host_in);
  if (ip && IsLoopback(*ip)) return true;
  const std::string host = LowerAscii(TrimOws(host_in));
  for (size_t start = 0; start <= no_proxy.size();) {
    size_t comma = no_proxy.find(',', start);
    if (comma == std::string_view::npos) comma = no_proxy.size();
    const std::string p =
        LowerAscii(TrimOws(no_proxy.substr(start, comma - start)));
    start = comma + 1;
    if (p.empty()) continue;
    if (p == "*") return true;
    if (p.find('/') != std::string::npos) {
      if (auto in = InCidr(p, ip.value_or(Ip{})); in) {
        if (ip && *in) return true;
        continue;
      }
    }
    std::string_view phost, pport;
    if (SplitHostPort(p, &phost, &pport)) {
      if (phost.empty()) continue;  // ":80": malformed, ignored as Go does
    } else {
      phost = p;
      pport = {};
    }
    if (auto pip = ParseIp(phost); pip) {
      if (ip && *pip == *ip && (pport.empty() || pport == port)) return true;
      continue;
    }
    if (phost.empty()) continue;
    std::string suffix(phost);
    if (suffix.starts_with("*.")) suffix.erase(0, 1);
    const bool match_host = suffix[0] != '.';
    if (match_host) suffix.insert(0, ".");
    const bool name_match =
        host.ends_with(suffix) ||
        (match_host &&
         std::string_view(host) == std::string_view(suffix).substr(1));
    if (name_match && (pport.empty() || pport == port)) return true;
  }
  return false;
}

std::string SelectProxy(std::string_view url, const std::string& proxy_url,
                        const std::string& no_proxy, bool from_environment) {
  if (!from_environment) {
    if (proxy_url.empty()) return "";
    if (no_proxy.empty()) return proxy_url;  // http.ProxyURL: always
  }
  std::optional<Url> u = SplitUrl(url);
  if (!u) return from_environment ? "" : proxy_url;
  std::string proxy = proxy_url, exclude = no_proxy;
  if (from_environment) {
    if (u->scheme == "https") {
      proxy = Env("HTTPS_PROXY", "https_proxy");
    } else if (u->scheme == "http" &&
               std::getenv("REQUEST_METHOD") == nullptr) {
      proxy = Env("HTTP_PROXY", "http_proxy");
    } else {
      proxy.clear();
    }
    if (proxy.empty()) return "";
    proxy = WithScheme(proxy);
    exclude = Env("NO_PROXY", "no_proxy");
  }
  if (BypassProxy(exclude, u->host, u->port)) return "";
  return proxy;
}

}  // namespace vigil::net
