// The notification template set: Alertmanager's data model (template.Data,
// KV, Pairs, Alerts), its function map, template files that define and
// override named templates, Go's parse and execution errors, and Vigil's
// default messages (asserted by content, not byte for byte).
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "server/alerting/template.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::Labels;
using vigil::alerting::Alert;
using vigil::alerting::Notification;
using vigil::alerting::TemplateSet;
using vigil::testutil::TempDir;

// 2024-01-15 10:00:00 UTC, in ms.
constexpr int64_t kT0 = 1705312800000;

Alert MakeAlert(Labels labels, Labels annotations, int64_t starts,
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
  n.now = kT0 + 600000;
  n.alerts.push_back(MakeAlert({{"alertname", "KVCacheCritical"},
                                {"cluster", "a"},
                                {"instance", "gpu-1:8000"},
                                {"severity", "critical"}},
                               {{"summary", "KV cache full on gpu-1"},
                                {"description", "Usage is 99%"},
                                {"runbook_url", "https://runbooks.example/kv"}},
                               kT0,
                               kT0 + 3600000));  // firing: ends in the future
  n.alerts.push_back(MakeAlert({{"alertname", "KVCacheCritical"},
                                {"cluster", "a"},
                                {"instance", "gpu-2:8000"},
                                {"severity", "critical"}},
                               {{"summary", "KV cache full on gpu-2"},
                                {"runbook", "https://runbooks.example/kv2"}},
                               kT0 + 60000));
  n.alerts.push_back(MakeAlert({{"alertname", "KVCacheCritical"},
                                {"cluster", "a"},
                                {"instance", "gpu-3:8000"},
                                {"severity", "critical"}},
                               {{"summary", "KV cache full on gpu-3"},
                                {"runbook_url", "https://runbooks.example/kv"}},
                               kT0 - 60000,
                               kT0 + 300000));  // resolved 5 minutes ago
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

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
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
  for (Alert& a : resolved.alerts) a.ends_at = kT0 + 1000;
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
