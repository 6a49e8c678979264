// `vigil alerts report`: the alert-quality report (server/alerting/
// report.h, docs/alert-quality.md) from a running server or a storage
// directory.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdio>
#include <ctime>

#include "fmt/format.h"
#include "server/alerting/history.h"
#include "server/alerting/report.h"
#include "server/alerting/state.h"
#include "server/cli/cli.h"
#include "server/net/http_client.h"
#include "server/web/api/v1/alert_quality.h"
#include "storage/db.h"

namespace vigil::cli {

namespace {

constexpr char kReportUsage[] =
    "usage: vigil alerts report [--since=30d] (--server=URL | "
    "--storage.tsdb.path=DIR) [-o json]\n";

int ReportFail(const std::string& msg, int code) {
  std::fprintf(stderr, "error: %s\n", msg.c_str());
  return code;
}

}  // namespace

int AlertsReport(const std::vector<std::string>& argv) {
  Args a(argv, {"since", "server", "storage.tsdb.path", "o", "output"}, {});
  if (!a.ok() || !a.positional().empty()) {
    std::fputs(kReportUsage, stderr);
    return ReportFail(
        a.ok() ? "unexpected argument: " + a.positional()[0] : a.error(), 2);
  }
  auto server = a.Get("server");
  auto path = a.Get("storage.tsdb.path");
  if (server.has_value() == path.has_value()) {
    std::fputs(kReportUsage, stderr);
    return ReportFail("give exactly one of --server and --storage.tsdb.path",
                      2);
  }
  std::string format = a.Get("o").value_or(a.Get("output").value_or("text"));
  if (format != "text" && format != "json")
    return ReportFail(fmt::format("-o \"{}\": want text or json", format), 2);
  std::string since_text = a.Get("since").value_or("30d");
  Timestamp now = Timestamp(std::time(nullptr)) * 1000;
  auto since = web::api::ParseSince(since_text, now);
  if (!since.ok())
    return ReportFail(
        fmt::format("--since: {}", std::string(since.status().message())), 2);

  alerting::QualityReport rep;
  if (server) {
    net::HttpClient client;
    net::FetchRequest req;
    std::string base = *server;
    while (!base.empty() && base.back() == '/') base.pop_back();
    req.url =
        base + "/api/v1/alerts/report?since=" + std::to_string(*since / 1000);
    net::FetchResult r = client.FetchSync(req);
    if (!r.error.empty())
      return ReportFail(fmt::format("{}: {}", req.url, r.error), 1);
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("status"))
      return ReportFail(
          fmt::format("{}: HTTP {}: not an API answer", req.url, r.status), 1);
    if (!d.HasMember("data") || !d["data"].IsObject()) {
      std::string err = d.HasMember("error") && d["error"].IsString()
                            ? d["error"].GetString()
                            : "no data";
      return ReportFail(fmt::format("{}: HTTP {}: {}", req.url, r.status, err),
                        1);
    }
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    d["data"].Accept(w);
    if (format == "json") {
      std::printf("%s\n", buf.GetString());
      return 0;
    }
    auto dec = alerting::DecodeReportJson(buf.GetString());
    if (!dec.ok()) return ReportFail(std::string(dec.status().message()), 1);
    rep = *std::move(dec);
  } else {
    storage::Options so;
    so.read_only = true;
    so.create_if_missing = false;
    auto db = storage::DB::Open(so, *path);
    if (!db.ok())
      return ReportFail(fmt::format("--storage.tsdb.path {}: {}", *path,
                                    std::string(db.status().message())),
                        1);
    auto state = alerting::StorageStateStore(db->get());
    auto h = alerting::AlertHistory::Open(state.get(), nullptr);
    if (!h.ok()) return ReportFail(std::string(h.status().message()), 1);
    auto r = alerting::BuildReport(**h, *since, now);
    if (!r.ok()) return ReportFail(std::string(r.status().message()), 1);
    rep = *std::move(r);
    if (format == "json") {
      std::printf("%s\n", alerting::ReportJson(rep).c_str());
      return 0;
    }
  }
  std::fputs(alerting::ReportText(rep).c_str(), stdout);
  return 0;
}

}  // namespace vigil::cli
