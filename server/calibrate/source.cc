#include "server/calibrate/source.h"

#include <rapidjson/document.h>

#include <cmath>
#include <cstdlib>
#include <utility>

#include "fmt/format.h"
#include "promql/engine.h"
#include "server/net/http_client.h"
#include "storage/db.h"

namespace vigil::calibrate {

namespace {

class DbQuerySource : public QuerySource {
 public:
  DbQuerySource(storage::DB* db, const promql::Engine* engine, std::string d)
      : db_(db), engine_(engine), description_(std::move(d)) {}

  absl::StatusOr<promql::Matrix> RangeQuery(std::string_view expr,
                                            int64_t start, int64_t end,
                                            int64_t step_ms) override {
    auto r = engine_->RangeQuery(db_, expr, start, end, step_ms);
    if (!r.ok()) return r.status();
    return std::move(r->value.matrix);
  }
  std::string Describe() const override { return description_; }

 private:
  storage::DB* const db_;
  const promql::Engine* const engine_;
  const std::string description_;
};

// application/x-www-form-urlencoded value, as Go's url.QueryEscape.
std::string FormEscape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += char(c);
    } else if (c == ' ') {
      out += '+';
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string SecondsText(int64_t ms) {
  return fmt::format("{}.{:03d}", ms / 1000, int(std::llabs(ms % 1000)));
}

class HttpQuerySource : public QuerySource {
 public:
  HttpQuerySource(std::string url, int64_t timeout_ms)
      : url_(std::move(url)), timeout_ms_(timeout_ms) {
    while (!url_.empty() && url_.back() == '/') url_.pop_back();
  }

  absl::StatusOr<promql::Matrix> RangeQuery(std::string_view expr,
                                            int64_t start, int64_t end,
                                            int64_t step_ms) override {
    net::FetchRequest req;
    req.method = "POST";
    req.url = url_ + "/api/v1/query_range";
    req.headers.push_back(
        {"Content-Type", "application/x-www-form-urlencoded"});
    req.body = "query=" + FormEscape(expr) + "&start=" + SecondsText(start) +
               "&end=" + SecondsText(end) + "&step=" + SecondsText(step_ms);
    req.timeout_ms = timeout_ms_;
    net::FetchResult r = client_.FetchSync(std::move(req));
    if (!r.error.empty()) {
      return absl::UnavailableError(fmt::format("query {}: {}", url_, r.error));
    }
    auto m = DecodeMatrixJson(r.body);
    if (!m.ok()) {
      return absl::Status(r.status == 400 ? absl::StatusCode::kInvalidArgument
                                          : m.status().code(),
                          fmt::format("query {} (HTTP {}): {}", url_, r.status,
                                      std::string(m.status().message())));
    }
    return m;
  }
  std::string Describe() const override { return url_; }

 private:
  std::string url_;
  const int64_t timeout_ms_;
  net::HttpClient client_;
};

}  // namespace

std::unique_ptr<QuerySource> DbSource(storage::DB* db,
                                      const promql::Engine* engine,
                                      std::string description) {
  return std::make_unique<DbQuerySource>(db, engine, std::move(description));
}

std::unique_ptr<QuerySource> HttpSource(std::string base_url,
                                        int64_t timeout_ms) {
  return std::make_unique<HttpQuerySource>(std::move(base_url), timeout_ms);
}

absl::StatusOr<promql::Matrix> DecodeMatrixJson(std::string_view body) {
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  if (d.HasParseError() || !d.IsObject()) {
    return absl::DataLossError("answer is not a JSON object");
  }
  auto status = d.FindMember("status");
  if (status == d.MemberEnd() || !status->value.IsString()) {
    return absl::DataLossError("answer has no \"status\"");
  }
  if (std::string_view(status->value.GetString()) != "success") {
    auto e = d.FindMember("error");
    std::string msg = e != d.MemberEnd() && e->value.IsString()
                          ? e->value.GetString()
                          : "status is not success";
    return absl::InvalidArgumentError(msg);
  }
  auto data = d.FindMember("data");
  if (data == d.MemberEnd() || !data->value.IsObject()) {
    return absl::DataLossError("answer has no \"data\" object");
  }
  auto rt = data->value.FindMember("resultType");
  auto res = data->value.FindMember("result");
  if (rt == data->value.MemberEnd() || !rt->value.IsString() ||
      std::string_view(rt->value.GetString()) != "matrix" ||
      res == data->value.MemberEnd() || !res->value.IsArray()) {
    return absl::DataLossError("answer is not a matrix");
  }
  promql::Matrix out;
  for (const auto& s : res->value.GetArray()) {
    if (!s.IsObject()) return absl::DataLossError("series is not an object");
    promql::Series series;
    std::vector<Label> labels;
    if (auto m = s.FindMember("metric");
        m != s.MemberEnd() && m->value.IsObject()) {
      for (const auto& l : m->value.GetObject()) {
        if (!l.value.IsString()) return absl::DataLossError("bad label");
        labels.push_back({l.name.GetString(), l.value.GetString()});
      }
    }
    series.metric = Labels::FromUnsorted(std::move(labels));
    auto vals = s.FindMember("values");
    if (vals == s.MemberEnd() || !vals->value.IsArray()) {
      return absl::DataLossError("series has no \"values\"");
    }
    for (const auto& p : vals->value.GetArray()) {
      if (!p.IsArray() || p.Size() != 2 || !p[0].IsNumber() ||
          !p[1].IsString()) {
        return absl::DataLossError("bad [time, \"value\"] pair");
      }
      series.ts.push_back(std::llround(p[0].GetDouble() * 1000));
      series.vs.push_back(std::strtod(p[1].GetString(), nullptr));
    }
    out.push_back(std::move(series));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.metric < b.metric; });
  return out;
}

}  // namespace vigil::calibrate
