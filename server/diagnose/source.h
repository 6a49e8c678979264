// -----------------------------------------------------------------------------
// File: diagnose/source.h
// -----------------------------------------------------------------------------
//
// Where `vigil diagnose` gets its numbers: one small interface, an instant
// PromQL query at a time, with two implementations, so a local database and
// a running server give the same report: EngineSource runs Vigil's PromQL
// engine over a storage::Queryable (a DB opened read-only, or the server's
// own storage), HttpSource asks any Prometheus-compatible server's
// /api/v1/query.
#ifndef VIGIL_SERVER_DIAGNOSE_SOURCE_H_
#define VIGIL_SERVER_DIAGNOSE_SOURCE_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/time.h"
#include "promql/engine.h"
#include "promql/value.h"
#include "storage/querier.h"

namespace vigil::net {
class HttpClient;
}

namespace vigil::diagnose {

// Not thread-safe unless an implementation says so.
class QuerySource {
 public:
  virtual ~QuerySource() = default;
  // Evaluates `expr` at `t` (ms). An instant vector comes back as series of
  // one sample each, a range vector as its series, a scalar as one series
  // without labels. Errors: the query's (InvalidArgument for a bad query,
  // ...), Unavailable when the server cannot be reached.
  [[nodiscard]] virtual absl::StatusOr<promql::Matrix> Query(
      std::string_view expr, Timestamp t) = 0;
};

// Over Vigil's engine. `engine` and `queryable` must outlive the source;
// `ctx` (may be null) cancels the queries. Thread-safe.
class EngineSource : public QuerySource {
 public:
  EngineSource(const promql::Engine* engine, storage::Queryable* queryable,
               const promql::QueryContext* ctx = nullptr)
      : engine_(engine), queryable_(queryable), ctx_(ctx) {}
  absl::StatusOr<promql::Matrix> Query(std::string_view expr,
                                       Timestamp t) override;

 private:
  const promql::Engine* engine_;
  storage::Queryable* queryable_;
  const promql::QueryContext* ctx_;
};

// Over HTTP: GET `base_url`/api/v1/query?query=...&time=... (base_url
// like "http://127.0.0.1:9090", a path prefix allowed). `client` must
// outlive the source. Errors carry the server's errorType and error
// ("bad_data: parse error ..."), or the transport failure (Unavailable).
class HttpSource : public QuerySource {
 public:
  HttpSource(net::HttpClient* client, std::string base_url,
             int64_t timeout_ms = 30000);
  absl::StatusOr<promql::Matrix> Query(std::string_view expr,
                                       Timestamp t) override;

 private:
  net::HttpClient* client_;
  std::string base_url_;
  int64_t timeout_ms_;
};

}  // namespace vigil::diagnose

#endif  // VIGIL_SERVER_DIAGNOSE_SOURCE_H_
