#include "server/web/api/v2/respond.h"

#include <algorithm>

namespace vigil::web::api::v2 {
namespace {

void DropHeader(net::HttpResponse* resp, std::string_view name) {
  auto& h = resp->headers;
  h.erase(std::remove_if(h.begin(), h.end(),
                         [&](const auto& kv) { return kv.first == name; }),
          h.end());
}

}  // namespace

void RespondJson(net::HttpResponse* resp,
                 const std::function<void(JsonWriter&)>& write, int status) {
  JsonWriter w;
  write(w);
  resp->status = status;
  resp->SetHeader("Content-Type", "application/json");
  resp->body = w.Take();
}

void RespondError(net::HttpResponse* resp, const ApiError& e) {
  resp->status = e.status;
  if (e.body.empty()) {
    DropHeader(resp, "Content-Type");
  } else {
    resp->SetHeader("Content-Type", "application/json");
  }
  resp->body = e.body;
}

void RespondEmpty(net::HttpResponse* resp, int status) {
  resp->status = status;
  DropHeader(resp, "Content-Type");
  resp->body.clear();
}

}  // namespace vigil::web::api::v2
