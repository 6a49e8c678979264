// The WeCom, DingTalk and Feishu group robots against a real HTTP server on
// 127.0.0.1: payloads, the signatures (recomputed here with Python's hmac),
// and the services' errcode / code answers.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "server/alerting/integration.h"
#include "tests/server/alerting_receivers_testutil.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil::alerting {
namespace {

using testing::Answer;
using testing::Deps;
using testing::In;
using testing::NowMs;
using testing::Sink;
using testing::TwoAlerts;

const Answer kWeComOk{200, "{\"errcode\":0,\"errmsg\":\"ok\"}",
                      "application/json"};
const Answer kFeishuOk{200, "{\"code\":0,\"msg\":\"success\",\"data\":{}}",
                       "application/json"};

std::unique_ptr<Integration> BuildRobot(const config::am::Receiver& r) {
  auto built = BuildIntegrations(r, Deps());
  INFO((built.ok() ? "" : std::string(built.status().message())));
  REQUIRE(built.ok());
  REQUIRE(built->size() == 1);
  return std::move((*built)[0]);
}

config::am::RobotConfig Robot(const std::string& url) {
  config::am::RobotConfig c;
  c.webhook_url = url;
  c.title = "Disk full";
  c.message = "**gpu-node-0** at 97%";
  return c;
}

// Python's hmac and base64 (the reference the services document).
std::string PySign(const std::string& key, const std::string& data) {
  testutil::RunResult r = testutil::Run(
      "python3 -c 'import base64,hashlib,hmac,sys; "
      "print(base64.b64encode(hmac.new(sys.argv[1].encode(), "
      "sys.argv[2].encode(), hashlib.sha256).digest()).decode())' '" +
      key + "' '" + data + "'");
  REQUIRE(r.code == 0);
  std::string s = r.out;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

TEST_CASE("wecom posts a markdown message and checks errcode",
          "[alerting][receivers][robots]") {
  Sink sink;
  sink.Script({kWeComOk});
  config::am::Receiver rc;
  rc.name = "im";
  rc.wecom_configs = {Robot(sink.url("/cgi-bin/webhook/send?key=K1"))};
  auto in = BuildRobot(rc);
  CHECK(in->name() == "wecom");
  NotifyResult r = in->Notify(TwoAlerts(NowMs()), In(5000));
  INFO(r.status.message());
  REQUIRE(r.status.ok());
  auto got = sink.got();
  REQUIRE(got.size() == 1);
  CHECK(got[0].path == "/cgi-bin/webhook/send");
  CHECK(got[0].Param("key") == "K1");
  CHECK(got[0].body ==
        "{\"msgtype\":\"markdown\",\"markdown\":{\"content\":\"# Disk "
        "full\\n\\n**gpu-node-0** at 97%\"}}");

  sink.Script(
      {Answer{200, "{\"errcode\":93000,\"errmsg\":\"invalid webhook url\"}",
              "application/json"}});
  r = in->Notify(TwoAlerts(NowMs()), In(5000));
  CHECK_FALSE(r.retry);
  CHECK(std::string(r.status.message()) ==
        "wecom: error code 93000: invalid webhook url");
  sink.Script(
      {Answer{200, "{\"errcode\":45009,\"errmsg\":\"api freq out of limit\"}",
              "application/json"}});
  r = in->Notify(TwoAlerts(NowMs()), In(5000));
  CHECK(r.retry);
  sink.Script({Answer{200, "<html>gateway</html>", "text/html"}});
  r = in->Notify(TwoAlerts(NowMs()), In(5000));
  CHECK_FALSE(r.status.ok());
  CHECK(std::string(r.status.message()).find("not JSON") != std::string::npos);
  sink.Script({Answer{502, "bad gateway"}});
  CHECK(in->Notify(TwoAlerts(NowMs()), In(5000)).retry);

  // Content is cut at 4096 bytes, never inside a rune.
  sink.Script({kWeComOk});
  config::am::RobotConfig big = Robot(sink.url("/big"));
  big.title.clear();
  big.message.clear();
  for (int i = 0; i < 2000; ++i) big.message += "é";  // 4000 bytes
  big.message += std::string(200, 'y');
  rc.wecom_configs = {big};
  auto in2 = BuildRobot(rc);
  REQUIRE(in2->Notify(TwoAlerts(NowMs()), In(5000)).status.ok());
  rapidjson::Document d;
  d.Parse(sink.got().back().body.c_str());
  REQUIRE(d.IsObject());
  std::string content = d["markdown"]["content"].GetString();
  CHECK(content.size() <= 4096);
  CHECK(content.size() >= 4090);
  CHECK(content.substr(content.size() - 3) == "…");

  config::am::RobotConfig signed_wecom = Robot(sink.url());
  signed_wecom.secret = "s";
  rc.wecom_configs = {signed_wecom};
  auto built = BuildIntegrations(rc, Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(built.status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("dingtalk signs the URL with HMAC-SHA256 of timestamp and secret",
          "[alerting][receivers][robots]") {
  if (!testutil::HaveCommand("python3")) {
    WARN("skipped: python3 not installed");
    return;
  }
  Sink sink;
  sink.Script({kWeComOk});
  config::am::Receiver rc;
  rc.name = "im";
  config::am::RobotConfig c = Robot(sink.url("/robot/send?access_token=T0"));
  testutil::TempDir dir;
  std::ofstream(dir.Sub("secret")) << "SEC0123abc\n";
  c.secret_file = dir.Sub("secret");
  rc.dingtalk_configs = {c};
  auto in = BuildRobot(rc);
  CHECK(in->name() == "dingtalk");
  Timestamp before = NowMs();
  NotifyResult r = in->Notify(TwoAlerts(NowMs()), In(5000));
  INFO(r.status.message());
  REQUIRE(r.status.ok());
  auto got = sink.got();
  REQUIRE(got.size() == 1);
  CHECK(got[0].path == "/robot/send");
  CHECK(got[0].Param("access_token") == "T0");
  std::string ts = got[0].Param("timestamp");
  REQUIRE(!ts.empty());
  int64_t t = std::stoll(ts);
  CHECK(t >= before);
  CHECK(t <= NowMs());
  // The query parser decoded %2B etc.: compare with Python's signature.
  CHECK(got[0].Param("sign") == PySign("SEC0123abc", ts + "\n" + "SEC0123abc"));
  CHECK(got[0].body ==
        "{\"msgtype\":\"markdown\",\"markdown\":{\"title\":\"Disk full\","
        "\"text\":\"### Disk full\\n\\n**gpu-node-0** at 97%\"}}");

  sink.Script({Answer{200, "{\"errcode\":310000,\"errmsg\":\"sign not match\"}",
                      "application/json"}});
  r = in->Notify(TwoAlerts(NowMs()), In(5000));
  CHECK_FALSE(r.retry);
  CHECK(std::string(r.status.message()) ==
        "dingtalk: error code 310000: sign not match");
  sink.Script({Answer{200, "{\"errcode\":130101,\"errmsg\":\"send too fast\"}",
                      "application/json"}});
  CHECK(in->Notify(TwoAlerts(NowMs()), In(5000)).retry);

  // Without a secret the URL is left alone.
  sink.Script({kWeComOk});
  rc.dingtalk_configs = {Robot(sink.url("/robot/send?access_token=T1"))};
  auto unsigned_in = BuildRobot(rc);
  REQUIRE(unsigned_in->Notify(TwoAlerts(NowMs()), In(5000)).status.ok());
  CHECK(sink.got().back().Param("sign").empty());
  CHECK(sink.got().back().params.size() == 1);
}

TEST_CASE("feishu sends a signed interactive card and checks code",
          "[alerting][receivers][robots]") {
  if (!testutil::HaveCommand("python3")) {
    WARN("skipped: python3 not installed");
    return;
  }
  Sink sink;
  sink.Script({kFeishuOk});
  config::am::Receiver rc;
  rc.name = "im";
  config::am::RobotConfig c = Robot(sink.url("/open-apis/bot/v2/hook/abc"));
  c.secret = "fs-secret";
  rc.feishu_configs = {c};
  auto in = BuildRobot(rc);
  CHECK(in->name() == "feishu");
  Timestamp before = NowMs() / 1000;
  NotifyResult r = in->Notify(TwoAlerts(NowMs()), In(5000));
  INFO(r.status.message());
  REQUIRE(r.status.ok());
  auto got = sink.got();
  REQUIRE(got.size() == 1);
  CHECK(got[0].path == "/open-apis/bot/v2/hook/abc");
  rapidjson::Document d;
  d.Parse(got[0].body.c_str());
  REQUIRE(d.IsObject());
  std::string ts = d["timestamp"].GetString();
  CHECK(std::stoll(ts) >= before);
  CHECK(std::stoll(ts) <= NowMs() / 1000);
  // Feishu's scheme: the key is timestamp + "\n" + secret, the data empty.
  CHECK(std::string(d["sign"].GetString()) ==
        PySign(ts + "\n" + "fs-secret", ""));
  CHECK(std::string(d["msg_type"].GetString()) == "interactive");
  const auto& card = d["card"];
  CHECK(std::string(card["header"]["title"]["content"].GetString()) ==
        "Disk full");
  CHECK(std::string(card["header"]["template"].GetString()) == "red");
  CHECK(std::string(card["elements"][0]["content"].GetString()) ==
        "**gpu-node-0** at 97%");

  Notification resolved = TwoAlerts(NowMs());
  resolved.alerts.erase(resolved.alerts.begin());
  REQUIRE(in->Notify(resolved, In(5000)).status.ok());
  CHECK(sink.got().back().body.find("\"template\":\"green\"") !=
        std::string::npos);

  sink.Script({Answer{200, "{\"code\":19021,\"msg\":\"sign match fail\"}",
                      "application/json"}});
  r = in->Notify(TwoAlerts(NowMs()), In(5000));
  CHECK_FALSE(r.retry);
  CHECK(std::string(r.status.message()) ==
        "feishu: error code 19021: sign match fail");
  sink.Script({Answer{200, "{\"code\":11232,\"msg\":\"frequency limited\"}",
                      "application/json"}});
  CHECK(in->Notify(TwoAlerts(NowMs()), In(5000)).retry);
  // The older answer shape.
  sink.Script({Answer{200, "{\"StatusCode\":0,\"StatusMessage\":\"success\"}",
                      "application/json"}});
  CHECK(in->Notify(TwoAlerts(NowMs()), In(5000)).status.ok());
}

TEST_CASE("robots: malformed configs are errors naming the receiver",
          "[alerting][receivers][robots]") {
  config::am::Receiver rc;
  rc.name = "im";
  rc.feishu_configs = {config::am::RobotConfig{}};
  auto built = BuildIntegrations(rc, Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(std::string(built.status().message()) ==
        "receiver \"im\": feishu_configs[0]: one of webhook_url or "
        "webhook_url_file must be set");

  config::am::RobotConfig c = Robot("http://127.0.0.1:1/");
  c.secret_file = "/nonexistent/vigil/secret";
  rc.feishu_configs.clear();
  rc.dingtalk_configs = {c};
  built = BuildIntegrations(rc, Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(std::string(built.status().message())
            .find("receiver \"im\": dingtalk_configs[0]: read secret_file "
                  "/nonexistent/vigil/secret") == 0);

  c = Robot("");
  c.webhook_url_file = "/nonexistent/vigil/url";
  rc.dingtalk_configs = {c};
  built = BuildIntegrations(rc, Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(std::string(built.status().message()).find("webhook_url_file") !=
        std::string::npos);
}

}  // namespace
}  // namespace vigil::alerting
