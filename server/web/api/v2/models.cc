#include "server/web/api/v2/models.h"

#include "server/alerting/alert.h"
#include "server/web/api/v2/datetime.h"

namespace vigil::web::api::v2 {
namespace {

void Receiver(JsonWriter& w, const std::string& name) {
  w.StartObject();
  w.Key("name");
  w.String(name);
  w.EndObject();
}

void Time(JsonWriter& w, Timestamp ms) { w.String(FormatDateTime(ms)); }

}  // namespace

void WriteGettableAlert(JsonWriter& w, const alerting::AlertView& a,
                        const std::vector<std::string>& receivers) {
  w.StartObject();
  w.Key("annotations");
  w.LabelSet(a.alert.annotations);
  w.Key("endsAt");
  Time(w, a.alert.ends_at);
  w.Key("fingerprint");
  w.String(alerting::FingerprintHex(a.fingerprint));
  w.Key("receivers");
  w.StartArray();
  for (const std::string& r : receivers) Receiver(w, r);
  w.EndArray();
  w.Key("startsAt");
  Time(w, a.alert.starts_at);
  w.Key("status");
  w.StartObject();
  w.Key("inhibitedBy");
  w.StringArray(a.inhibited_by);
  w.Key("silencedBy");
  w.StringArray(a.silenced_by);
  w.Key("state");
  w.String(alerting::AlertStateString(a.state));
  w.EndObject();
  w.Key("updatedAt");
  Time(w, a.alert.updated_at);
  if (!a.alert.generator_url.empty()) {
    w.Key("generatorURL");
    w.String(a.alert.generator_url);
  }
  w.Key("labels");
  w.LabelSet(a.alert.labels);
  w.EndObject();
}

void WriteAlertGroup(JsonWriter& w, const alerting::GroupView& g,
                     const std::function<const std::vector<std::string>&(
                         const alerting::AlertView&)>& receivers_of) {
  w.StartObject();
  w.Key("alerts");
  w.StartArray();
  for (const alerting::AlertView& a : g.alerts) {
    WriteGettableAlert(w, a, receivers_of(a));
  }
  w.EndArray();
  w.Key("labels");
  w.LabelSet(g.labels);
  w.Key("receiver");
  Receiver(w, g.receiver);
  w.EndObject();
}

void WriteGettableSilence(JsonWriter& w, const alerting::Silence& s,
                          Timestamp now) {
  w.StartObject();
  w.Key("id");
  w.String(s.id);
  w.Key("status");
  w.StartObject();
  w.Key("state");
  w.String(alerting::SilenceStateString(s.StateAt(now)));
  w.EndObject();
  w.Key("updatedAt");
  Time(w, s.updated_at);
  w.Key("comment");
  w.String(s.comment);
  w.Key("createdBy");
  w.String(s.created_by);
  w.Key("endsAt");
  Time(w, s.ends_at);
  w.Key("matchers");
  w.StartArray();
  for (const Matcher& m : s.matchers) {
    const MatchType t = m.type();
    w.StartObject();
    w.Key("isEqual");
    w.Bool(t == MatchType::kEqual || t == MatchType::kRegexMatch);
    w.Key("isRegex");
    w.Bool(t == MatchType::kRegexMatch || t == MatchType::kRegexNoMatch);
    w.Key("name");
    w.String(m.name());
    w.Key("value");
    w.String(m.value());
    w.EndObject();
  }
  w.EndArray();
  w.Key("startsAt");
  Time(w, s.starts_at);
  w.EndObject();
}

void WriteStatus(JsonWriter& w, const std::string& original_config,
                 Timestamp uptime, const VersionInfo& v) {
  w.StartObject();
  w.Key("cluster");
  w.StartObject();
  w.Key("peers");
  w.StartArray();
  w.EndArray();
  w.Key("status");
  w.String("disabled");
  w.EndObject();
  w.Key("config");
  w.StartObject();
  w.Key("original");
  w.String(original_config);
  w.EndObject();
  w.Key("uptime");
  Time(w, uptime);
  w.Key("versionInfo");
  w.StartObject();
  w.Key("branch");
  w.String(v.branch);
  w.Key("buildDate");
  w.String(v.build_date);
  w.Key("buildUser");
  w.String(v.build_user);
  w.Key("goVersion");
  w.String(v.go_version);
  w.Key("revision");
  w.String(v.revision);
  w.Key("version");
  w.String(v.version);
  w.EndObject();
  w.EndObject();
}

void WriteReceivers(JsonWriter& w, const std::vector<std::string>& names) {
  w.StartArray();
  for (const std::string& n : names) Receiver(w, n);
  w.EndArray();
}

}  // namespace vigil::web::api::v2
