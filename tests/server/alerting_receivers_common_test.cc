// The receivers' shared pieces: Alertmanager's truncation, the notification
// data (status, common labels, regexp-quoted receiver), Go's JSON time text,
// secrets from files, and SHA-256 / HMAC-SHA256 against published vectors
// and Python's hashlib.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "absl/strings/escaping.h"
#include "server/alerting/receivers/common.h"
#include "server/alerting/receivers/hmac.h"
#include "tests/server/alerting_receivers_testutil.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil::alerting::receivers {
namespace {

TEST_CASE("TruncateInRunes and TruncateInBytes cut as Alertmanager's notify",
          "[alerting][receivers][truncate]") {
  struct RuneCase {
    std::string in;
    size_t n;
    std::string out;
    bool cut;
  };
  for (const RuneCase& c :
       std::vector<RuneCase>{{"abcde", 2, "ab", true},
                             {"abcde", 3, "abc", true},
                             {"abcde", 4, "abc…", true},
                             {"abcde", 5, "abcde", false},
                             {"abcde", 6, "abcde", false},
                             {"", 0, "", false},
                             {"a", 0, "", true},
                             {"日本語テキスト", 5, "日本語テ…", true},
                             {"日本語", 3, "日本語", false}}) {
    INFO(c.in << " " << c.n);
    auto [out, cut] = TruncateInRunes(c.in, c.n);
    CHECK(out == c.out);
    CHECK(cut == c.cut);
  }
  struct ByteCase {
    std::string in;
    size_t n;
    std::string out;
    bool cut;
  };
  for (const ByteCase& c : std::vector<ByteCase>{
           {"abcde", 5, "abcde", false},
           {"abcde", 4, "a…", true},
           {"abcde", 3, "…", true},
           {"abcde", 2, "..", true},
           {"日本語", 9, "日本語", false},
           // 8 bytes: room for 5 before the marker, one whole 3-byte rune.
           {"日本語", 8, "日…", true},
           {"日本語", 6, "日…", true},
           {"日本語", 5, "…", true}}) {
    INFO(c.in << " " << c.n);
    auto [out, cut] = TruncateInBytes(c.in, c.n);
    CHECK(out == c.out);
    CHECK(cut == c.cut);
    CHECK(out.size() <= std::max<size_t>(c.n, 0));
  }
}

TEST_CASE("MakeData computes status and common labels over the alerts",
          "[alerting][receivers][data]") {
  Notification n = testing::TwoAlerts(testing::NowMs());
  n.receiver = "a.b+c";
  NotificationData d = MakeData(n);
  CHECK(d.receiver == "a\\.b\\+c");
  CHECK(d.status == "firing");
  REQUIRE(d.alerts.size() == 2);
  CHECK_FALSE(d.alerts[0].resolved);
  CHECK(d.alerts[1].resolved);
  CHECK(d.common_labels == (Labels{{"alertname", "Down"}, {"job", "node"}}));
  CHECK(d.common_annotations.empty());
  CHECK(d.alerts[0].fingerprint.size() == 16);
  // Truncated to the first alert: its own labels are common.
  NotificationData first = MakeData(n, 1);
  CHECK(first.alerts.size() == 1);
  CHECK(first.common_labels == n.alerts[0].labels);
  CHECK(first.common_annotations == n.alerts[0].annotations);
  // Every alert resolved: resolved.
  n.alerts.erase(n.alerts.begin());
  CHECK(MakeData(n).status == "resolved");
  // An alert whose end is exactly now is resolved (ends_at <= now).
  n.alerts[0].ends_at = n.now;
  CHECK(MakeData(n).status == "resolved");
}

TEST_CASE("GoJsonTime writes RFC 3339 with Go's trimmed fraction",
          "[alerting][receivers][data]") {
  CHECK(GoJsonTime(1767225600000) == "2026-01-01T00:00:00Z");
  CHECK(GoJsonTime(1767225600250) == "2026-01-01T00:00:00.25Z");
  CHECK(GoJsonTime(1767225600001) == "2026-01-01T00:00:00.001Z");
  CHECK(GoJsonTime(0) == "1970-01-01T00:00:00Z");
  CHECK(GoJsonTime(-1) == "1969-12-31T23:59:59.999Z");
}

TEST_CASE("secrets from files are trimmed, unreadable ones are named",
          "[alerting][receivers][data]") {
  testutil::TempDir dir;
  std::ofstream(dir.Sub("s")) << "  tok en \n\n";
  auto s = ReadSecretFile(dir.Sub("s"), "secret_file");
  REQUIRE(s.ok());
  CHECK(*s == "tok en");
  auto missing = ReadSecretFile(dir.Sub("none"), "secret_file");
  REQUIRE_FALSE(missing.ok());
  CHECK(std::string(missing.status().message()) ==
        "read secret_file " + dir.Sub("none") +
            ": cannot open the file (missing or unreadable)");
  CHECK(*SecretOrFile("inline", "", "x") == "inline");
}

std::string Hex(const std::string& raw) { return absl::BytesToHexString(raw); }

TEST_CASE("SHA-256 and HMAC-SHA256 match the published vectors",
          "[alerting][receivers][hmac]") {
  CHECK(Hex(Sha256("")) ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Hex(Sha256("abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(
      Hex(Sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // RFC 4231 test cases 1, 2 and 6 (a key longer than the block).
  CHECK(Hex(HmacSha256(std::string(20, '\x0b'), "Hi There")) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(Hex(HmacSha256("Jefe", "what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(Hex(HmacSha256(std::string(131, '\xaa'),
                       "Test Using Larger Than Block-Size Key - Hash Key "
                       "First")) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_CASE("SHA-256 agrees with Python's hashlib at every padding length",
          "[alerting][receivers][hmac]") {
  if (!testutil::HaveCommand("python3")) {
    WARN("skipped: python3 not installed");
    return;
  }
  testutil::RunResult r = testutil::Run(
      "python3 -c 'import hashlib\nfor n in range(0, 200): "
      "print(hashlib.sha256(bytes(i % 251 for i in range(n))).hexdigest())'");
  REQUIRE(r.code == 0);
  std::istringstream lines(r.out);
  std::string want;
  for (int n = 0; n < 200 && std::getline(lines, want); ++n) {
    std::string data;
    for (int i = 0; i < n; ++i) data.push_back(static_cast<char>(i % 251));
    INFO(n);
    CHECK(Hex(Sha256(data)) == want);
  }
}

}  // namespace
}  // namespace vigil::alerting::receivers
