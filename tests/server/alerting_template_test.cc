// The notification template set: Alertmanager's data model (template.Data,
// KV, Pairs, Alerts), its function map, template files that define and
// override named templates, Go's parse and execution errors, and Vigil's
// default messages (asserted by content, not byte for byte); and a probe
// template rendered by a real Alertmanager into a Slack message and by
// Vigil, compared byte for byte.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/go/time.h"
#include "server/alerting/template.h"
#include "server/net/http_client.h"
#include "server/net/http_server.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::Labels;
using vigil::alerting::Alert;
using vigil::alerting::Notification;
using vigil::alerting::TemplateSet;
using vigil::testutil::TempDir;
using vigil::testutil::WriteFile;

// 2024-01-15 10:00:00 UTC, in ms.
constexpr int64_t kTemplateT0 = 1705312800000;

Alert TemplateAlert(Labels labels, Labels annotations, int64_t starts,
                    int64_t ends = 0) {
  Alert a;
  a.labels = std::move(labels);
  a.annotations = std::move(annotations);
  a.starts_at = starts;
  a.ends_at = ends;
  a.generator_url = "http://vigil:9090/graph?g0.expr=up";
  return a;
}

// Two firing alerts and a resolved one of group {alertname, cluster}.
Notification Sample() {
  Notification n;
  n.receiver = "team-a.pager";
  n.group_key = "{}:{alertname=\"KVCacheCritical\", cluster=\"a\"}";
  n.group_labels = Labels{{"alertname", "KVCacheCritical"}, {"cluster", "a"}};
  n.external_url = "http://vigil:9093";
  n.now = kTemplateT0 + 600000;
  n.alerts.push_back(
      TemplateAlert({{"alertname", "KVCacheCritical"},
                     {"cluster", "a"},
                     {"instance", "gpu-1:8000"},
                     {"severity", "critical"}},
                    {{"summary", "KV cache full on gpu-1"},
                     {"description", "Usage is 99%"},
                     {"runbook_url", "https://runbooks.example/kv"}},
                    kTemplateT0,
                    kTemplateT0 + 3600000));  // firing: ends in the future
  n.alerts.push_back(
      TemplateAlert({{"alertname", "KVCacheCritical"},
                     {"cluster", "a"},
                     {"instance", "gpu-2:8000"},
                     {"severity", "critical"}},
                    {{"summary", "KV cache full on gpu-2"},
                     {"runbook", "https://runbooks.example/kv2"}},
                    kTemplateT0 + 60000));
  n.alerts.push_back(
      TemplateAlert({{"alertname", "KVCacheCritical"},
                     {"cluster", "a"},
                     {"instance", "gpu-3:8000"},
                     {"severity", "critical"}},
                    {{"summary", "KV cache full on gpu-3"},
                     {"runbook_url", "https://runbooks.example/kv"}},
                    kTemplateT0 - 60000,
                    kTemplateT0 + 300000));  // resolved 5 minutes ago
  return n;
}

std::shared_ptr<const TemplateSet> Defaults() {
  auto set = TemplateSet::Load({});
  REQUIRE(set.ok());
  return *set;
}

std::string Exec(const std::string& text, const Notification& n = Sample()) {
  auto out = Defaults()->ExecuteText(text, n);
  INFO(text);
  REQUIRE(out.ok());
  return *out;
}

std::string ExecError(const std::string& text,
                      const Notification& n = Sample()) {
  auto out = Defaults()->ExecuteText(text, n);
  INFO(text);
  REQUIRE_FALSE(out.ok());
  return std::string(out.status().message());
}

}  // namespace

TEST_CASE("Notification data: top-level fields", "[alerting][template]") {
  CHECK(Exec("{{ .Receiver }}") == "team-a\\.pager");  // regexp.QuoteMeta
  CHECK(Exec("{{ .Status }}") == "firing");
  CHECK(Exec("{{ .ExternalURL }}") == "http://vigil:9093");
  CHECK(Exec("{{ .GroupLabels }}") ==
        "map[alertname:KVCacheCritical cluster:a]");
  CHECK(Exec("{{ .CommonLabels }}") ==
        "map[alertname:KVCacheCritical cluster:a severity:critical]");
  CHECK(Exec("{{ .CommonAnnotations }}") == "map[]");
  CHECK(Exec("{{ .CommonLabels.alertname }}") == "KVCacheCritical");
  CHECK(Exec("[{{ .CommonLabels.nosuch }}]") == "[]");  // missingkey=zero
  CHECK(Exec("{{ len .Alerts }} {{ len .Alerts.Firing }} "
             "{{ len .Alerts.Resolved }}") == "3 2 1");
  CHECK(Exec("{{ printf \"%T %T %T\" . .Alerts .CommonLabels }}") ==
        "*template.Data template.Alerts template.KV");

  Notification resolved = Sample();
  for (Alert& a : resolved.alerts) a.ends_at = kTemplateT0 + 1000;
  CHECK(Exec("{{ .Status }} {{ len .Alerts.Firing }}", resolved) ==
        "resolved 0");
  Notification empty = Sample();
  empty.alerts.clear();
  CHECK(Exec("{{ .Status }} {{ .CommonLabels }}", empty) == "resolved map[]");
}

TEST_CASE("Notification data: alerts", "[alerting][template]") {
  CHECK(Exec("{{ range .Alerts }}{{ .Status }} {{ end }}") ==
        "firing firing resolved ");
  CHECK(Exec("{{ range .Alerts.Firing }}{{ .Labels.instance }} {{ end }}") ==
        "gpu-1:8000 gpu-2:8000 ");
  CHECK(
      Exec("{{ range .Alerts.Resolved }}{{ .Annotations.summary }}{{ end }}") ==
      "KV cache full on gpu-3");
  // Times print as Go's time.Time; a firing alert's end is the zero time.
  CHECK(Exec("{{ (index .Alerts 0).StartsAt }}") ==
        "2024-01-15 10:00:00 +0000 UTC");
  CHECK(Exec("{{ (index .Alerts 0).EndsAt }}") ==
        "0001-01-01 00:00:00 +0000 UTC");
  CHECK(Exec("{{ (index .Alerts 2).EndsAt }}") ==
        "2024-01-15 10:05:00 +0000 UTC");
  CHECK(Exec("{{ (index .Alerts 1).StartsAt.Format \"15:04\" }}") == "10:01");
  CHECK(Exec("{{ (index .Alerts 0).StartsAt.Unix }}") == "1705312800");
  CHECK(Exec("{{ (index .Alerts 0).GeneratorURL }}") ==
        "http://vigil:9090/graph?g0.expr=up");
  std::string fp = Exec("{{ (index .Alerts 0).Fingerprint }}");
  CHECK(fp.size() == 16);
  CHECK(fp.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(fp != Exec("{{ (index .Alerts 1).Fingerprint }}"));
  CHECK(Exec("{{ range $i, $a := .Alerts }}{{ $i }}{{ end }}") == "012");
  CHECK(Exec("{{ printf \"%T\" .Alerts.Firing }}") == "[]template.Alert");
  CHECK(ExecError("{{ .Alerts.Firing.Firing }}")
            .find("can't evaluate field Firing in type []template.Alert") !=
        std::string::npos);
  CHECK(Exec("{{ with index .Alerts 0 }}{{ printf \"%T\" . }}{{ end }}") ==
        "template.Alert");
}

TEST_CASE("Notification data: KV methods", "[alerting][template]") {
  Notification n = Sample();
  n.group_labels = Labels{{"zone", "z1"}, {"alertname", "A"}, {"app", "x"}};
  // Ranging a KV visits keys in order; SortedPairs puts alertname first.
  CHECK(Exec("{{ range $k, $v := .GroupLabels }}{{ $k }}={{ $v }} {{ end }}",
             n) == "alertname=A app=x zone=z1 ");
  CHECK(Exec("{{ range .GroupLabels.SortedPairs }}{{ .Name }}:{{ .Value }} "
             "{{ end }}",
             n) == "alertname:A app:x zone:z1 ");
  n.group_labels = Labels{{"zone", "z1"}, {"alertname", "A"}, {"aaa", "x"}};
  CHECK(Exec("{{ .GroupLabels.SortedPairs }}", n) ==
        "[{alertname A} {aaa x} {zone z1}]");
  CHECK(Exec("{{ .GroupLabels.Names }}", n) == "[alertname aaa zone]");
  CHECK(Exec("{{ .GroupLabels.Values }}", n) == "[A x z1]");
  CHECK(Exec("{{ .GroupLabels.SortedPairs.Names | join \",\" }}", n) ==
        "alertname,aaa,zone");
  CHECK(Exec("{{ .GroupLabels.SortedPairs.Values | join \",\" }}", n) ==
        "A,x,z1");
  CHECK(Exec("{{ .GroupLabels.Remove (stringSlice \"aaa\" \"nope\") }}", n) ==
        "map[alertname:A zone:z1]");
  CHECK(Exec("{{ printf \"%T\" (.GroupLabels.Remove nil) }}", n) ==
        "template.KV");
  CHECK(Exec("{{ (.CommonLabels.Remove .GroupLabels.Names).Values }}") ==
        "[critical]");
  CHECK(Exec("{{ printf \"%T %T\" .GroupLabels.SortedPairs "
             "(index .GroupLabels.SortedPairs 0) }}") ==
        "template.Pairs template.Pair");
  // Remove takes a []string.
  CHECK(ExecError("{{ .GroupLabels.Remove \"a\" }}") ==
        "template: :1:23: executing \"\" at <\"a\">: can't handle \"a\" for "
        "arg of type []string");
  CHECK(ExecError("{{ .GroupLabels.Remove }}") ==
        "template: :1:15: executing \"\" at <.GroupLabels.Remove>: wrong "
        "number of args for Remove: want 1 got 0");
}

TEST_CASE("Functions", "[alerting][template]") {
  CHECK(Exec("{{ toUpper \"abc é\" }} {{ toLower \"ABC É\" }}") ==
        "ABC É abc é");
  CHECK(Exec("{{ title \"hELLO wORLD don't foo_bar 1st x-y a.b\" }}") ==
        "Hello World Don't Foo_bar 1St X-Y A.b");  // as Alertmanager prints
  CHECK(Exec("[{{ trimSpace \" \\t x y \\n\" }}]") == "[x y]");
  CHECK(Exec("{{ stringSlice \"a\" \"b\" | join \", \" }}") == "a, b");
  CHECK(Exec("{{ printf \"%T %v\" (stringSlice) (stringSlice) }}") ==
        "[]string []");
  CHECK(Exec("{{ join \"-\" nil }}") == "");
  CHECK(Exec("{{ match \"^gpu-[0-9]\" \"gpu-1:8000\" }} {{ match \"x$\" \"y\" "
             "}}") == "true false");
  CHECK(Exec("{{ reReplaceAll \"(.*):[0-9]+\" \"$1\" \"gpu-1:8000\" }}") ==
        "gpu-1");
  CHECK(Exec("{{ safeHtml \"<b>\" }} {{ printf \"%T\" (safeHtml \"x\") }}") ==
        "<b> template.HTML");
  CHECK(Exec("{{ date \"2006-01-02 15:04\" (index .Alerts 0).StartsAt }}") ==
        "2024-01-15 10:00");
  CHECK(Exec("{{ (index .Alerts 0).StartsAt | tz \"Europe/Berlin\" }}") ==
        "2024-01-15 11:00:00 +0100 CET");
  CHECK(Exec("{{ (index .Alerts 0).StartsAt | tz \"America/New_York\" | date "
             "\"15:04 MST -07:00 Z0700\" }}") == "05:00 EST -05:00 -0500");
  CHECK(Exec("{{ ((index .Alerts 0).StartsAt | tz \"UTC\").Format \"Z07:00\" "
             "}}") == "Z");
  CHECK(Exec("{{ (index .Alerts 0).StartsAt | tz \"Asia/Kolkata\" | date "
             "\"Jan 2 15:04 Z07:00\" }}") == "Jan 15 15:30 +05:30");
  // since counts from the notification's time: now is T0+10m.
  CHECK(Exec("{{ since (index .Alerts 0).StartsAt }}") == "10m0s");
  CHECK(Exec("{{ since (index .Alerts 1).StartsAt | humanizeDuration }}") ==
        "9m 0s");
  CHECK(Exec("{{ humanizeDuration 3725 }} {{ humanizeDuration \"90\" }}") ==
        "1h 2m 5s 1m 30s");
}

TEST_CASE("Function errors read as Go's", "[alerting][template]") {
  CHECK(ExecError("{{ reReplaceAll \"(\" \"x\" \"y\" }}") ==
        "template: :1:3: executing \"\" at <reReplaceAll \"(\" \"x\" \"y\">: "
        "error calling reReplaceAll: regexp: Compile(`(`): error parsing "
        "regexp: missing closing ): `(`");
  CHECK(ExecError("{{ match \"(\" \"x\" }}") ==
        "template: :1:3: executing \"\" at <match \"(\" \"x\">: error calling "
        "match: error parsing regexp: missing closing ): `(`");
  CHECK(ExecError("{{ toUpper 1 }}") ==
        "template: :1:11: executing \"\" at <1>: expected string; found 1");
  CHECK(ExecError("{{ join \",\" \"a\" }}") ==
        "template: :1:12: executing \"\" at <\"a\">: can't handle \"a\" for "
        "arg of type []string");
  CHECK(ExecError("{{ join \",\" .Alerts }}") ==
        "template: :1:12: executing \"\" at <.Alerts>: wrong type for value; "
        "expected []string; got template.Alerts");
  CHECK(ExecError("{{ title }}") ==
        "template: :1:3: executing \"\" at <title>: wrong number of args for "
        "title: want 1 got 0");
  CHECK(ExecError("{{ date \"15:04\" \"x\" }}") ==
        "template: :1:16: executing \"\" at <\"x\">: can't handle \"x\" for "
        "arg of type time.Time");
  CHECK(ExecError("{{ date \"15:04\" .Receiver }}") ==
        "template: :1:16: executing \"\" at <.Receiver>: wrong type for "
        "value; expected time.Time; got string");
  CHECK(ExecError("{{ date \"15:04\" nil }}") ==
        "template: :1:16: executing \"\" at <nil>: cannot assign nil to "
        "time.Time");
  CHECK(ExecError("{{ (index .Alerts 0).StartsAt | tz \"Mars/Base\" }}") ==
        "template: :1:32: executing \"\" at <tz \"Mars/Base\">: error calling "
        "tz: unknown time zone Mars/Base");
  CHECK(ExecError("{{ humanizeDuration \"x\" }}") ==
        "template: :1:3: executing \"\" at <humanizeDuration \"x\">: error "
        "calling humanizeDuration: strconv.ParseFloat: parsing \"x\": invalid "
        "syntax");
  CHECK(ExecError("{{ index .Alerts 5 }}") ==
        "template: :1:3: executing \"\" at <index .Alerts 5>: error calling "
        "index: index out of range: 5");
  CHECK(ExecError("{{ .Nope }}") ==
        "template: :1:3: executing \"\" at <.Nope>: can't evaluate field Nope "
        "in type *template.Data");
  CHECK(ExecError("{{ (index .Alerts 0).Labels.Nope.X }}") ==
        "template: :1:18: executing \"\" at <0>: can't evaluate field X in "
        "type string");
  // Prometheus's functions are not Alertmanager's.
  auto set = Defaults();
  CHECK(set->Check("{{ humanize 1 }}").message() ==
        "template: :1: function \"humanize\" not defined");
  CHECK(set->Check("{{ query \"up\" }}").message() ==
        "template: :1: function \"query\" not defined");
  CHECK(set->Check("{{ if }}").message() ==
        "template: :1: missing value for if");
  CHECK(set->Check("{{ template \"slack.default.title\" . }}").ok());
  CHECK(Defaults()->ExecuteText("", Sample()).value().empty());
}

TEST_CASE("Template files define and override named templates",
          "[alerting][template][files]") {
  TempDir dir;
  WriteFile(dir.Sub("a.tmpl"),
            "{{ define \"team.title\" }}{{ .CommonLabels.alertname }} on "
            "{{ .CommonLabels.cluster }}{{ end }}\n"
            "{{ define \"vigil.default.title\" }}CUSTOM "
            "{{ template \"team.title\" . }}{{ end }}\n");
  WriteFile(dir.Sub("b.tmpl"),
            "{{ define \"team.title\" }}{{ .Status }}: "
            "{{ .CommonLabels.alertname }}{{ end }}");
  WriteFile(dir.Sub("body.txt"), "body of {{ .Receiver }}");
  auto set = TemplateSet::Load(
      {dir.Sub("*.tmpl"), dir.Sub("body.txt"), dir.Sub("none-*.tmpl")});
  REQUIRE(set.ok());
  Notification n = Sample();
  // b.tmpl comes after a.tmpl and replaces its team.title.
  CHECK((*set)->ExecuteText("{{ template \"team.title\" . }}", n).value() ==
        "firing: KVCacheCritical");
  // Overriding a default changes the Alertmanager names aliased to it.
  CHECK((*set)
            ->ExecuteText("{{ template \"slack.default.title\" . }}", n)
            .value() == "CUSTOM firing: KVCacheCritical");
  CHECK((*set)->ExecuteText("{{ template \"__subject\" . }}", n).value() ==
        "CUSTOM firing: KVCacheCritical");
  // A file's body is a template named after the file.
  CHECK((*set)->ExecuteText("{{ template \"body.txt\" . }}", n).value() ==
        "body of team-a\\.pager");
  // The text's own definitions win over the files'.
  CHECK((*set)
            ->ExecuteText("{{ define \"team.title\" }}inline{{ end }}"
                          "{{ template \"slack.default.title\" . }}",
                          n)
            .value() == "CUSTOM inline");
  CHECK((*set)->Check("{{ template \"nosuch\" . }}").ok());  // parses
  CHECK((*set)
            ->ExecuteText("{{ template \"nosuch\" . }}", n)
            .status()
            .message() ==
        "template: :1:12: executing \"\" at <{{template \"nosuch\" .}}>: "
        "template \"nosuch\" not defined");
  // An empty redefinition does not replace a template (Go's rule).
  WriteFile(dir.Sub("c.tmpl"), "{{ define \"team.title\" }} {{ end }}");
  auto set2 = TemplateSet::Load({dir.Sub("*.tmpl")});
  REQUIRE(set2.ok());
  CHECK((*set2)->ExecuteText("{{ template \"team.title\" . }}", n).value() ==
        "firing: KVCacheCritical");
}

TEST_CASE("Template file errors name the file and line",
          "[alerting][template][files]") {
  TempDir dir;
  WriteFile(dir.Sub("bad.tmpl"),
            "{{ define \"x\" }}\nok\n{{ humanize 1 }}\n{{ end }}\n");
  auto bad = TemplateSet::Load({dir.Sub("bad.tmpl")});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        "template: bad.tmpl:3: function \"humanize\" not defined");

  WriteFile(dir.Sub("bad.tmpl"), "line one\n{{ define \"x\" }}{{ .Status ");
  bad = TemplateSet::Load({dir.Sub("bad.tmpl")});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "template: bad.tmpl:2: unclosed action");

  WriteFile(dir.Sub("bad.tmpl"), "{{ define \"x\" }}{{ if }}{{ end }}");
  bad = TemplateSet::Load({dir.Sub("bad.tmpl")});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "template: bad.tmpl:1: missing value for if");

  bad = TemplateSet::Load({dir.Sub("[")});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "syntax error in pattern");

  std::filesystem::create_directory(dir.Sub("d.tmpl"));
  bad = TemplateSet::Load({dir.Sub("d.tmpl")});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        "read " + dir.Sub("d.tmpl") + ": is a directory");

  // An execution error inside a file's template names that file.
  TempDir ok_dir;
  WriteFile(ok_dir.Sub("my.tmpl"),
            "{{ define \"my.title\" }}\n  {{ .Nope }}{{ end }}");
  auto set = TemplateSet::Load({ok_dir.Sub("*.tmpl")});
  REQUIRE(set.ok());
  CHECK((*set)
            ->ExecuteText("{{ template \"my.title\" . }}", Sample())
            .status()
            .message() ==
        "template: my.tmpl:2:5: executing \"my.title\" at <.Nope>: can't "
        "evaluate field Nope in type *template.Data");
}

TEST_CASE("Default templates", "[alerting][template][defaults]") {
  Notification n = Sample();
  std::string title = Exec("{{ template \"vigil.default.title\" . }}", n);
  CHECK(title.find("[FIRING:2") == 0);
  CHECK(title.find("RESOLVED:1") != std::string::npos);
  CHECK(title.find("KVCacheCritical (cluster=a, severity=critical)") !=
        std::string::npos);
  CHECK(title.find('\n') == std::string::npos);

  std::string msg = Exec("{{ template \"vigil.default.message\" . }}", n);
  for (const char* want :
       {"Firing (2)", "Resolved (1)", "KV cache full on gpu-1",
        "KV cache full on gpu-2", "KV cache full on gpu-3", "Usage is 99%",
        "https://runbooks.example/kv", "https://runbooks.example/kv2",
        "instance=gpu-1:8000", "2024-01-15 10:00:00 UTC",
        "http://vigil:9090/graph?g0.expr=up"}) {
    INFO(want);
    CHECK(msg.find(want) != std::string::npos);
  }
  // Firing alerts come before resolved ones.
  CHECK(msg.find("gpu-2") < msg.find("Resolved (1)"));
  CHECK(msg.find("Resolved (1)") < msg.find("gpu-3"));

  // Only resolved alerts: no firing section, title says RESOLVED.
  Notification resolved = Sample();
  resolved.alerts.erase(resolved.alerts.begin(), resolved.alerts.begin() + 2);
  CHECK(Exec("{{ template \"vigil.default.title\" . }}", resolved)
            .find("[RESOLVED] KVCacheCritical") == 0);
  std::string rmsg =
      Exec("{{ template \"vigil.default.message\" . }}", resolved);
  CHECK(rmsg.find("Firing") == std::string::npos);
  CHECK(rmsg.find("Resolved (1)") != std::string::npos);

  // Every Alertmanager name users' templates reference renders something.
  for (const char* name : {"__subject",
                           "email.default.subject",
                           "email.default.html",
                           "slack.default.title",
                           "slack.default.text",
                           "discord.default.title",
                           "discord.default.message",
                           "telegram.default.message",
                           "msteams.default.title",
                           "msteams.default.text",
                           "msteams.default.summary",
                           "slack.default.fallback",
                           "vigil.default.html",
                           "vigil.default.subject",
                           "vigil.default.text",
                           "vigil.default.wecom.message",
                           "vigil.default.dingtalk.message",
                           "vigil.default.feishu.message",
                           "vigil.default.slack.title",
                           "vigil.default.slack.message",
                           "vigil.default.discord.title",
                           "vigil.default.discord.message",
                           "vigil.default.telegram.title",
                           "vigil.default.telegram.message",
                           "vigil.default.msteams.title",
                           "vigil.default.msteams.message",
                           "vigil.default.wecom.title",
                           "vigil.default.dingtalk.title",
                           "vigil.default.feishu.title",
                           "vigil.default.email.subject",
                           "vigil.default.email.html",
                           "vigil.default.email.text"}) {
    INFO(name);
    std::string out = Exec(std::string("{{ template \"") + name + "\" . }}", n);
    bool names_it = out.find("KVCacheCritical") != std::string::npos ||
                    out.find("KV cache full on gpu-1") != std::string::npos;
    CHECK(names_it);
  }
  std::string list = Exec("{{ template \"__text_alert_list\" .Alerts }}", n);
  CHECK(list.find("KV cache full on gpu-3") != std::string::npos);
}

// Configurations written for Alertmanager may list its own template files
// (Debian installs them): they load, override Vigil's aliases, and render
// as Alertmanager's template semantics say.
TEST_CASE("Alertmanager's own template files load and render",
          "[alerting][template][files]") {
  const std::string dir = "/usr/share/prometheus/alertmanager/";
  REQUIRE(std::filesystem::exists(dir + "default.tmpl"));
  auto set = TemplateSet::Load({dir + "default.tmpl", dir + "email.tmpl"});
  REQUIRE(set.ok());
  Notification n = Sample();
  // __subject: status and firing count, the group's values, then the
  // common labels' values beyond the group's.
  CHECK((*set)
            ->ExecuteText("{{ template \"slack.default.title\" . }}", n)
            .value() == "[FIRING:2] KVCacheCritical a (critical)");
  std::string list =
      (*set)
          ->ExecuteText("{{ template \"__text_alert_list\" .Alerts.Firing }}",
                        n)
          .value();
  CHECK(list.find(" - instance = gpu-2:8000\n") != std::string::npos);
  CHECK(list.find(" - summary = KV cache full on gpu-1\n") !=
        std::string::npos);
  CHECK(list.find("gpu-3") == std::string::npos);
  CHECK((*set)
            ->ExecuteText("{{ template \"slack.default.titlelink\" . }}", n)
            .value() == "http://vigil:9093/#/alerts?receiver=team-a%5C.pager");
  auto html = (*set)->ExecuteHtml("{{ template \"email.default.html\" . }}", n);
  REQUIRE(html.ok());
  CHECK(html->find("KV cache full on gpu-3") != std::string::npos);
  CHECK(html->find("3 alerts for") != std::string::npos);
  CHECK(html->find("[2] Firing") != std::string::npos);
}

TEST_CASE("HTML execution escapes printed values",
          "[alerting][template][html]") {
  Notification n = Sample();
  n.alerts[0].annotations =
      Labels{{"summary", "<script>alert('x') & \"y\" +1</script>"}};
  auto set = Defaults();
  std::string text = "{{ (index .Alerts 0).Annotations.summary }}";
  CHECK(set->ExecuteHtml(text, n).value() ==
        "&lt;script&gt;alert(&#39;x&#39;) &amp; &#34;y&#34; &#43;1&lt;/"
        "script&gt;");
  CHECK(set->ExecuteText(text, n).value() ==
        "<script>alert('x') & \"y\" +1</script>");
  // Template text and template.HTML values pass through.
  CHECK(set->ExecuteHtml("<b>{{ safeHtml \"<i>x</i>\" }}</b>", n).value() ==
        "<b><i>x</i></b>");
  std::string body =
      set->ExecuteHtml("{{ template \"email.default.html\" . }}", n).value();
  CHECK(body.find("&lt;script&gt;") != std::string::npos);
  CHECK(body.find("<script>") == std::string::npos);
  CHECK(body.find("<table") != std::string::npos);
}

namespace {

// A template exercising the data model and the functions, rendered by a
// real Alertmanager (into a Slack message) and by Vigil.
constexpr char kProbeTemplate[] = R"tmpl(
{{ define "probe.title" }}{{ .Receiver }}|{{ .Status }}|{{ .ExternalURL }}|{{ .GroupLabels }}|{{ .CommonLabels.SortedPairs }}|{{ .CommonAnnotations }}|{{ .CommonLabels.Names | join "," }}|{{ .CommonLabels.Values | join "," }}|{{ (.CommonLabels.Remove .GroupLabels.Names) }}|{{ len .Alerts.Firing }}/{{ len .Alerts.Resolved }}{{ end }}
{{ define "probe.text" }}{{ range $i, $a := .Alerts }}{{ $i }} {{ .Status }} {{ .Labels }} {{ .Annotations.SortedPairs }} {{ .StartsAt }} {{ .EndsAt }} {{ .StartsAt.Unix }} {{ .StartsAt.Format "Mon Jan 2 15:04:05.000" }} {{ .GeneratorURL }} {{ .Fingerprint }}
{{ end }}{{ range .Alerts.Firing }}F:{{ .Labels.instance }} {{ end }}{{ range .Alerts.Resolved }}R:{{ .Labels.instance }} {{ end }}
{{ toUpper "abc" }} {{ toLower "ÀBC" }} {{ title "hello wORLD x-y 1st" }} {{ match "^gpu" .CommonLabels.alertname }} {{ reReplaceAll "(\\w+)-(\\d)" "$2-$1" "gpu-1 gpu-2" }} {{ safeHtml "<b>" }} {{ stringSlice "a" "b" }} {{ printf "%T %T %T %T" . .Alerts .CommonLabels .CommonLabels.SortedPairs }} {{ printf "%v" (index .Alerts 0).Labels.SortedPairs.Names }} {{ .Receiver | urlquery }} {{ printf "%q" .Status }}{{ end }}
)tmpl";

std::string Rfc3339Ms(int64_t ms) {
  return vigil::go::TimeFormat(ms / 1000,
                               static_cast<int32_t>(ms % 1000) * 1000000,
                               "2006-01-02T15:04:05.000Z07:00");
}

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TEST_CASE("Templates render as a real Alertmanager renders them",
          "[alerting][template][peer]") {
  const char kAlertmanager[] = "prometheus-alertmanager";
  if (!vigil::testutil::HaveCommand(kAlertmanager)) {
    WARN("skipped: " << kAlertmanager << " not installed");
    return;
  }
  // The Slack endpoint Alertmanager posts its rendered message to.
  std::mutex mu;
  std::vector<std::string> posts;
  vigil::net::HttpServer sink;
  sink.Handle(
      "POST", "/slack",
      [&](const vigil::net::HttpRequest& req, vigil::net::HttpResponse* resp) {
        std::lock_guard<std::mutex> l(mu);
        posts.push_back(req.body);
        resp->status = 200;
        resp->body = "ok";
      });
  auto sink_port = sink.Start("127.0.0.1:0");
  REQUIRE(sink_port.ok());

  TempDir dir;
  WriteFile(dir.Sub("probe.tmpl"), kProbeTemplate);
  WriteFile(dir.Sub("am.yml"),
            "route:\n"
            "  receiver: team.chat\n"
            "  group_by: [alertname, cluster]\n"
            "  group_wait: 3s\n"
            "receivers:\n"
            "  - name: team.chat\n"
            "    slack_configs:\n"
            "      - api_url: http://127.0.0.1:" +
                std::to_string(*sink_port) +
                "/slack\n"
                "        channel: '#x'\n"
                "        send_resolved: true\n"
                "        title: '{{ template \"probe.title\" . }}'\n"
                "        text: '{{ template \"probe.text\" . }}'\n"
                "templates: ['" +
                dir.Sub("*.tmpl") + "']\n");
  const int port = vigil::testutil::FreePort();
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  vigil::testutil::Process am(
      {kAlertmanager, "--config.file=" + dir.Sub("am.yml"),
       "--storage.path=" + dir.Sub("data"),
       "--web.listen-address=127.0.0.1:" + std::to_string(port),
       "--web.external-url=http://am.example:9093",
       "--cluster.listen-address="},
      dir.Sub("am.log"));
  REQUIRE(am.started());

  // Two firing alerts and one just resolved, all in one group. They started
  // less than group_wait ago: Alertmanager flushes a new group at once when
  // its first alert is older than that, racing the rest of the POST.
  const int64_t now = WallMs();
  Notification n;
  n.receiver = "team.chat";
  n.group_labels = Labels{{"alertname", "GpuHot"}, {"cluster", "a"}};
  n.external_url = "http://am.example:9093";
  const int64_t starts[] = {now - 1123, now - 1456, now - 1789};
  for (int i = 0; i < 3; ++i) {
    Alert a = TemplateAlert(
        {{"alertname", "GpuHot"},
         {"cluster", "a"},
         {"instance", "gpu-" + std::to_string(i + 1)},
         {"severity", "critical"}},
        {{"summary", "hot <" + std::to_string(i + 1) + ">"}, {"team", "infra"}},
        starts[i], i == 2 ? now - 500 : 0);
    n.alerts.push_back(a);
  }
  std::string payload = "[";
  for (size_t i = 0; i < n.alerts.size(); ++i) {
    const Alert& a = n.alerts[i];
    if (i > 0) payload += ",";
    payload += "{\"labels\":{";
    for (size_t j = 0; j < a.labels.size(); ++j) {
      payload += (j ? ",\"" : "\"") + a.labels[j].name + "\":\"" +
                 a.labels[j].value + "\"";
    }
    payload += "},\"annotations\":{\"summary\":\"" +
               std::string(a.annotations.Get("summary")) +
               "\",\"team\":\"infra\"},\"startsAt\":\"" +
               Rfc3339Ms(a.starts_at) + "\",";
    if (a.ends_at != 0)
      payload += "\"endsAt\":\"" + Rfc3339Ms(a.ends_at) + "\",";
    payload += "\"generatorURL\":\"" + a.generator_url + "\"}";
  }
  payload += "]";

  vigil::net::HttpClient client;
  bool posted = false;
  for (int i = 0; i < 100 && !posted; ++i) {
    vigil::net::FetchRequest req;
    req.method = "POST";
    req.url = base + "/api/v2/alerts";
    req.headers = {{"Content-Type", "application/json"}};
    req.body = payload;
    req.timeout_ms = 2000;
    auto r = client.FetchSync(req);
    posted = r.error.empty() && r.status == 200;
    if (!posted) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO("alertmanager log: " << vigil::testutil::ReadFile(dir.Sub("am.log")));
  REQUIRE(posted);
  std::string body;
  for (int i = 0; i < 100 && body.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::lock_guard<std::mutex> l(mu);
    if (!posts.empty()) body = posts[0];
  }
  REQUIRE_FALSE(body.empty());
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  REQUIRE(doc.IsObject());
  const auto& att = doc["attachments"][0];
  std::string am_title = att["title"].GetString();
  std::string am_text = att["text"].GetString();

  n.now = WallMs();
  auto set = TemplateSet::Load({dir.Sub("*.tmpl")});
  REQUIRE(set.ok());
  CHECK((*set)->ExecuteText("{{ template \"probe.title\" . }}", n).value() ==
        am_title);
  CHECK((*set)->ExecuteText("{{ template \"probe.text\" . }}", n).value() ==
        am_text);
}
