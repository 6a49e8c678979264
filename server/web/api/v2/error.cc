#include "server/web/api/v2/error.h"

#include "fmt/format.h"
#include "server/web/api/v1/json.h"

namespace vigil::web::api::v2 {

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  AppendJsonEscaped(&out, s);
  out.push_back('"');
  return out;
}

ApiError ApiError::OpenApi(int status, int code, std::string_view message) {
  return ApiError{status, fmt::format("{{\"code\":{},\"message\":{}}}", code,
                                      JsonString(message))};
}

ApiError ApiError::Payload(int status, std::string_view message) {
  return ApiError{status, JsonString(message)};
}

ApiError ApiError::Payload(int status, const absl::Status& st) {
  return Payload(status,
                 std::string_view(st.message().data(), st.message().size()));
}

}  // namespace vigil::web::api::v2
