// GET|POST /api/v1/diagnose?time=T&variant=V: the report of `vigil
// diagnose` (docs/diagnose.md) over the server's own storage, in the API's
// envelope. The whole diagnosis holds one query slot and obeys `timeout`
// like a query.
#include <chrono>
#include <memory>

#include "server/diagnose/diagnose.h"
#include "server/web/api/v1/api.h"
#include "server/web/api/v1/util.h"

namespace vigil::web::api {

void Api::Diagnose(const net::HttpRequest& req, net::HttpResponse* resp) const {
  if (!req.params_error.empty()) {
    return RespondError(resp, ApiErrorType::kBadData, req.params_error);
  }
  auto t = ParseTimeParam(req, "time", Now());
  if (!t.ok()) return RespondStatus(resp, t.status());
  diagnose::Options o;
  o.time = *t;
  o.variant = std::string(FormValue(req, "variant"));
  if (opts_.diagnose_thresholds) o.thresholds = *opts_.diagnose_thresholds;

  using Clock = promql::QueryContext::Clock;
  std::unique_ptr<promql::QueryContext> ctx;
  if (std::string_view to = FormValue(req, "timeout"); !to.empty()) {
    auto d = ParseApiDurationNs(to);
    if (!d.ok()) return RespondInvalidParam(resp, "timeout", d.status());
    if (*d < (int64_t{1} << 60)) {
      ctx = std::make_unique<promql::QueryContext>(
          Clock::now() + std::chrono::nanoseconds(*d));
    }
  }
  if (!ctx) ctx = std::make_unique<promql::QueryContext>();
  ctx->CancelWhen(req.client_gone);
  const absl::Status admitted = gate_->Acquire(*ctx);
  absl::StatusOr<diagnose::Report> report = absl::UnknownError("not run");
  if (!admitted.ok()) {
    report = admitted;
  } else {
    diagnose::EngineSource src(opts_.engine, opts_.queryable, ctx.get());
    report = diagnose::Diagnose(&src, o);
    gate_->Release();
  }
  if (!report.ok()) return RespondStatus(resp, report.status());
  resp->status = 200;
  SetContentType(resp, "application/json");
  resp->body = diagnose::ReportEnvelope(*report);
}

}  // namespace vigil::web::api
