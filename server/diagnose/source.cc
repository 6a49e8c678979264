#include "server/diagnose/source.h"

#include <rapidjson/document.h>

#include <utility>

#include "core/go/strconv.h"
#include "fmt/format.h"
#include "server/net/http_client.h"

namespace vigil::diagnose {

absl::StatusOr<promql::Matrix> EngineSource::Query(std::string_view expr,
                                                   Timestamp t) {
  auto r = engine_->InstantQuery(queryable_, expr, t, ctx_);
  if (!r.ok()) return r.status();
  promql::Matrix out;
  switch (r->value.type) {
    case promql::ValueType::kVector:
      for (auto& s : r->value.vector) {
        promql::Series x;
        x.metric = std::move(s.metric);
        x.ts.push_back(s.t);
        x.vs.push_back(s.v);
        out.push_back(std::move(x));
      }
      break;
    case promql::ValueType::kMatrix:
      out = std::move(r->value.matrix);
      break;
    case promql::ValueType::kScalar: {
      promql::Series x;
      x.ts.push_back(r->value.scalar.t);
      x.vs.push_back(r->value.scalar.v);
      out.push_back(std::move(x));
      break;
    }
    default:
      return absl::InvalidArgumentError("query returned a string: " +
                                        std::string(expr));
  }
  return out;
}

namespace {

// application/x-www-form-urlencoded, as Go's url.QueryEscape.
std::string FormEscape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(char(c));
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

absl::StatusOr<double> SampleValue(const rapidjson::Value& pair) {
  if (!pair.IsArray() || pair.Size() != 2 || !pair[1].IsString()) {
    return absl::InternalError("sample is not [time, \"value\"]");
  }
  return go::ParseFloat(pair[1].GetString());
}

absl::StatusOr<int64_t> SampleTime(const rapidjson::Value& pair) {
  if (!pair[0].IsNumber()) return absl::InternalError("bad sample time");
  return static_cast<int64_t>(pair[0].GetDouble() * 1000 + 0.5);
}

absl::Status ParseSeries(const rapidjson::Value& item, bool matrix,
                         promql::Matrix* out) {
  if (!item.IsObject()) return absl::InternalError("result item not object");
  promql::Series s;
  if (item.HasMember("metric") && item["metric"].IsObject()) {
    std::vector<Label> ls;
    for (auto it = item["metric"].MemberBegin();
         it != item["metric"].MemberEnd(); ++it) {
      if (!it->value.IsString()) continue;
      ls.push_back({it->name.GetString(), it->value.GetString()});
    }
    s.metric = Labels::FromUnsorted(std::move(ls));
  }
  auto add = [&](const rapidjson::Value& p) -> absl::Status {
    auto v = SampleValue(p);
    if (!v.ok()) return v.status();
    auto t = SampleTime(p);
    if (!t.ok()) return t.status();
    s.ts.push_back(*t);
    s.vs.push_back(*v);
    return absl::OkStatus();
  };
  if (matrix) {
    if (!item.HasMember("values") || !item["values"].IsArray()) {
      return absl::InternalError("matrix item without values");
    }
    for (const auto& p : item["values"].GetArray()) {
      if (auto st = add(p); !st.ok()) return st;
    }
  } else {
    if (!item.HasMember("value")) return absl::InternalError("no value");
    if (auto st = add(item["value"]); !st.ok()) return st;
  }
  out->push_back(std::move(s));
  return absl::OkStatus();
}

}  // namespace

HttpSource::HttpSource(net::HttpClient* client, std::string base_url,
                       int64_t timeout_ms)
    : client_(client), base_url_(std::move(base_url)), timeout_ms_(timeout_ms) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
}

absl::StatusOr<promql::Matrix> HttpSource::Query(std::string_view expr,
                                                 Timestamp t) {
  net::FetchRequest req;
  req.method = "POST";
  req.url = base_url_ + "/api/v1/query";
  req.headers.push_back({"Content-Type", "application/x-www-form-urlencoded"});
  req.body = "query=" + FormEscape(expr) +
             fmt::format("&time={}.{:03d}", t / 1000, t % 1000);
  req.timeout_ms = timeout_ms_;
  req.max_body_bytes = 256 << 20;
  net::FetchResult r = client_->FetchSync(std::move(req));
  if (!r.error.empty()) return absl::UnavailableError(r.error);
  rapidjson::Document doc;
  doc.Parse(r.body.data(), r.body.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("status") ||
      !doc["status"].IsString()) {
    return absl::UnavailableError(
        fmt::format("{}/api/v1/query: HTTP {}: not a Prometheus API answer",
                    base_url_, r.status));
  }
  if (std::string_view(doc["status"].GetString()) != "success") {
    std::string type = doc.HasMember("errorType") && doc["errorType"].IsString()
                           ? doc["errorType"].GetString()
                           : "error";
    std::string msg = doc.HasMember("error") && doc["error"].IsString()
                          ? doc["error"].GetString()
                          : "";
    std::string text = fmt::format("{}: {}", type, msg);
    if (type == "bad_data") return absl::InvalidArgumentError(text);
    return absl::FailedPreconditionError(text);
  }
  const auto& data = doc["data"];
  if (!data.IsObject() || !data.HasMember("resultType") ||
      !data.HasMember("result")) {
    return absl::UnavailableError("answer without data.resultType/result");
  }
  std::string_view type = data["resultType"].GetString();
  const auto& result = data["result"];
  promql::Matrix out;
  if (type == "scalar") {
    promql::Series s;
    auto v = SampleValue(result);
    auto ts = result.IsArray() && result.Size() == 2
                  ? SampleTime(result)
                  : absl::StatusOr<int64_t>(absl::InternalError("bad scalar"));
    if (!v.ok() || !ts.ok()) return absl::UnavailableError("bad scalar");
    s.ts.push_back(*ts);
    s.vs.push_back(*v);
    out.push_back(std::move(s));
    return out;
  }
  if ((type != "vector" && type != "matrix") || !result.IsArray()) {
    return absl::UnavailableError(
        fmt::format("unexpected resultType {}", std::string(type)));
  }
  for (const auto& item : result.GetArray()) {
    if (auto st = ParseSeries(item, type == "matrix", &out); !st.ok()) {
      return absl::UnavailableError(std::string(st.message()));
    }
  }
  return out;
}

}  // namespace vigil::diagnose
