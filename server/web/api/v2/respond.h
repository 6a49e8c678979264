// -----------------------------------------------------------------------------
// File: web/api/v2/respond.h
// -----------------------------------------------------------------------------
//
// Writing the v2 API's responses: JSON bodies, errors, empty answers.
#ifndef VIGIL_SERVER_WEB_API_V2_RESPOND_H_
#define VIGIL_SERVER_WEB_API_V2_RESPOND_H_

#include <functional>
#include <string>

#include "server/net/http.h"
#include "server/web/api/v1/json.h"
#include "server/web/api/v2/error.h"

namespace vigil::web::api::v2 {

// 200 (or `status`) application/json with what `write` writes.
void RespondJson(net::HttpResponse* resp,
                 const std::function<void(JsonWriter&)>& write,
                 int status = 200);
// `e`'s status and body (application/json unless the body is empty).
void RespondError(net::HttpResponse* resp, const ApiError& e);
// `status` without a body or a Content-Type (Alertmanager's bare 200s).
void RespondEmpty(net::HttpResponse* resp, int status = 200);

}  // namespace vigil::web::api::v2

#endif  // VIGIL_SERVER_WEB_API_V2_RESPOND_H_
