// -----------------------------------------------------------------------------
// File: web/api/v2/error.h
// -----------------------------------------------------------------------------
//
// The two shapes an Alertmanager v2 error takes on the wire: go-openapi's
// own ({"code":602,"message":"labels in body is required"}, for requests
// that do not decode or validate against the spec, unknown paths and
// methods), and a handler's payload, a bare JSON string
// ("bad matcher format: foo").
#ifndef VIGIL_SERVER_WEB_API_V2_ERROR_H_
#define VIGIL_SERVER_WEB_API_V2_ERROR_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace vigil::web::api::v2 {

struct ApiError {
  int status = 500;  // HTTP status
  std::string body;  // JSON; "" for none (a bare 404)

  // go-openapi's error: `code` is its error code (602 required, 601
  // format, 612 too few items, or the HTTP status itself).
  static ApiError OpenApi(int status, int code, std::string_view message);
  // A handler's error payload: `message` as a JSON string.
  static ApiError Payload(int status, std::string_view message);
  // The same with `st`'s message.
  static ApiError Payload(int status, const absl::Status& st);
};

// `s` as a JSON string literal, escaped as Go's encoding/json does.
std::string JsonString(std::string_view s);

}  // namespace vigil::web::api::v2

#endif  // VIGIL_SERVER_WEB_API_V2_ERROR_H_
