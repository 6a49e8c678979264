// -----------------------------------------------------------------------------
// File: net/router.h
// -----------------------------------------------------------------------------
//
// The routing table of HttpServer, and the query-string decoder, apart from
// the sockets so that they are tested as plain functions. Patterns follow
// julienschmidt/httprouter, which Prometheus's route package wraps:
//   "/api/v1/query"              exact
//   "/api/v1/label/:name/values" ":name" captures one path segment
//   "/static/*filepath"          "*name" (last) captures the rest, with its
//                                leading '/': "/static/a/b" -> "/a/b"
// A path no pattern matches is 404; a path some pattern matches under other
// methods only is 405 with an Allow header, as httprouter answers.
#ifndef VIGIL_SERVER_NET_ROUTER_H_
#define VIGIL_SERVER_NET_ROUTER_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/net/http.h"

namespace vigil::net {

// Not thread-safe to Add to; Match is const and safe from any thread once
// the table is complete.
class Router {
 public:
  enum class Outcome { kFound, kNotFound, kMethodNotAllowed };

  struct Match {
    Outcome outcome = Outcome::kNotFound;
    const HttpHandler* handler = nullptr;  // kFound: owned by the Router
    std::string pattern;                   // kFound: as registered
    std::vector<std::pair<std::string, std::string>> path_params;
    std::vector<std::string> allowed;  // kMethodNotAllowed, and OPTIONS
  };

  // Registers `handler` for `method` (upper-case) and `pattern`. A later
  // registration of the same method and pattern replaces the earlier one.
  void Add(std::string_view method, std::string_view pattern,
           HttpHandler handler);

  // Static patterns win over ":param" ones, which win over "*catchall";
  // among equals, the first registered.
  Match Find(std::string_view method, std::string_view path) const;

 private:
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;
    int rank = 0;  // 0 static, 1 params, 2 catch-all
    HttpHandler handler;
  };
  static bool MatchPath(const Route& r, std::string_view path,
                        std::vector<std::pair<std::string, std::string>>* out);

  std::vector<Route> routes_;
};

// Appends the pairs of an application/x-www-form-urlencoded text (a query
// string or a form body) to `out`, as Go's url.ParseQuery decodes them
// ('+' is a space, %XX a byte). Returns "" or Go's error for the first bad
// pair, which is skipped: `invalid URL escape "%zz"`, `invalid semicolon
// separator in query`.
std::string ParseQuery(std::string_view text,
                       std::vector<std::pair<std::string, std::string>>* out);

}  // namespace vigil::net

#endif  // VIGIL_SERVER_NET_ROUTER_H_
