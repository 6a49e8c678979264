// -----------------------------------------------------------------------------
// File: web/api/v2/requests.h
// -----------------------------------------------------------------------------
//
// The request bodies of Alertmanager's v2 API, decoded as go-openapi's
// generated server decodes them: first the JSON (Go's encoding/json:
// struct keys matched case-insensitively, the last of duplicate keys wins,
// unknown keys ignored, null as absent, data after the first value
// ignored, invalid UTF-8 as U+FFFD), a failure being 400
// {"code":400,"message":"parsing alerts body from \"\" failed, because
// ..."}; then the spec's validation (required fields, formats, minimum
// items), a failure being 422 with go-openapi's code (602 required, 601
// format, 612 too few items) naming the field ("0.labels in body is
// required"). Deeply nested input is parsed iteratively (no recursion).
//
// What is left to the handlers (and the router) is Alertmanager's own
// validation: label names, start before end, the silence's matchers.
#ifndef VIGIL_SERVER_WEB_API_V2_REQUESTS_H_
#define VIGIL_SERVER_WEB_API_V2_REQUESTS_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/time.h"
#include "server/web/api/v2/error.h"

namespace vigil::web::api::v2 {

// models.PostableAlert. Pairs keep the JSON's order (duplicates resolved),
// empty values included: the handler drops those as Alertmanager does.
struct PostableAlert {
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<std::pair<std::string, std::string>> annotations;
  Timestamp starts_at = kMinTimestamp;  // kMinTimestamp: unset / zero time
  Timestamp ends_at = kMinTimestamp;
  std::string generator_url;
};

struct PostableMatcher {  // models.Matcher
  std::string name;
  std::string value;
  bool is_equal = true;  // optional in the spec; true when absent
  bool is_regex = false;
};

struct PostableSilence {  // models.PostableSilence
  std::string id;         // "" to create
  std::vector<PostableMatcher> matchers;
  Timestamp starts_at = kMinTimestamp;
  Timestamp ends_at = kMinTimestamp;
  std::string created_by;
  std::string comment;
};

// A decoded body or the error to answer with.
template <typename T>
using Decoded = std::variant<T, ApiError>;

// The Content-Type check go-openapi makes before decoding: 415
// `unsupported media type "text/plain", only [application/json] are
// allowed` unless the media type is application/json (a missing header
// counts as application/octet-stream). nullopt when acceptable.
std::optional<ApiError> CheckJsonContentType(
    std::optional<std::string_view> content_type);

Decoded<std::vector<PostableAlert>> DecodePostableAlerts(std::string_view body);
Decoded<PostableSilence> DecodePostableSilence(std::string_view body);

// strfmt's uri format check (Go's url.Parse succeeding), for generatorURL.
bool IsUri(std::string_view s);

}  // namespace vigil::web::api::v2

#endif  // VIGIL_SERVER_WEB_API_V2_REQUESTS_H_
