// email_configs against a real SMTP peer: a small Python SMTP sink
// (tests/server/testdata/alerting_receivers/smtp_sink.py, plain SMTP) that
// records the session, and Python's email package reading the message
// back. Also the MIME pieces (address lists, Q-encoding, quoted-printable).
#include <rapidjson/document.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "server/alerting/integration.h"
#include "server/alerting/receivers/email_mime.h"
#include "tests/server/alerting_receivers_testutil.h"
#include "tests/server/net_testutil.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil::alerting {
namespace {

using testing::Deps;
using testing::In;
using testing::NowMs;
using testing::TwoAlerts;

const std::string kSinkScript =
    std::string(VIGIL_SOURCE_DIR) +
    "/tests/server/testdata/alerting_receivers/smtp_sink.py";

// The sink, started in its own directory; port() once it listens.
class SmtpSink {
 public:
  explicit SmtpSink(std::vector<std::string> flags = {}) {
    std::vector<std::string> argv = {"python3", kSinkScript, dir_.path()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    proc_ = std::make_unique<testutil::Process>(argv, dir_.Sub("log"));
    for (int i = 0; i < 100 && !std::filesystem::exists(dir_.Sub("port"));
         ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    port_ = std::atoi(testutil::ReadFile(dir_.Sub("port")).c_str());
  }
  int port() const { return port_; }
  std::string smarthost() const { return "127.0.0.1:" + std::to_string(port_); }
  // The recorded session (waits for the sink to write it).
  std::string Session() {
    for (int i = 0;
         i < 100 && !std::filesystem::exists(dir_.Sub("session.json")); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return testutil::ReadFile(dir_.Sub("session.json"));
  }
  std::string log() const { return testutil::ReadFile(dir_.Sub("log")); }

 private:
  testutil::TempDir dir_;
  std::unique_ptr<testutil::Process> proc_;
  int port_ = 0;
};

std::string EmailStr(const rapidjson::Value& v, const char* key) {
  auto it = v.FindMember(key);
  return it != v.MemberEnd() && it->value.IsString() ? it->value.GetString()
                                                     : "";
}

config::am::Receiver EmailReceiver(const config::am::EmailConfig& e) {
  config::am::Receiver r;
  r.name = "mail";
  r.email_configs.push_back(e);
  return r;
}

config::am::EmailConfig BaseConfig(const std::string& smarthost) {
  config::am::EmailConfig e;
  e.to = "Ops Team <ops@example.org>, oncall@example.org";
  e.from = "Vigil <vigil@example.org>";
  e.smarthost = smarthost;
  e.hello = "vigil.test";
  e.require_tls = false;
  e.headers["Subject"] = "Disk full ✓ on gpu-node-0";
  e.text = "plain text: 1 + 1 = 2\n.a line starting with a dot\nend";
  e.html = "<p>html <b>body</b></p>";
  return e;
}

TEST_CASE("email: one message over SMTP with auth, headers and both parts",
          "[alerting][receivers][email]") {
  if (!testutil::HaveCommand("python3")) {
    WARN("skipped: python3 not installed");
    return;
  }
  SmtpSink sink;
  REQUIRE(sink.port() > 0);
  testutil::TempDir dir;
  std::ofstream(dir.Sub("pw")) << "pa ss\n";
  config::am::EmailConfig e = BaseConfig(sink.smarthost());
  e.auth_username = "alice";
  e.auth_password_file = dir.Sub("pw");
  auto built = BuildIntegrations(EmailReceiver(e), Deps());
  INFO((built.ok() ? "" : std::string(built.status().message())));
  REQUIRE(built.ok());
  auto& in = (*built)[0];
  CHECK(in->name() == "email");
  CHECK_FALSE(in->send_resolved());

  NotifyResult r = in->Notify(TwoAlerts(NowMs()), In(10000));
  INFO(r.status.message() << "\nsink log: " << sink.log());
  REQUIRE(r.status.ok());
  std::string session = sink.Session();
  INFO("session: " << session);
  rapidjson::Document d;
  d.Parse(session.c_str());
  REQUIRE(d.IsObject());
  CHECK(EmailStr(d, "ehlo") == "vigil.test");
  REQUIRE(d["auth"].IsObject());
  CHECK(EmailStr(d["auth"], "username") == "alice");
  CHECK(EmailStr(d["auth"], "password") == "pa ss");
  CHECK(EmailStr(d, "mail_from").find("FROM:<vigil@example.org>") == 0);
  REQUIRE(d["rcpt"].Size() == 2);
  CHECK(std::string(d["rcpt"][0].GetString()) == "TO:<ops@example.org>");
  CHECK(std::string(d["rcpt"][1].GetString()) == "TO:<oncall@example.org>");

  std::string data = EmailStr(d, "data");
  CHECK(data.find("To: Ops Team <ops@example.org>, oncall@example.org\r\n") !=
        std::string::npos);
  CHECK(data.find("From: Vigil <vigil@example.org>\r\n") != std::string::npos);
  CHECK(
      data.find("Subject: =?utf-8?q?Disk_full_=E2=9C=93_on_gpu-node-0?=\r\n") !=
      std::string::npos);
  CHECK(data.find("\r\nMessage-Id: <") != std::string::npos);
  CHECK(data.find("\r\nDate: ") != std::string::npos);
  CHECK(data.find("MIME-Version: 1.0\r\n") != std::string::npos);
  // Python's email package reads it back as Alertmanager's reader would.
  CHECK(EmailStr(d, "subject") == "Disk full ✓ on gpu-node-0");
  CHECK(EmailStr(d, "content_type") == "multipart/alternative");
  REQUIRE(d["parts"].Size() == 2);
  CHECK(EmailStr(d["parts"][0], "type") == "text/plain");
  CHECK(EmailStr(d["parts"][0], "body") ==
        "plain text: 1 + 1 = 2\r\n.a line starting with a dot\r\nend");
  CHECK(EmailStr(d["parts"][1], "type") == "text/html");
  CHECK(EmailStr(d["parts"][1], "body") == "<p>html <b>body</b></p>");
}

TEST_CASE("email: AUTH LOGIN when the server offers only LOGIN",
          "[alerting][receivers][email]") {
  if (!testutil::HaveCommand("python3")) return;
  SmtpSink sink({"--login-only"});
  config::am::EmailConfig e = BaseConfig(sink.smarthost());
  e.auth_username = "bob";
  e.auth_password = "hunter2";
  auto built = BuildIntegrations(EmailReceiver(e), Deps());
  REQUIRE(built.ok());
  NotifyResult r = (*built)[0]->Notify(TwoAlerts(NowMs()), In(10000));
  INFO(r.status.message());
  REQUIRE(r.status.ok());
  rapidjson::Document d;
  d.Parse(sink.Session().c_str());
  REQUIRE(d.IsObject());
  REQUIRE(d["auth"].IsObject());
  CHECK(EmailStr(d["auth"], "mech") == "LOGIN");
  CHECK(EmailStr(d["auth"], "username") == "bob");
  CHECK(EmailStr(d["auth"], "password") == "hunter2");
}

TEST_CASE("email: without a text template only the html part is sent",
          "[alerting][receivers][email]") {
  if (!testutil::HaveCommand("python3")) return;
  SmtpSink sink({"--no-auth"});
  config::am::EmailConfig e = BaseConfig(sink.smarthost());
  e.text.clear();
  e.auth_username = "alice";  // no AUTH offered: sent without, as AM does
  e.auth_password = "x";
  auto built = BuildIntegrations(EmailReceiver(e), Deps());
  REQUIRE(built.ok());
  NotifyResult r = (*built)[0]->Notify(TwoAlerts(NowMs()), In(10000));
  INFO(r.status.message());
  REQUIRE(r.status.ok());
  rapidjson::Document d;
  d.Parse(sink.Session().c_str());
  REQUIRE(d.IsObject());
  CHECK(d["auth"].IsNull());
  REQUIRE(d["parts"].Size() == 1);
  CHECK(EmailStr(d["parts"][0], "type") == "text/html");
}

TEST_CASE("email: SMTP failures are retried with the server's words",
          "[alerting][receivers][email]") {
  if (!testutil::HaveCommand("python3")) return;
  SECTION("require_tls and no STARTTLS") {
    SmtpSink sink;
    config::am::EmailConfig e = BaseConfig(sink.smarthost());
    e.require_tls = true;
    auto built = BuildIntegrations(EmailReceiver(e), Deps());
    REQUIRE(built.ok());
    NotifyResult r = (*built)[0]->Notify(TwoAlerts(NowMs()), In(10000));
    CHECK(r.retry);
    CHECK(std::string(r.status.message()) ==
          "send email to " + sink.smarthost() +
              ": 'require_tls' is true (default) but \"" + sink.smarthost() +
              "\" does not advertise the STARTTLS extension");
  }
  SECTION("credentials refused") {
    SmtpSink sink({"--reject-auth"});
    config::am::EmailConfig e = BaseConfig(sink.smarthost());
    e.auth_username = "alice";
    e.auth_password = "wrong";
    auto built = BuildIntegrations(EmailReceiver(e), Deps());
    REQUIRE(built.ok());
    NotifyResult r = (*built)[0]->Notify(TwoAlerts(NowMs()), In(10000));
    INFO(r.status.message());
    CHECK_FALSE(r.status.ok());
    CHECK(r.retry);
    CHECK(std::string(r.status.message()).find("535") != std::string::npos);
  }
  SECTION("nobody listening") {
    config::am::EmailConfig e =
        BaseConfig("127.0.0.1:" + std::to_string(testutil::FreePort()));
    auto built = BuildIntegrations(EmailReceiver(e), Deps());
    REQUIRE(built.ok());
    NotifyResult r = (*built)[0]->Notify(TwoAlerts(NowMs()), In(10000));
    INFO(r.status.message());
    CHECK(r.status.code() == absl::StatusCode::kUnavailable);
    CHECK(r.retry);
  }
}

TEST_CASE("email: a server that never greets hits the deadline",
          "[alerting][receivers][email]") {
  int port = 0;
  int fd = net::testing::ListenLoopback(&port);  // accepts, says nothing
  config::am::EmailConfig e = BaseConfig("127.0.0.1:" + std::to_string(port));
  auto built = BuildIntegrations(EmailReceiver(e), Deps());
  REQUIRE(built.ok());
  Timestamp start = NowMs();
  NotifyResult r = (*built)[0]->Notify(TwoAlerts(start), start + 700);
  Timestamp took = NowMs() - start;
  ::close(fd);
  INFO(r.status.message());
  CHECK(r.status.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(r.retry);
  CHECK(took >= 600);
  CHECK(took < 3000);
}

TEST_CASE("email: the default subject and html body render the group",
          "[alerting][receivers][email]") {
  if (!testutil::HaveCommand("python3")) return;
  SmtpSink sink;
  config::am::EmailConfig e = BaseConfig(sink.smarthost());
  e.headers.clear();
  e.html.clear();
  e.text.clear();
  e.hello.clear();
  auto built = BuildIntegrations(EmailReceiver(e), Deps());
  REQUIRE(built.ok());
  NotifyResult r = (*built)[0]->Notify(TwoAlerts(NowMs()), In(10000));
  INFO(r.status.message());
  REQUIRE(r.status.ok());
  rapidjson::Document d;
  d.Parse(sink.Session().c_str());
  REQUIRE(d.IsObject());
  CHECK(EmailStr(d, "ehlo") == "localhost");
  std::string subject = EmailStr(d, "subject");
  CHECK(subject.find("Down") != std::string::npos);
  CHECK(subject.find("{{") == std::string::npos);
  REQUIRE(d["parts"].Size() == 1);
  std::string html = EmailStr(d["parts"][0], "body");
  CHECK(html.find("<html") != std::string::npos);
  CHECK(html.find("a is down") != std::string::npos);
  CHECK(html.find("b is down") != std::string::npos);
}

// The message's lines with what differs between any two sends dropped
// (Message-Id, Date, the boundary) and the headers sorted (Alertmanager
// writes them in Go's map order).
std::vector<std::string> Normalized(std::string data) {
  size_t b = data.find("boundary=");
  REQUIRE(b != std::string::npos);
  size_t e = data.find("\r\n", b);
  std::string boundary = data.substr(b + 9, e - b - 9);
  for (size_t p = data.find(boundary); p != std::string::npos;
       p = data.find(boundary, p)) {
    data.replace(p, boundary.size(), "BOUNDARY");
  }
  size_t split = data.find("\r\n\r\n");
  std::vector<std::string> headers, out;
  std::string head = data.substr(0, split), body = data.substr(split);
  for (size_t p = 0; p < head.size();) {
    size_t q = head.find("\r\n", p);
    if (q == std::string::npos) q = head.size();
    std::string line = head.substr(p, q - p);
    if (line.rfind("Message-Id:", 0) != 0 && line.rfind("Date:", 0) != 0) {
      // Alertmanager writes two spaces before boundary=.
      size_t sp = line.find(";  boundary");
      if (sp != std::string::npos) line.erase(sp + 1, 1);
      headers.push_back(line);
    }
    p = q + 2;
  }
  std::sort(headers.begin(), headers.end());
  out = headers;
  out.push_back(body);
  return out;
}

TEST_CASE("email: the message is Alertmanager 0.25's but for ids and dates",
          "[alerting][receivers][email][peer]") {
  if (!testutil::HaveCommand("python3") ||
      !testutil::HaveCommand("prometheus-alertmanager") ||
      !testutil::HaveCommand("curl")) {
    WARN("skipped: python3, prometheus-alertmanager or curl not installed");
    return;
  }
  SmtpSink am_sink, our_sink;
  config::am::EmailConfig e = BaseConfig("");
  e.headers["Subject"] = "Disk ✓ {{ .Status }} on {{ .CommonLabels.instance }}";
  e.headers["X-Team"] = "gpu";
  e.text = "plain {{ .Status }}: {{ .CommonAnnotations.summary }}\n" +
           std::string(100, 'L') + " = end";
  e.html = "<p>{{ .CommonAnnotations.summary }}</p>";
  testutil::TempDir dir;
  std::ofstream(dir.Sub("am.yml"))
      << "route:\n  receiver: mail\n  group_by: [alertname]\n"
         "  group_wait: 1s\nreceivers:\n  - name: mail\n    email_configs:\n"
         "      - to: '"
      << e.to << "'\n        from: '" << e.from
      << "'\n        smarthost: " << am_sink.smarthost()
      << "\n        hello: vigil.test\n        require_tls: false\n"
         "        text: \""  // YAML double quotes: \\n is a newline
      << "plain {{ .Status }}: {{ .CommonAnnotations.summary }}\\n"
      << std::string(100, 'L') << " = end"
      << "\"\n        html: '" << e.html << "'\n        headers:\n"
      << "          Subject: '" << e.headers["Subject"] << "'\n"
      << "          X-Team: gpu\n";
  int port = testutil::FreePort();
  std::string base = "http://127.0.0.1:" + std::to_string(port);
  testutil::Process am(
      {"prometheus-alertmanager", "--config.file=" + dir.Sub("am.yml"),
       "--storage.path=" + dir.Sub("data"),
       "--web.listen-address=127.0.0.1:" + std::to_string(port),
       "--cluster.listen-address="},
      dir.Sub("am.log"));
  REQUIRE(am.started());
  REQUIRE(testutil::WaitHttp(base + "/-/ready"));
  Notification n = TwoAlerts(NowMs());
  n.receiver = "mail";
  n.alerts.resize(1);
  n.alerts[0].annotations = Labels{{"summary", "a <is> down & out"}};
  n.alerts[0].starts_at = NowMs() - 60000;
  testutil::RunResult pr = testutil::Run(
      "curl -sS -f -H 'Content-Type: application/json' -d "
      "'[{\"labels\":{\"alertname\":\"Down\",\"instance\":\"a:9100\",\"job\":"
      "\"node\"},\"annotations\":{\"summary\":\"a <is> down & out\"}}]' " +
      base + "/api/v2/alerts");
  REQUIRE(pr.code == 0);
  std::string am_session = am_sink.Session();
  INFO("alertmanager log: " << testutil::ReadFile(dir.Sub("am.log")));
  REQUIRE(!am_session.empty());

  e.smarthost = our_sink.smarthost();
  auto built = BuildIntegrations(EmailReceiver(e), Deps());
  REQUIRE(built.ok());
  NotifyResult r = (*built)[0]->Notify(n, In(10000));
  INFO(r.status.message());
  REQUIRE(r.status.ok());
  rapidjson::Document theirs, ours;
  theirs.Parse(am_session.c_str());
  ours.Parse(our_sink.Session().c_str());
  REQUIRE(theirs.IsObject());
  REQUIRE(ours.IsObject());
  for (const char* key : {"ehlo", "mail_from", "subject", "content_type"}) {
    INFO(key);
    CHECK(EmailStr(ours, key) == EmailStr(theirs, key));
  }
  REQUIRE(ours["parts"].Size() == theirs["parts"].Size());
  for (rapidjson::SizeType i = 0; i < ours["parts"].Size(); ++i) {
    CHECK(EmailStr(ours["parts"][i], "type") ==
          EmailStr(theirs["parts"][i], "type"));
    CHECK(EmailStr(ours["parts"][i], "body") ==
          EmailStr(theirs["parts"][i], "body"));
  }
  CHECK(Normalized(EmailStr(ours, "data")) ==
        Normalized(EmailStr(theirs, "data")));
}

TEST_CASE("email: bad addresses and configs are errors that are not retried",
          "[alerting][receivers][email]") {
  config::am::EmailConfig e = BaseConfig("127.0.0.1:1");
  e.from = "a@example.org, b@example.org";
  auto built = BuildIntegrations(EmailReceiver(e), Deps());
  REQUIRE(built.ok());
  NotifyResult r = (*built)[0]->Notify(TwoAlerts(NowMs()), In(5000));
  CHECK_FALSE(r.retry);
  CHECK(std::string(r.status.message()) ==
        "must be exactly one 'from' address (got: 2)");

  e = BaseConfig("127.0.0.1:1");
  e.to = "not-an-address";
  built = BuildIntegrations(EmailReceiver(e), Deps());
  REQUIRE(built.ok());
  r = (*built)[0]->Notify(TwoAlerts(NowMs()), In(5000));
  CHECK_FALSE(r.retry);
  CHECK(std::string(r.status.message()) ==
        "parse 'to' addresses: mail: missing @ in addr-spec");

  e = BaseConfig("localhost");
  built = BuildIntegrations(EmailReceiver(e), Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(std::string(built.status().message()) ==
        "receiver \"mail\": email_configs[0]: smarthost \"localhost\": want "
        "host:port with a numeric port");

  e = BaseConfig("127.0.0.1:25");
  e.auth_password_file = "/nonexistent/vigil/pw";
  built = BuildIntegrations(EmailReceiver(e), Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(std::string(built.status().message())
            .find("auth_password_file /nonexistent/vigil/pw") !=
        std::string::npos);

  e = BaseConfig("127.0.0.1:25");
  e.to.clear();
  CHECK_FALSE(BuildIntegrations(EmailReceiver(e), Deps()).ok());
  e = BaseConfig("127.0.0.1:25");
  e.tls_config.ca = "-----BEGIN CERTIFICATE-----";
  built = BuildIntegrations(EmailReceiver(e), Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(built.status().code() == absl::StatusCode::kUnimplemented);
}

TEST_CASE("email MIME: address lists as net/mail reads them",
          "[alerting][receivers][email]") {
  auto a = receivers::ParseAddressList(
      "\"Ops, Team\" <ops@example.org>, b@example.org ,C <c@x.io>");
  REQUIRE(a.ok());
  REQUIRE(a->size() == 3);
  CHECK((*a)[0].name == "Ops, Team");
  CHECK((*a)[0].address == "ops@example.org");
  CHECK((*a)[1].address == "b@example.org");
  CHECK((*a)[2].name == "C");
  CHECK((*a)[2].address == "c@x.io");
  for (auto [in, err] :
       std::initializer_list<std::pair<const char*, const char*>>{
           {"", "mail: no address"},
           {"a@b,", "mail: no address"},
           {"nobody", "mail: missing @ in addr-spec"},
           {"x@", "mail: no domain in addr-spec"},
           {"X <a@b", "mail: unclosed angle-addr"}}) {
    auto r = receivers::ParseAddressList(in);
    INFO(in);
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message()) == err);
  }
}

TEST_CASE("email MIME: Q-encoded headers and quoted-printable bodies",
          "[alerting][receivers][email]") {
  CHECK(receivers::QEncodeHeader("plain ASCII") == "plain ASCII");
  CHECK(receivers::QEncodeHeader("é_?=") == "=?utf-8?q?=C3=A9=5F=3F=3D?=");
  std::string long_subject(40, 'x');
  long_subject += "é" + std::string(40, 'y');
  std::string enc = receivers::QEncodeHeader(long_subject);
  CHECK(enc.find("?= =?utf-8?q?") != std::string::npos);
  for (size_t start = 0, sp; start < enc.size(); start = sp + 1) {
    sp = enc.find(' ', start);
    if (sp == std::string::npos) sp = enc.size();
    CHECK(sp - start <= 75);
  }

  CHECK(receivers::QuotedPrintable("a=b\nc \nd\t") == "a=3Db\r\nc=20\r\nd=09");
  std::string qp = receivers::QuotedPrintable(std::string(200, 'z'));
  for (size_t start = 0, eol; start < qp.size(); start = eol + 2) {
    eol = qp.find("\r\n", start);
    if (eol == std::string::npos) eol = qp.size();
    CHECK(eol - start <= 76);
  }
  CHECK(qp.find("=\r\n") != std::string::npos);
}

}  // namespace
}  // namespace vigil::alerting
