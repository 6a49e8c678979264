// -----------------------------------------------------------------------------
// File: web/api/v1/util.h
// -----------------------------------------------------------------------------
//
// Shared by the API's .cc files (not a public header): parameter lookup
// and parsing with Prometheus's error texts, response helpers, and the
// query gate and cancel watcher behind Api.
#ifndef VIGIL_SERVER_WEB_API_V1_UTIL_H_
#define VIGIL_SERVER_WEB_API_V1_UTIL_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "core/matcher.h"
#include "core/sync.h"
#include "promql/engine.h"
#include "server/net/http.h"
#include "server/web/api/v1/api.h"
#include "server/web/api/v1/json.h"

namespace vigil::web::api {

// Prometheus's MinTime and MaxTime in ms: the defaults of optional
// start/end parameters.
inline constexpr Timestamp kApiMinTime = -9223309901257974000LL;
inline constexpr Timestamp kApiMaxTime = 9223309901257974999LL;

// Go's r.FormValue: the first value of `name`, "" if absent.
std::string_view FormValue(const net::HttpRequest& req, std::string_view name);
// r.Form[name]: every value, in order.
std::vector<std::string_view> FormValues(const net::HttpRequest& req,
                                         std::string_view name);
std::string_view PathParam(const net::HttpRequest& req, std::string_view name);

// Prometheus's parseTime: float seconds or RFC 3339. InvalidArgument
// `cannot parse "x" to a valid timestamp`.
absl::StatusOr<Timestamp> ParseApiTime(std::string_view s);
// parseTimeParam: `def` when empty; errors prefixed
// `invalid time value for 'NAME': `.
absl::StatusOr<Timestamp> ParseTimeParam(const net::HttpRequest& req,
                                         std::string_view name, Timestamp def);
// Prometheus's parseDuration: float seconds or a duration; nanoseconds.
absl::StatusOr<int64_t> ParseApiDurationNs(std::string_view s);
// parseLimitParam: 0 when empty; `limit must be non-negative`, or Go's
// strconv.Atoi error text.
absl::StatusOr<int64_t> ParseLimitParam(std::string_view s);
// parseMatchersParam: each match[] parsed as a selector; at least one
// matcher of each must not match "".
absl::StatusOr<std::vector<std::vector<Matcher>>> ParseMatchersParam(
    const std::vector<std::string_view>& values);

// Sets the Content-Type header (replacing one set before).
void SetContentType(net::HttpResponse* resp, std::string_view type);
// Writes an error response.
void RespondError(net::HttpResponse* resp, ApiErrorType type,
                  std::string_view message);
void RespondStatus(net::HttpResponse* resp, const absl::Status& s);
// `invalid parameter "NAME": MESSAGE`, bad_data.
void RespondInvalidParam(net::HttpResponse* resp, std::string_view name,
                         std::string_view message);
void RespondInvalidParam(net::HttpResponse* resp, std::string_view name,
                         const absl::Status& s);
// absl::string_view (a type of its own in this Abseil) as std's.
inline std::string_view Sv(absl::string_view s) { return {s.data(), s.size()}; }
// Concatenates strings and string views (absl::StrCat takes no
// std::string_view in this Abseil).
template <typename... T>
std::string Cat(const T&... parts) {
  std::string s;
  (s.append(std::string_view(parts)), ...);
  return s;
}
inline absl::string_view Av(std::string_view s) { return {s.data(), s.size()}; }
// Writes a success response whose data `data` writes.
void RespondData(net::HttpResponse* resp, const DataFn& data,
                 const std::vector<std::string>& warnings = {},
                 const std::vector<std::string>& infos = {});

// Limits the queries evaluating at once; waiters poll their cancel
// conditions.
class Api::QueryGate {
 public:
  explicit QueryGate(int slots) : slots_(slots < 1 ? 1 : slots) {}
  // Waits for a slot. DeadlineExceeded "query timed out in query queue"
  // or Cancelled "query was canceled in query queue" (the context was
  // cancelled, or its client hung up: QueryContext::CancelWhen).
  absl::Status Acquire(const promql::QueryContext& ctx);
  void Release();
  int running() const;
  int queued() const;

 private:
  mutable vigil::Mutex mu_;
  vigil::CondVar cv_;
  const int slots_;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  int queued_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace vigil::web::api

#endif  // VIGIL_SERVER_WEB_API_V1_UTIL_H_
