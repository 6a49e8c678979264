// The real amtool (Debian's, Alertmanager 0.25) against Vigil's built-in
// Alertmanager and against a real prometheus-alertmanager, both running the
// same alertmanager.yml: every command (silence add/query/expire, alert
// add/query, config routes) must print the same thing on both, once ids
// and times, which only differ by when each server made them, are
// normalised.
#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/alerting_peers_testutil.h"

namespace {

using vigil::testutil::Run;
using vigil::testutil::RunResult;

// One server's view: its URL and the silence ids amtool printed, in order.
struct Side {
  std::string url;
  std::map<std::string, int> ids;
  std::vector<std::string> order;

  std::string Id(int n) const {
    return n <= static_cast<int>(order.size()) ? order[n - 1] : "?";
  }

  // Ids become <idN> (first seen first), times <t>.
  std::string Normalize(const std::string& text) {
    static const std::regex kUuid(
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
    static const std::regex kTime(
        R"(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?( UTC|Z))");
    std::string out;
    size_t last = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kUuid);
         it != std::sregex_iterator(); ++it) {
      const std::string id = it->str();
      if (!ids.count(id)) {
        order.push_back(id);
        ids[id] = static_cast<int>(order.size());
      }
      out += text.substr(last, it->position() - last);
      out += "<id" + std::to_string(ids[id]) + ">";
      last = it->position() + it->length();
    }
    out += text.substr(last);
    return std::regex_replace(out, kTime, "<t>");
  }
};

struct Output {
  int code;
  std::string out, err;
  bool operator==(const Output&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Output& o) {
  return os << "exit " << o.code << "\n--- stdout\n"
            << o.out << "--- stderr\n"
            << o.err;
}

// Runs `amtool --alertmanager.url=<side> <args>` with $S<n> replaced by the
// side's n-th silence id.
Output Amtool(Side* side, const std::string& args) {
  static const std::regex kRef(R"(\$S(\d+))");
  std::string expanded;
  size_t last = 0;
  for (auto it = std::sregex_iterator(args.begin(), args.end(), kRef);
       it != std::sregex_iterator(); ++it) {
    expanded += args.substr(last, it->position() - last);
    expanded += side->Id(std::stoi((*it)[1].str()));
    last = it->position() + it->length();
  }
  expanded += args.substr(last);
  RunResult r = Run("amtool --alertmanager.url=" + side->url + " " + expanded);
  return Output{r.code, side->Normalize(r.out), side->Normalize(r.err)};
}

TEST_CASE(
    "amtool gives the same results against Vigil as against "
    "Alertmanager",
    "[alerting][amtool][peer]") {
  if (!vigil::testutil::HaveCommand("amtool") ||
      !vigil::testutil::HaveCommand(vigil::testing::kAlertmanagerBinary)) {
    WARN("amtool or prometheus-alertmanager not installed: test skipped");
    return;
  }
  vigil::testutil::TempDir dir;
  const std::string config = std::string(VIGIL_SOURCE_DIR) +
                             "/tests/server/testdata/alerting_api/"
                             "alertmanager.yml";
  vigil::net::HttpClient client;
  vigil::testing::RealAlertmanager am;
  vigil::testing::VigilWithRouter vigil;
  REQUIRE(am.Start(dir, config, &client));
  REQUIRE(vigil.Start(dir, config, &client));
  Side am_side{am.url, {}, {}}, vigil_side{vigil.url, {}, {}};

  // In the future, whole seconds, the same text for both.
  const vigil::Timestamp now = vigil::Clock::Real()->NowMs() / 1000 * 1000;
  const std::string start =
      vigil::web::api::v2::FormatDateTime(now + 3600 * 1000);
  const std::string end =
      vigil::web::api::v2::FormatDateTime(now + 3 * 3600 * 1000);

  const std::vector<std::string> commands = {
      "silence add alertname=X --comment=c --author=a",
      "silence add 'instance=~db.*' 'service!=db' --comment='planned window' "
      "--author=release --start=" +
          start + " --end=" + end,
      "silence add foo node=bar --comment=c --author=a --duration=2h",
      "silence query",
      "silence query -o extended",
      "silence query -o json",
      "silence query alertname=X",
      "silence query -q",
      "silence query --created-by=release",
      "silence query 'instance=~db.*'",
      "alert add alertname=Q sev=x --annotation=summary=hi",
      "alert add alertname=X instance=a job=node",
      "alert add DbDown service=db severity=page instance=db1",
      "alert add alertname=W severity=warning instance=db1",
      "alert add alertname=C severity=critical instance=db1",
      "SLEEP",
      "alert query",
      "alert query -o extended",
      "alert query -o json",
      "alert query alertname=Q",
      "alert query -s",
      "alert query -i",
      "alert query -a -s -i",
      "alert query -r 'team-db.*'",
      "alert query 'severity=~crit.*'",
      "silence expire $S1",
      "silence query --expired",
      "silence query --expired -o json",
      "SLEEP",
      "alert query",
      "alert query -s -o json",
      "silence expire 00000000-0000-0000-0000-000000000000",
      "silence expire nope",
      "silence add --comment=c --author=a",
      "silence add 'a=~(' --comment=c --author=a",
      "alert add --annotation=x=y",
      "config routes test alertname=X severity=critical",
      "config routes test service=db severity=page "
      "--verify.receivers=team-db-pager",
      "config routes test service=cache",
      "config routes",
  };
  int compared = 0;
  for (const std::string& c : commands) {
    if (c == "SLEEP") {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    Output want = Amtool(&am_side, c);
    Output got = Amtool(&vigil_side, c);
    INFO("amtool " << c);
    CHECK(got == want);
    ++compared;
  }
  CHECK(compared == static_cast<int>(commands.size()) - 2);
  // The commands did something: three silences were made on both.
  CHECK(vigil_side.order.size() >= 3);
  INFO(vigil::testutil::ReadFile(dir.Sub("vigil.log")));
  CHECK(vigil.Stop() == 0);
}

}  // namespace

namespace {

TEST_CASE(
    "amtool reads Vigil's /api/v2/status config with its secrets "
    "masked, as Alertmanager's",
    "[alerting][amtool][peer]") {
  if (!vigil::testutil::HaveCommand("amtool") ||
      !vigil::testutil::HaveCommand(vigil::testing::kAlertmanagerBinary)) {
    WARN("amtool or prometheus-alertmanager not installed: test skipped");
    return;
  }
  vigil::testutil::TempDir dir;
  const std::string config = std::string(VIGIL_SOURCE_DIR) +
                             "/tests/server/testdata/alerting_api/secrets.yml";
  vigil::net::HttpClient client;
  vigil::testing::RealAlertmanager am;
  vigil::testing::VigilWithRouter vigil;
  REQUIRE(am.Start(dir, config, &client));
  REQUIRE(vigil.Start(dir, config, &client));
  const std::string status =
      vigil::testing::Http(&client, "GET", vigil.url + "/api/v2/status").body;
  for (const char* secret : {"hunter2", "SLACKSECRET", "p4ss", "multi"}) {
    INFO(secret);
    CHECK(status.find(secret) == std::string::npos);
  }
  CHECK(status.find("\\u003csecret\\u003e") != std::string::npos);
  CHECK(status.find("oncall@example.org") != std::string::npos);
  Side am_side{am.url, {}, {}}, vigil_side{vigil.url, {}, {}};
  for (const char* c :
       {"config routes", "config routes test severity=page", "config show"}) {
    Output want = Amtool(&am_side, c);
    Output got = Amtool(&vigil_side, c);
    INFO("amtool " << c);
    CHECK(got.code == 0);
    if (std::string(c) != "config show") CHECK(got == want);
  }
  CHECK(vigil.Stop() == 0);
}

}  // namespace
