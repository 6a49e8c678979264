#include "server/web/api/v1/util.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/go/strconv.h"
#include "core/time.h"
#include "promql/parser.h"

namespace vigil::web::api {

std::string_view FormValue(const net::HttpRequest& req, std::string_view name) {
  for (const auto& [k, v] : req.params) {
    if (k == name) return v;
  }
  return {};
}

std::vector<std::string_view> FormValues(const net::HttpRequest& req,
                                         std::string_view name) {
  std::vector<std::string_view> out;
  for (const auto& [k, v] : req.params) {
    if (k == name) out.push_back(v);
  }
  return out;
}

std::string_view PathParam(const net::HttpRequest& req, std::string_view name) {
  for (const auto& [k, v] : req.path_params) {
    if (k == name) return v;
  }
  return {};
}

absl::StatusOr<Timestamp> ParseApiTime(std::string_view s) {
  if (auto f = go::ParseFloat(s);
      f.ok() && std::isfinite(*f) && std::fabs(*f) < 9.2e15) {
    // As Prometheus: whole seconds, plus the fraction rounded to ms and
    // then converted to nanoseconds in floating point (time.Unix
    // normalises a negative fraction).
    double whole = 0;
    double frac = std::modf(*f, &whole);
    frac = std::round(frac * 1000) / 1000;
    int64_t sec = static_cast<int64_t>(whole);
    int64_t nsec = static_cast<int64_t>(frac * 1e9);
    if (nsec < 0) {
      nsec += 1000000000;
      sec -= 1;
    }
    return sec * 1000 + nsec / 1000000;
  }
  if (s == "-292273086-05-16T16:47:06Z") return kApiMinTime;
  if (s == "292277025-08-18T07:12:54.999999999Z") return kApiMaxTime;
  absl::Time t;
  std::string err;
  if (!s.empty() && s.find_first_of("Tt") != std::string_view::npos &&
      absl::ParseTime(absl::RFC3339_full, std::string(s), &t, &err)) {
    return absl::ToUnixMillis(t);
  }
  return absl::InvalidArgumentError(
      Cat("cannot parse ", go::Quote(s), " to a valid timestamp"));
}

absl::StatusOr<Timestamp> ParseTimeParam(const net::HttpRequest& req,
                                         std::string_view name, Timestamp def) {
  std::string_view v = FormValue(req, name);
  if (v.empty()) return def;
  auto t = ParseApiTime(v);
  if (!t.ok()) {
    return absl::InvalidArgumentError(
        Cat("invalid time value for '", name, "': ", Sv(t.status().message())));
  }
  return t;
}

absl::StatusOr<int64_t> ParseApiDurationNs(std::string_view s) {
  if (auto f = go::ParseFloat(s); f.ok()) {
    const double ns = *f * 1e9;
    // Go compares against float64(MaxInt64) == 2^63.
    if (!(ns <= 9223372036854775807.0 && ns >= -9223372036854775808.0) ||
        ns == 9223372036854775808.0) {
      return absl::InvalidArgumentError(
          Cat("cannot parse ", go::Quote(s),
              " to a valid duration. It overflows int64"));
    }
    return static_cast<int64_t>(ns);
  }
  if (auto ms = ParseDuration(s);
      ms.ok() && *ms <= std::numeric_limits<int64_t>::max() / 1000000) {
    return *ms * 1000000;
  }
  return absl::InvalidArgumentError(
      Cat("cannot parse ", go::Quote(s), " to a valid duration"));
}

absl::StatusOr<int64_t> ParseLimitParam(std::string_view s) {
  if (s.empty()) return 0;
  auto n = go::ParseInt(s, 10);
  if (!n.ok()) {
    // strconv.Atoi reports itself under its own name.
    std::string msg(Sv(n.status().message()));
    if (msg.rfind("strconv.ParseInt", 0) == 0) {
      msg = "strconv.Atoi" + msg.substr(16);
    }
    return absl::InvalidArgumentError(msg);
  }
  if (*n < 0) return absl::InvalidArgumentError("limit must be non-negative");
  return *n;
}

absl::StatusOr<std::vector<std::vector<Matcher>>> ParseMatchersParam(
    const std::vector<std::string_view>& values) {
  std::vector<std::vector<Matcher>> sets;
  for (std::string_view v : values) {
    auto ms = promql::ParseMetricSelector(v);
    if (!ms.ok()) return ms.status();
    sets.push_back(std::move(*ms));
  }
  for (const auto& ms : sets) {
    bool ok = false;
    for (const Matcher& m : ms) {
      if (!m.Matches("")) {
        ok = true;
        break;
      }
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          "match[] must contain at least one non-empty matcher");
    }
  }
  return sets;
}

void SetContentType(net::HttpResponse* resp, std::string_view type) {
  std::erase_if(resp->headers, [](const auto& h) {
    return h.first == "Content-Type" || h.first == "content-type";
  });
  resp->headers.emplace_back("Content-Type", std::string(type));
}

void RespondError(net::HttpResponse* resp, ApiErrorType type,
                  std::string_view message) {
  JsonWriter w;
  WriteError(w, ApiErrorTypeName(type), message);
  resp->status = ApiErrorHttpStatus(type);
  resp->headers.clear();
  SetContentType(resp, "application/json");
  resp->body = w.Take();
  resp->stream = nullptr;
}

void RespondStatus(net::HttpResponse* resp, const absl::Status& s) {
  RespondError(resp, ApiErrorTypeFor(s), Sv(s.message()));
}

void RespondInvalidParam(net::HttpResponse* resp, std::string_view name,
                         std::string_view message) {
  RespondError(resp, ApiErrorType::kBadData,
               Cat("invalid parameter ", go::Quote(name), ": ", message));
}

void RespondInvalidParam(net::HttpResponse* resp, std::string_view name,
                         const absl::Status& s) {
  RespondInvalidParam(resp, name, Sv(s.message()));
}

void RespondData(net::HttpResponse* resp, const DataFn& data,
                 const std::vector<std::string>& warnings,
                 const std::vector<std::string>& infos) {
  JsonWriter w;
  WriteSuccess(w, data, warnings, infos);
  resp->status = 200;
  SetContentType(resp, "application/json");
  resp->body = w.Take();
}

// ---- QueryGate
// ---------------------------------------------------------------

absl::Status Api::QueryGate::Acquire(const promql::QueryContext& ctx) {
  vigil::MutexLock l(&mu_);
  ++queued_;
  while (running_ >= slots_) {
    if (ctx.cancelled()) {
      --queued_;
      return absl::CancelledError("query was canceled in query queue");
    }
    if (ctx.has_deadline() &&
        promql::QueryContext::Clock::now() >= ctx.deadline()) {
      --queued_;
      return absl::DeadlineExceededError("query timed out in query queue");
    }
    cv_.WaitWithTimeout(&mu_, absl::Milliseconds(10));
  }
  --queued_;
  ++running_;
  return absl::OkStatus();
}

void Api::QueryGate::Release() {
  vigil::MutexLock l(&mu_);
  --running_;
  cv_.Signal();
}

int Api::QueryGate::running() const {
  vigil::MutexLock l(&mu_);
  return running_;
}

int Api::QueryGate::queued() const {
  vigil::MutexLock l(&mu_);
  return queued_;
}

}  // namespace vigil::web::api
