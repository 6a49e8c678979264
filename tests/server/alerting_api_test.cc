// Alertmanager's v2 API on Vigil's port (server/web/api/v2): the codec of
// request bodies and times, the query filters, and the handlers of a real
// `vigil` serving it, request by request against a real
// prometheus-alertmanager running the same alertmanager.yml
// (testdata/alerting_api/requests.txt), and malformed, huge and deep
// bodies that must neither crash nor stall the server.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/time.h"
#include "server/web/api/v2/datetime.h"
#include "server/web/api/v2/filter.h"
#include "server/web/api/v2/requests.h"
#include "server/web/api/v2/secrets.h"
#include "server/web/api/v2/sort.h"
#include "tests/server/alerting_peers_testutil.h"

namespace vigil::web::api::v2 {
namespace {

using vigil::Labels;

template <typename T>
ApiError ApiErrorOf(const Decoded<T>& d) {
  REQUIRE(std::holds_alternative<ApiError>(d));
  return std::get<ApiError>(d);
}

TEST_CASE("strfmt.DateTime: written with milliseconds in UTC",
          "[alerting][api]") {
  CHECK(FormatDateTime(0) == "1970-01-01T00:00:00.000Z");
  CHECK(FormatDateTime(1767225600123) == "2026-01-01T00:00:00.123Z");
  CHECK(FormatDateTime(vigil::kMinTimestamp) == "0001-01-01T00:00:00.000Z");
}

TEST_CASE("strfmt.DateTime: read in every layout strfmt accepts",
          "[alerting][api]") {
  const vigil::Timestamp t = 1767225600000;  // 2026-01-01T00:00:00Z
  CHECK(*ParseDateTime("2026-01-01T00:00:00Z") == t);
  CHECK(*ParseDateTime("2026-01-01T00:00:00.123Z") == t + 123);
  CHECK(*ParseDateTime("2026-01-01T00:00:00.123456789Z") == t + 123);
  CHECK(*ParseDateTime("2026-01-01T02:00:00+02:00") == t);
  CHECK(*ParseDateTime("2026-01-01T02:00:00.5+0200") == t + 500);
  CHECK(*ParseDateTime("2025-12-31T19:00:00-05:00") == t);
  CHECK(*ParseDateTime("2026-01-01T00:00:00") == t);  // local = UTC here
  CHECK(*ParseDateTime("2026-01-01T00:00Z") == t);
  CHECK(*ParseDateTime("2026-01-01 00:00:00") == t);
  CHECK(*ParseDateTime("2024-02-29T00:00:00Z") == 1709164800000);
  CHECK(*ParseDateTime("1969-12-31T23:59:59Z") == -1000);
  CHECK(*ParseDateTime("0001-01-01T00:00:00Z") == vigil::kMinTimestamp);
  CHECK(*ParseDateTime("0001-01-01T00:00:00.000Z") == vigil::kMinTimestamp);
}

TEST_CASE("strfmt.DateTime: malformed times are errors in Go's words",
          "[alerting][api]") {
  for (const char* bad :
       {"", "nope", "2026-01-01", "2026-13-01T00:00:00Z",
        "2026-02-29T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z",
        "2026-01-01T00:00:61Z", "2026-01-01T00:00:00.Z",
        "2026-01-01T00:00:00+2", "2026-01-01T00:00:00Zx", "2026-01-01 00:00",
        "2026-01-01T00:00:00+25:00", "２０２６-01-01T00:00:00Z",
        "2026-01-01T00:00:00 Z"}) {
    INFO(bad);
    auto t = ParseDateTime(bad);
    REQUIRE_FALSE(t.ok());
    CHECK(std::string(t.status().message()).rfind("parsing time \"", 0) == 0);
  }
  // strfmt reports the last layout's error: Go's for "2006-01-02 15:04:05".
  auto msg = [](const char* s) {
    return std::string(ParseDateTime(s).status().message());
  };
  CHECK(msg("nope") ==
        "parsing time \"nope\" as \"2006-01-02 15:04:05\": cannot parse "
        "\"nope\" as \"2006\"");
  CHECK(msg("2026-12-01") ==
        "parsing time \"2026-12-01\" as \"2006-01-02 15:04:05\": cannot "
        "parse \"\" as \"15\"");
  CHECK(msg("2026-12-01X10:00:00Z") ==
        "parsing time \"2026-12-01X10:00:00Z\" as \"2006-01-02 15:04:05\": "
        "cannot parse \"X10:00:00Z\" as \" \"");
  CHECK(msg("2026-13-01T00:00:00Z") ==
        "parsing time \"2026-13-01T00:00:00Z\": month out of range");
  CHECK(msg("2026-02-30 00:00:00") ==
        "parsing time \"2026-02-30 00:00:00\": day out of range");
  CHECK(msg("2026-01-01 00:00:00x") ==
        "parsing time \"2026-01-01 00:00:00x\": extra text: \"x\"");
  // ...which also takes what the stricter layouts refuse.
  CHECK(*ParseDateTime("2026-01-01 1:00:00") == 1767225600000 + 3600000);
  CHECK(*ParseDateTime("2026-01-01   00:00:00.25") == 1767225600250);
}

TEST_CASE("PostableAlerts: a Prometheus batch decodes", "[alerting][api]") {
  auto d = DecodePostableAlerts(
      R"([{"annotations":{"summary":"x"},"endsAt":"2026-01-01T00:04:00.000Z",)"
      R"("startsAt":"2026-01-01T00:00:00.000Z","generatorURL":)"
      R"("http://p:9090/graph?g0.expr=up+%3D%3D+0&g0.tab=1",)"
      R"("labels":{"alertname":"Down","job":"node"}},)"
      R"({"labels":{"alertname":"B","x":""},"Labels":{"alertname":"C"}}])");
  REQUIRE(std::holds_alternative<std::vector<PostableAlert>>(d));
  const auto& v = std::get<std::vector<PostableAlert>>(d);
  REQUIRE(v.size() == 2);
  CHECK(v[0].labels.size() == 2);
  CHECK(v[0].annotations.at(0).second == "x");
  CHECK(v[0].starts_at == 1767225600000);
  CHECK(v[0].ends_at == 1767225840000);
  CHECK(v[0].generator_url.find("g0.expr=up") != std::string::npos);
  // Keys match case-insensitively and the last duplicate wins (Go).
  REQUIRE(v[1].labels.size() == 1);
  CHECK(v[1].labels[0].second == "C");
  CHECK(v[1].starts_at == vigil::kMinTimestamp);
  CHECK(v[1].ends_at == vigil::kMinTimestamp);
}

TEST_CASE("PostableAlerts: null, empty times and trailing data",
          "[alerting][api]") {
  auto null = DecodePostableAlerts("null");
  REQUIRE(std::holds_alternative<std::vector<PostableAlert>>(null));
  CHECK(std::get<std::vector<PostableAlert>>(null).empty());
  auto d = DecodePostableAlerts(
      R"([{"labels":{"a":"b"},"startsAt":"","endsAt":null}] trailing)");
  REQUIRE(std::holds_alternative<std::vector<PostableAlert>>(d));
  CHECK(std::get<std::vector<PostableAlert>>(d)[0].starts_at ==
        vigil::kMinTimestamp);
  // Invalid UTF-8 becomes U+FFFD as Go decodes it.
  auto u = DecodePostableAlerts("[{\"labels\":{\"a\":\"\xff\"}}]");
  REQUIRE(std::holds_alternative<std::vector<PostableAlert>>(u));
  CHECK(std::get<std::vector<PostableAlert>>(u)[0].labels[0].second ==
        "\xef\xbf\xbd");
}

TEST_CASE("PostableAlerts: malformed bodies get go-openapi's errors",
          "[alerting][api]") {
  struct Case {
    const char* body;
    int status;
    const char* message;
  };
  const Case cases[] = {
      {"", 422, R"({"code":602,"message":"alerts in body is required"})"},
      {"  \n", 422, R"({"code":602,"message":"alerts in body is required"})"},
      {"[", 400,
       R"({"code":400,"message":"parsing alerts body from \"\" failed, because unexpected EOF"})"},
      {"{bad", 400,
       R"({"code":400,"message":"parsing alerts body from \"\" failed, because invalid character 'b' looking for beginning of object key string"})"},
      {"{}", 400,
       R"({"code":400,"message":"parsing alerts body from \"\" failed, because json: cannot unmarshal object into Go value of type models.PostableAlerts"})"},
      {"\"x\"", 400,
       R"({"code":400,"message":"parsing alerts body from \"\" failed, because json: cannot unmarshal string into Go value of type models.PostableAlerts"})"},
      {R"([{}])", 422,
       R"({"code":602,"message":"0.labels in body is required"})"},
      {R"([{"labels":null}])", 422,
       R"({"code":602,"message":"0.labels in body is required"})"},
      {R"([{"labels":[]}])", 400,
       R"({"code":400,"message":"parsing alerts body from \"\" failed, because json: cannot unmarshal array into Go struct field Alert.labels of type models.LabelSet"})"},
      {R"([{"labels":{"alertname":1}}])", 400,
       R"({"code":400,"message":"parsing alerts body from \"\" failed, because json: cannot unmarshal number into Go struct field Alert.labels of type string"})"},
      {R"([{"labels":{"a":"b"},"annotations":{"a":true}}])", 400,
       R"({"code":400,"message":"parsing alerts body from \"\" failed, because json: cannot unmarshal bool into Go struct field .annotations of type string"})"},
      {R"([{"labels":{"a":"b"},"startsAt":5}])", 400,
       R"({"code":400,"message":"parsing alerts body from \"\" failed, because json: cannot unmarshal number into Go struct field .startsAt of type string"})"},
      {R"([{"labels":{"a":"b"},"generatorURL":5}])", 400,
       R"({"code":400,"message":"parsing alerts body from \"\" failed, because json: cannot unmarshal number into Go struct field Alert.generatorURL of type string"})"},
      {R"([{"labels":{"a":"b"},"startsAt":"nope"}])", 400,
       R"({"code":400,"message":"parsing alerts body from \"\" failed, because parsing time \"nope\" as \"2006-01-02 15:04:05\": cannot parse \"nope\" as \"2006\""})"},
      {R"([{"generatorURL":"::x"}])", 422,
       R"({"code":601,"message":"0.generatorURL in body must be of type uri: \"::x\""})"},
      {R"([{"labels":{"a":"b"}},{"labels":{"a":"b"},"generatorURL":"%zz"}])",
       422,
       R"({"code":601,"message":"1.generatorURL in body must be of type uri: \"%zz\""})"},
  };
  for (const Case& c : cases) {
    INFO(c.body);
    ApiError e = ApiErrorOf(DecodePostableAlerts(c.body));
    CHECK(e.status == c.status);
    CHECK(e.body == c.message);
  }
  ApiError one = ApiErrorOf(DecodePostableAlerts("[1]"));
  CHECK(one.status == 400);
  CHECK(one.body.find("cannot unmarshal number into Go value of type struct "
                      "{ Annotations models.LabelSet") != std::string::npos);
}

TEST_CASE(
    "PostableAlerts: deep nesting and huge bodies neither crash nor "
    "stall",
    "[alerting][api]") {
  // A recursive parser would overflow the stack on this.
  std::string deep(2000000, '[');
  ApiError e = ApiErrorOf(DecodePostableAlerts(deep));
  CHECK(e.status == 400);
  std::string deep_obj;
  for (int i = 0; i < 500000; ++i) deep_obj += "{\"a\":";
  CHECK(ApiErrorOf(DecodePostableAlerts("[{\"labels\":" + deep_obj)).status ==
        400);
  // 100,000 alerts decode.
  std::string many = "[";
  for (int i = 0; i < 100000; ++i) {
    if (i > 0) many += ",";
    many += "{\"labels\":{\"alertname\":\"A" + std::to_string(i) + "\"}}";
  }
  many += "]";
  auto d = DecodePostableAlerts(many);
  REQUIRE(std::holds_alternative<std::vector<PostableAlert>>(d));
  CHECK(std::get<std::vector<PostableAlert>>(d).size() == 100000);
}

TEST_CASE("PostableSilence: amtool's body decodes", "[alerting][api]") {
  auto d = DecodePostableSilence(
      R"({"comment":"c","createdBy":"a","endsAt":"2026-12-01T16:44:09.138Z",)"
      R"("matchers":[{"isEqual":true,"isRegex":false,"name":"alertname",)"
      R"("value":"X"},{"isRegex":true,"name":"foo","value":"b.r"},)"
      R"({"isEqual":false,"isRegex":false,"name":"n","value":""}],)"
      R"("startsAt":"2026-12-01T14:44:09.138Z","id":"abc"})");
  REQUIRE(std::holds_alternative<PostableSilence>(d));
  const auto& s = std::get<PostableSilence>(d);
  CHECK(s.id == "abc");
  CHECK(s.comment == "c");
  CHECK(s.created_by == "a");
  REQUIRE(s.matchers.size() == 3);
  CHECK(s.matchers[1].is_equal);  // absent isEqual is true
  CHECK(s.matchers[1].is_regex);
  CHECK_FALSE(s.matchers[2].is_equal);
  CHECK(s.ends_at - s.starts_at == 2 * 3600 * 1000);
}

TEST_CASE("PostableSilence: malformed bodies get go-openapi's errors",
          "[alerting][api]") {
  const std::string times =
      R"("startsAt":"2026-12-01T14:00:00Z","endsAt":"2026-12-02T14:00:00Z")";
  const std::string ok_matchers =
      R"("matchers":[{"name":"a","value":"b","isRegex":false}])";
  struct Case {
    std::string body;
    int status;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", 422, R"({"code":602,"message":"silence in body is required"})"},
      {"null", 422, R"({"code":602,"message":"silence in body is required"})"},
      {"{bad", 400,
       R"({"code":400,"message":"parsing silence body from \"\" failed, because invalid character 'b' looking for beginning of object key string"})"},
      {"[]", 400,
       R"({"code":400,"message":"parsing silence body from \"\" failed, because json: cannot unmarshal array into Go value of type struct { ID string \"json:\\\"id,omitempty\\\"\" }"})"},
      {R"({"matchers":[{"name":"a","value":"b"}]})", 422,
       R"({"code":602,"message":"comment in body is required"})"},
      {"{" + ok_matchers + "," + times + R"(,"createdBy":"a"})", 422,
       R"({"code":602,"message":"comment in body is required"})"},
      {"{" + ok_matchers + "," + times + R"(,"comment":"c"})", 422,
       R"({"code":602,"message":"createdBy in body is required"})"},
      {"{" + ok_matchers +
           R"(,"endsAt":"2026-12-02T14:00:00Z","createdBy":"a","comment":"c"})",
       422, R"({"code":602,"message":"startsAt in body is required"})"},
      {"{" + ok_matchers + R"(,"createdBy":"a","comment":"c"})", 422,
       R"({"code":602,"message":"endsAt in body is required"})"},
      {"{" + times + R"(,"createdBy":"a","comment":"c"})", 422,
       R"({"code":602,"message":"matchers in body is required"})"},
      {R"({"matchers":[],)" + times + R"(,"createdBy":"a","comment":"c"})", 422,
       R"({"code":612,"message":"matchers in body should have at least 1 items"})"},
      {R"({"matchers":[{"name":"a","value":"b"}],)" + times +
           R"(,"createdBy":"a","comment":"c"})",
       422,
       R"({"code":602,"message":"matchers.0.isRegex in body is required"})"},
      {R"({"matchers":[{"value":"b","isRegex":false}],)" + times +
           R"(,"createdBy":"a","comment":"c"})",
       422, R"({"code":602,"message":"matchers.0.name in body is required"})"},
      {R"({"matchers":[{"name":"a","isRegex":false}],)" + times +
           R"(,"createdBy":"a","comment":"c"})",
       422, R"({"code":602,"message":"matchers.0.value in body is required"})"},
      {R"({"matchers":{},)" + times + R"(,"createdBy":"a","comment":"c"})", 400,
       R"({"code":400,"message":"parsing silence body from \"\" failed, because json: cannot unmarshal object into Go struct field Silence.matchers of type models.Matchers"})"},
      {R"({"matchers":[{"name":"a","value":"b","isRegex":"no"}],)" + times +
           R"(,"createdBy":"a","comment":"c"})",
       400,
       R"({"code":400,"message":"parsing silence body from \"\" failed, because json: cannot unmarshal string into Go struct field Matcher.matchers.isRegex of type bool"})"},
      {"{" + ok_matchers +
           R"(,"startsAt":"bad","endsAt":"2026-12-02T14:00:00Z","createdBy":"a","comment":"c"})",
       400,
       R"({"code":400,"message":"parsing silence body from \"\" failed, because parsing time \"bad\" as \"2006-01-02 15:04:05\": cannot parse \"bad\" as \"2006\""})"},
  };
  for (const Case& c : cases) {
    INFO(c.body);
    ApiError e = ApiErrorOf(DecodePostableSilence(c.body));
    CHECK(e.status == c.status);
    CHECK(e.body == c.message);
  }
}

TEST_CASE("Content-Type must be application/json", "[alerting][api]") {
  CHECK_FALSE(CheckJsonContentType("application/json"));
  CHECK_FALSE(CheckJsonContentType("Application/JSON; charset=utf-8"));
  auto plain = CheckJsonContentType("text/plain");
  REQUIRE(plain);
  CHECK(plain->status == 415);
  CHECK(
      plain->body ==
      R"({"code":415,"message":"unsupported media type \"text/plain\", only [application/json] are allowed"})");
  auto none = CheckJsonContentType(std::nullopt);
  REQUIRE(none);
  CHECK(none->body.find("application/octet-stream") != std::string::npos);
}

TEST_CASE("uri format: what Go's url.Parse refuses", "[alerting][api]") {
  for (const char* ok : {"http://p:9090/graph?g0.expr=up", "/relative", "x",
                         "mailto:a@b", "http://h/%41", ""}) {
    INFO(ok);
    CHECK(IsUri(ok));
  }
  for (const char* bad :
       {"::x", ":x", "http://h/%zz", "http://h/%4", "a b\x01", "1http://x"}) {
    INFO(bad);
    CHECK_FALSE(IsUri(bad));
  }
}

TEST_CASE("booleans are swag.ConvertBool's", "[alerting][api]") {
  for (const char* t : {"true", "TRUE", "1", "yes", "y", "t", "on", "ok",
                        "checked", "selected", "enabled"}) {
    CHECK(ParseOpenApiBool(t));
  }
  for (const char* f : {"false", "0", "no", "maybe", "", "tru"}) {
    CHECK_FALSE(ParseOpenApiBool(f));
  }
}

TEST_CASE("/api/v2/status masks the values Alertmanager keeps secret",
          "[alerting][api]") {
  CHECK(MaskSecrets("global:\n  smtp_auth_password: hunter2  # old\n"
                    "  smtp_from: a@b\n") ==
        "global:\n  smtp_auth_password: <secret>  # old\n  smtp_from: a@b\n");
  CHECK(MaskSecrets("- {api_url: 'https://h/s/x', channel: '#a'}\n") ==
        "- {api_url: <secret>, channel: '#a'}\n");
  CHECK(MaskSecrets("basic_auth: {username: u, \"password\": \"a, b\"}") ==
        "basic_auth: {username: u, \"password\": <secret>}");
  CHECK(
      MaskSecrets("  - bot_token: |\n      abc\n      def\n    chat_id: 1\n") ==
      "  - bot_token: <secret>\n    chat_id: 1\n");
  CHECK(MaskSecrets("url: http://h/x?password=1\ntext: 'password: x'\n") ==
        "url: http://h/x?password=1\ntext: 'password: x'\n");
  CHECK(MaskSecrets("authorization:\n  credentials: tok\n# secret: x\n") ==
        "authorization:\n  credentials: <secret>\n# secret: x\n");
  CHECK(MaskSecrets("") == "");
  CHECK(MaskSecrets("a: 1") == "a: 1");
}

TEST_CASE("model.LabelSet.Before orders as Alertmanager", "[alerting][api]") {
  CHECK(LabelSetBefore(Labels{{"a", "1"}}, Labels{{"a", "1"}, {"b", "1"}}));
  CHECK_FALSE(
      LabelSetBefore(Labels{{"a", "1"}, {"b", "1"}}, Labels{{"a", "1"}}));
  CHECK(LabelSetBefore(Labels{{"a", "1"}}, Labels{{"a", "2"}}));
  // {b} before {a}: at name "a" the first lacks it.
  CHECK(LabelSetBefore(Labels{{"b", "1"}}, Labels{{"a", "1"}}));
  CHECK_FALSE(LabelSetBefore(Labels{{"a", "1"}}, Labels{{"b", "1"}}));
  CHECK_FALSE(LabelSetBefore(Labels{{"a", "1"}}, Labels{{"a", "1"}}));
}

}  // namespace

// --- over HTTP, and side by side with a real Alertmanager ------------------

namespace {

using vigil::testing::Http;
using vigil::testing::Normalizer;

// $NOW, $NOW+1h, $NOW-10m -> the same RFC 3339 text for both servers.
std::string ExpandTimes(const std::string& line, vigil::Timestamp now) {
  static const std::regex kNow(R"(\$NOW(([+-])(\d+[smhd]))?)");
  std::string out;
  auto begin = std::sregex_iterator(line.begin(), line.end(), kNow);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out += line.substr(last, m.position() - last);
    vigil::Timestamp t = now;
    if (m[1].matched) {
      int64_t d = *vigil::ParseDuration(m[3].str());
      t += m[2].str() == "+" ? d : -d;
    }
    out += FormatDateTime(t);
    last = m.position() + m.length();
  }
  return out + line.substr(last);
}

std::string ExpandIds(const std::string& line, const Normalizer& n) {
  static const std::regex kId(R"(\$S(\d+))");
  std::string out;
  size_t last = 0;
  for (auto it = std::sregex_iterator(line.begin(), line.end(), kId);
       it != std::sregex_iterator(); ++it) {
    out += line.substr(last, it->position() - last);
    out += n.IdNumber(std::stoi((*it)[1].str()));
    last = it->position() + it->length();
  }
  return out + line.substr(last);
}

struct AlertsApiAnswer {
  int status = 0;
  std::string content_type, allow, body;
  bool operator==(const AlertsApiAnswer&) const = default;
};

std::ostream& operator<<(std::ostream& os, const AlertsApiAnswer& a) {
  return os << a.status << " [" << a.content_type << "] [allow " << a.allow
            << "] " << a.body;
}

AlertsApiAnswer Ask(vigil::net::HttpClient* c, const std::string& base,
                    const std::string& line, Normalizer* n) {
  std::istringstream in(ExpandIds(line, *n));
  std::string method, path, body;
  in >> method >> path;
  std::getline(in, body);
  if (!body.empty() && body[0] == ' ') body.erase(0, 1);
  std::string content_type = "application/json";
  if (size_t plus = method.find('+'); plus != std::string::npos) {
    content_type = method.substr(plus + 1);
    method.resize(plus);
  }
  vigil::net::FetchResult r = Http(c, method, base + path, body, content_type);
  AlertsApiAnswer a;
  a.status = r.error.empty() ? r.status : -1;
  a.content_type = vigil::testing::Header(r, "content-type");
  // Alertmanager lists the allowed methods in Go's map order, which varies.
  a.allow = vigil::testing::Header(r, "allow");
  if (a.status == 405) {
    std::vector<std::string> ms = absl::StrSplit(a.allow, ',');
    std::sort(ms.begin(), ms.end());
    const std::string sorted = absl::StrJoin(ms, ",");
    if (size_t at = r.body.find("[" + a.allow + "]"); at != std::string::npos) {
      r.body.replace(at + 1, a.allow.size(), sorted);
    }
    a.allow = sorted;
  }
  a.body = r.body.empty() ? "" : n->Json(r.body);
  if (!r.error.empty()) a.body = r.error;
  return a;
}

TEST_CASE("the v2 API answers as a real Alertmanager does, request by request",
          "[alerting][api][peer]") {
  if (!vigil::testutil::HaveCommand(vigil::testing::kAlertmanagerBinary)) {
    WARN("prometheus-alertmanager not installed: test skipped");
    return;
  }
  vigil::testutil::TempDir dir;
  const std::string data =
      std::string(VIGIL_SOURCE_DIR) + "/tests/server/testdata/alerting_api/";
  vigil::net::HttpClient client;
  vigil::testing::RealAlertmanager am;
  vigil::testing::VigilWithRouter vigil;
  REQUIRE(am.Start(dir, data + "alertmanager.yml", &client));
  REQUIRE(vigil.Start(dir, data + "alertmanager.yml", &client));

  const vigil::Timestamp now = vigil::Clock::Real()->NowMs();
  Normalizer am_n(now), vigil_n(now);
  std::ifstream script(data + "requests.txt");
  REQUIRE(script);
  std::string line;
  int requests = 0;
  while (std::getline(script, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("SLEEP ", 0) == 0) {
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::stoi(line.substr(6))));
      continue;
    }
    line = ExpandTimes(line, now);
    AlertsApiAnswer want = Ask(&client, am.url, line, &am_n);
    AlertsApiAnswer got = Ask(&client, vigil.url, line, &vigil_n);
    INFO(line);
    CHECK(got == want);
    ++requests;
  }
  CHECK(requests > 80);

  // CORS as rs/cors's default answers it: any origin, simple methods.
  const vigil::net::HeaderList origin = {{"Origin", "http://grafana:3000"}};
  for (const char* path : {"/api/v2/receivers", "/api/v2/nothing"}) {
    auto want = Http(&client, "GET", am.url + path, "", "", origin);
    auto got = Http(&client, "GET", vigil.url + path, "", "", origin);
    INFO(path);
    CHECK(got.status == want.status);
    CHECK(vigil::testing::Header(got, "access-control-allow-origin") ==
          vigil::testing::Header(want, "access-control-allow-origin"));
  }
  for (const char* method : {"GET", "POST", "DELETE"}) {
    vigil::net::HeaderList preflight = origin;
    preflight.emplace_back("Access-Control-Request-Method", method);
    auto want =
        Http(&client, "OPTIONS", am.url + "/api/v2/alerts", "", "", preflight);
    auto got = Http(&client, "OPTIONS", vigil.url + "/api/v2/alerts", "", "",
                    preflight);
    INFO(method);
    CHECK(got.status == want.status);
    for (const char* h :
         {"access-control-allow-origin", "access-control-allow-methods"}) {
      CHECK(vigil::testing::Header(got, h) == vigil::testing::Header(want, h));
    }
  }
  INFO(vigil::testutil::ReadFile(dir.Sub("vigil.log")));
  CHECK(vigil.Stop() == 0);
}

TEST_CASE("the v2 API survives bodies too large, too deep and cut short",
          "[alerting][api]") {
  vigil::testutil::TempDir dir;
  const std::string data =
      std::string(VIGIL_SOURCE_DIR) + "/tests/server/testdata/alerting_api/";
  vigil::net::HttpClient client;
  vigil::testing::VigilWithRouter vigil;
  REQUIRE(vigil.Start(dir, data + "alertmanager.yml", &client));
  const std::string alerts = vigil.url + "/api/v2/alerts";
  // Above the server's 16 MiB body limit: refused, not read into memory.
  // The server answers 413 and closes after draining a little of the rest;
  // a client still uploading may then see the reset before the answer
  // (as with Go's server), so either is a refusal, and the server must
  // answer the next request.
  std::string huge = "[" + std::string(17 << 20, ' ') + "]";
  for (const std::string path : {"/api/v2/alerts", "/api/v2/silences"}) {
    INFO(path);
    auto r = Http(&client, "POST", vigil.url + path, huge);
    CHECK((r.status == 413 || (r.status == 0 && !r.error.empty())));
    CHECK(Http(&client, "GET", vigil.url + "/api/v2/status", "").status == 200);
  }
  // Nesting that would overflow a recursive parser.
  CHECK(Http(&client, "POST", alerts, std::string(4 << 20, '[')).status == 400);
  CHECK(Http(&client, "POST", vigil.url + "/api/v2/silences",
             std::string(4 << 20, '{'))
            .status == 400);
  // A long filter and a pathological receiver regex; a URL beyond the
  // server's limit is refused.
  std::string filter(3000, 'a');
  CHECK(Http(&client, "GET", alerts + "?filter=" + filter + "%3D~" + filter)
            .status == 200);
  std::string endless(200000, 'a');
  CHECK(Http(&client, "GET", alerts + "?filter=a%3D" + endless).status == 414);
  CHECK(Http(&client, "GET", alerts + "?receiver=(a%2A)%2A%24").status == 200);
  // 20,000 alerts in one post are taken and listed.
  std::string many = "[";
  for (int i = 0; i < 20000; ++i) {
    if (i > 0) many += ",";
    many += "{\"labels\":{\"alertname\":\"Many\",\"i\":\"" + std::to_string(i) +
            "\"}}";
  }
  many += "]";
  CHECK(Http(&client, "POST", alerts, many).status == 200);
  auto listed = Http(&client, "GET", alerts + "?filter=alertname%3DMany");
  CHECK(listed.status == 200);
  size_t count = 0;
  for (size_t p = listed.body.find("\"fingerprint\""); p != std::string::npos;
       p = listed.body.find("\"fingerprint\"", p + 1)) {
    ++count;
  }
  CHECK(count == 20000);
  // The server still answers everything else.
  CHECK(Http(&client, "GET", vigil.url + "/-/healthy").status == 200);
  INFO(vigil::testutil::ReadFile(dir.Sub("vigil.log")));
  CHECK(vigil.Stop() == 0);
}

TEST_CASE("without --alertmanager.config.file /api/v2 is not served",
          "[alerting][api]") {
  vigil::testutil::TempDir dir;
  std::ofstream(dir.Sub("prometheus.yml")) << "global: {}\n";
  const int port = vigil::testutil::FreePort();
  vigil::testutil::Process p(
      {VIGIL_BINARY, "--config.file=" + dir.Sub("prometheus.yml"),
       "--storage.tsdb.path=" + dir.Sub("data"),
       "--web.listen-address=127.0.0.1:" + std::to_string(port)},
      dir.Sub("vigil.log"));
  vigil::net::HttpClient client;
  const std::string url = vigil::testing::Url(port);
  REQUIRE(vigil::testing::WaitStatus(&client, url + "/-/ready"));
  auto r = Http(&client, "GET", url + "/api/v2/alerts");
  CHECK(r.status == 404);
  CHECK(r.body == "404 page not found\n");
  p.Signal(SIGTERM);
  CHECK(p.Wait(20000) == 0);
}

TEST_CASE(
    "a bad alertmanager.yml stops start-up and fails a reload, which "
    "keeps the running one",
    "[alerting][api]") {
  vigil::testutil::TempDir dir;
  const std::string am = dir.Sub("am.yml");
  std::ofstream(am) << "route: {receiver: x}\nreceivers: [{name: y}]\n";
  std::ofstream(dir.Sub("prometheus.yml")) << "global: {}\n";
  const int port = vigil::testutil::FreePort();
  vigil::testutil::Process bad(
      {VIGIL_BINARY, "--config.file=" + dir.Sub("prometheus.yml"),
       "--storage.tsdb.path=" + dir.Sub("data"),
       "--web.listen-address=127.0.0.1:" + std::to_string(port),
       "--alertmanager.config.file=" + am},
      dir.Sub("bad.log"));
  CHECK(bad.Wait(20000) == 1);
  CHECK(vigil::testutil::ReadFile(dir.Sub("bad.log")).find("am.yml") !=
        std::string::npos);

  std::ofstream(am) << "route: {receiver: x}\nreceivers: [{name: x}]\n";
  vigil::net::HttpClient client;
  vigil::testing::VigilWithRouter vigil;
  REQUIRE(vigil.Start(dir, am, &client));
  CHECK(Http(&client, "GET", vigil.url + "/api/v2/receivers").body ==
        R"([{"name":"x"}])");
  // A broken file: the reload fails and the old config keeps serving.
  std::ofstream(am)
      << "route: {receiver: x}\nreceivers: [{name: x}]\nbogus: 1\n";
  auto failed = Http(&client, "POST", vigil.url + "/-/reload");
  CHECK(failed.status == 500);
  CHECK(failed.body.find("bogus") != std::string::npos);
  CHECK(Http(&client, "GET", vigil.url + "/api/v2/receivers").body ==
        R"([{"name":"x"}])");
  // A good one applies with the prometheus.yml.
  std::ofstream(am) << "route: {receiver: z}\nreceivers: [{name: z}, "
                       "{name: x}]\n";
  CHECK(Http(&client, "POST", vigil.url + "/-/reload").status == 200);
  CHECK(Http(&client, "GET", vigil.url + "/api/v2/receivers").body ==
        R"([{"name":"z"},{"name":"x"}])");
  // All or nothing: a good alertmanager.yml beside a broken prometheus.yml
  // is not applied.
  std::ofstream(am) << "route: {receiver: w}\nreceivers: [{name: w}]\n";
  std::ofstream(dir.Sub("prometheus.yml")) << "global: {bogus: 1}\n";
  CHECK(Http(&client, "POST", vigil.url + "/-/reload").status == 500);
  CHECK(Http(&client, "GET", vigil.url + "/api/v2/receivers").body ==
        R"([{"name":"z"},{"name":"x"}])");
  // SIGHUP reloads both once both are good.
  std::ofstream(dir.Sub("prometheus.yml")) << "global: {}\n";
  vigil.process->Signal(SIGHUP);
  std::string receivers;
  for (int i = 0; i < 100; ++i) {
    receivers = Http(&client, "GET", vigil.url + "/api/v2/receivers").body;
    if (receivers == R"([{"name":"w"}])") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(receivers == R"([{"name":"w"}])");
  std::ofstream(am) << "route: {receiver: z}\nreceivers: [{name: z}, "
                       "{name: x}]\n";
  CHECK(Http(&client, "POST", vigil.url + "/-/reload").status == 200);
  auto status = Http(&client, "GET", vigil.url + "/api/v2/status");
  CHECK(status.body.find(R"({"cluster":{"peers":[],"status":"disabled"},)"
                         R"("config":{"original":"route: {receiver: z})") == 0);
  INFO(vigil::testutil::ReadFile(dir.Sub("vigil.log")));
  CHECK(vigil.Stop() == 0);
}

}  // namespace
}  // namespace vigil::web::api::v2
