#include "server/alerting/report.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/go/strconv.h"
#include "fmt/format.h"
#include "server/alerting/alert.h"

namespace vigil::alerting {

namespace {

struct Occurrence {
  uint64_t fp = 0;
  Labels labels;
  Timestamp start = 0;
  Timestamp end = 0;  // 0 while unknown
  bool resolved = false;
  Timestamp last_ends_at = 0;
};

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Feedback and occurrences match on fingerprint and startsAt to the second
// (the UI and amtool print whole seconds).
bool SameStart(Timestamp a, Timestamp b) { return a / 1000 == b / 1000; }

}  // namespace

QualityReport BuildReport(const std::vector<NotificationRecord>& notifs,
                          const std::vector<Feedback>& feedback,
                          const std::vector<Silence>& silences, Timestamp since,
                          Timestamp now) {
  QualityReport rep;
  rep.since = since;
  rep.now = now;
  std::map<std::pair<uint64_t, Timestamp>, Occurrence> occ;
  std::map<std::string, AlertQuality> by_name;
  for (const auto& n : notifs) {
    std::set<std::string> names;
    for (const auto& a : n.alerts) {
      Occurrence& o = occ[{a.fingerprint, a.starts_at}];
      o.fp = a.fingerprint;
      o.labels = a.labels;
      o.start = a.starts_at;
      o.last_ends_at = std::max(o.last_ends_at, a.ends_at);
      if (a.resolved) {
        o.resolved = true;
        o.end = a.ends_at;
      }
      names.insert(std::string(a.labels.Get("alertname")));
    }
    for (const auto& name : names) {
      AlertQuality& q = by_name[name];
      q.notifications++;
      if (!n.ok) q.failed_notifications++;
    }
  }
  std::map<std::string, std::vector<int64_t>> firing, acks;
  std::map<uint64_t, std::vector<const Occurrence*>> by_fp;
  for (auto& [key, o] : occ) {
    if (!o.resolved) {
      o.end = o.last_ends_at > o.start && o.last_ends_at < now ? o.last_ends_at
                                                               : now;
    }
    by_fp[o.fp].push_back(&o);
  }
  for (const auto& [key, o] : occ) {
    std::string name(o.labels.Get("alertname"));
    AlertQuality& q = by_name[name];
    q.alertname = name;
    q.fired++;
    firing[name].push_back(std::max<int64_t>(0, o.end - o.start));
    std::optional<Timestamp> ack;
    for (const auto& f : feedback) {
      if (f.fingerprint != o.fp || !SameStart(f.starts_at, o.start)) continue;
      q.reviewed++;
      if (!f.actionable) q.not_actionable++;
      if (f.time >= o.start && (!ack || f.time < *ack)) ack = f.time;
    }
    for (const auto& s : silences) {
      if (s.starts_at < o.start || s.starts_at > o.end || !s.Matches(o.labels))
        continue;
      if (!ack || s.starts_at < *ack) ack = s.starts_at;
    }
    if (ack) {
      q.acknowledged++;
      acks[name].push_back(*ack - o.start);
    }
  }
  for (const auto& [fp, os] : by_fp) {
    for (size_t i = 1; i < os.size(); ++i) {
      const Occurrence* prev = os[i - 1];
      if (prev->resolved && os[i]->start >= prev->end &&
          os[i]->start - prev->end < kFlapWindowMs)
        by_name[std::string(os[i]->labels.Get("alertname"))].flaps++;
    }
  }
  for (auto& [name, q] : by_name) {
    q.alertname = name;
    const auto& f = firing[name];
    q.median_firing_ms = Median(f);
    for (int64_t x : f) q.total_firing_ms += x;
    if (q.reviewed > 0) {
      q.not_actionable_share = double(q.not_actionable) / q.reviewed;
      q.recalibrate = *q.not_actionable_share > kRecalibrateShare;
    }
    if (!acks[name].empty()) q.median_ack_ms = Median(acks[name]);
    rep.alerts.push_back(q);
  }
  return rep;
}

absl::StatusOr<QualityReport> BuildReport(const AlertHistory& h,
                                          Timestamp since, Timestamp now) {
  auto n = h.Notifications(since);
  if (!n.ok()) return n.status();
  auto f = h.Feedbacks();
  if (!f.ok()) return f.status();
  auto s = h.Silences();
  if (!s.ok()) return s.status();
  return BuildReport(*n, *f, *s, since, now);
}

std::string ReportJson(const QualityReport& r) {
  std::string out = fmt::format(
      "{{\"since\":{},\"now\":{},\"recalibrateAbove\":{},\"alerts\":[",
      go::Quote(FormatRfc3339Seconds(r.since)),
      go::Quote(FormatRfc3339Seconds(r.now)), kRecalibrateShare);
  for (size_t i = 0; i < r.alerts.size(); ++i) {
    const AlertQuality& q = r.alerts[i];
    out += fmt::format(
        "{}{{\"alertname\":{},\"fired\":{},\"medianFiringSeconds\":{},"
        "\"totalFiringSeconds\":{},\"reviewed\":{},\"notActionable\":{},"
        "\"notActionableShare\":{},\"recalibrate\":{},\"acknowledged\":{},"
        "\"medianAckSeconds\":{},\"flaps\":{},\"notifications\":{},"
        "\"failedNotifications\":{}}}",
        i ? "," : "", go::Quote(q.alertname), q.fired,
        double(q.median_firing_ms) / 1000, double(q.total_firing_ms) / 1000,
        q.reviewed, q.not_actionable,
        q.not_actionable_share ? fmt::format("{}", *q.not_actionable_share)
                               : "null",
        q.recalibrate ? "true" : "false", q.acknowledged,
        q.median_ack_ms ? fmt::format("{}", double(*q.median_ack_ms) / 1000)
                        : "null",
        q.flaps, q.notifications, q.failed_notifications);
  }
  return out + "]}";
}

absl::StatusOr<QualityReport> DecodeReportJson(std::string_view data) {
  rapidjson::Document d;
  d.Parse(data.data(), data.size());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("alerts") ||
      !d["alerts"].IsArray())
    return absl::DataLossError("report: not a report object");
  QualityReport r;
  if (d.HasMember("since") && d["since"].IsString()) {
    auto t = ParseTime(d["since"].GetString());
    if (t.ok()) r.since = *t;
  }
  if (d.HasMember("now") && d["now"].IsString()) {
    auto t = ParseTime(d["now"].GetString());
    if (t.ok()) r.now = *t;
  }
  auto num = [](const rapidjson::Value& v, const char* k) -> double {
    auto it = v.FindMember(k);
    return it != v.MemberEnd() && it->value.IsNumber() ? it->value.GetDouble()
                                                       : 0;
  };
  auto has = [](const rapidjson::Value& v, const char* k) {
    auto it = v.FindMember(k);
    return it != v.MemberEnd() && it->value.IsNumber();
  };
  for (const auto& a : d["alerts"].GetArray()) {
    if (!a.IsObject()) return absl::DataLossError("report: bad alert");
    AlertQuality q;
    if (a.HasMember("alertname") && a["alertname"].IsString())
      q.alertname = a["alertname"].GetString();
    q.fired = int(num(a, "fired"));
    q.median_firing_ms = int64_t(num(a, "medianFiringSeconds") * 1000);
    q.total_firing_ms = int64_t(num(a, "totalFiringSeconds") * 1000);
    q.reviewed = int(num(a, "reviewed"));
    q.not_actionable = int(num(a, "notActionable"));
    if (has(a, "notActionableShare"))
      q.not_actionable_share = num(a, "notActionableShare");
    q.recalibrate = a.HasMember("recalibrate") && a["recalibrate"].IsBool() &&
                    a["recalibrate"].GetBool();
    q.acknowledged = int(num(a, "acknowledged"));
    if (has(a, "medianAckSeconds"))
      q.median_ack_ms = int64_t(num(a, "medianAckSeconds") * 1000);
    q.flaps = int(num(a, "flaps"));
    q.notifications = int(num(a, "notifications"));
    q.failed_notifications = int(num(a, "failedNotifications"));
    r.alerts.push_back(q);
  }
  return r;
}

std::string ReportText(const QualityReport& r) {
  std::string out =
      fmt::format("Alert quality from {} to {}\n\n",
                  FormatRfc3339Seconds(r.since), FormatRfc3339Seconds(r.now));
  out += fmt::format("{:<28} {:>6} {:>10} {:>10} {:>16} {:>10} {:>6} {:>9}\n",
                     "ALERT", "FIRED", "MEDIAN", "TOTAL", "NOT ACTIONABLE",
                     "FIRST ACK", "FLAPS", "SENT/ERR");
  if (r.alerts.empty()) out += "(no notification in the period)\n";
  for (const auto& q : r.alerts) {
    std::string share =
        q.not_actionable_share
            ? fmt::format("{:.0f}% of {}{}", *q.not_actionable_share * 100,
                          q.reviewed, q.recalibrate ? " !" : "")
            : "-";
    out += fmt::format(
        "{:<28} {:>6} {:>10} {:>10} {:>16} {:>10} {:>6} {:>9}\n", q.alertname,
        q.fired, FormatDurationMs(q.median_firing_ms),
        FormatDurationMs(q.total_firing_ms), share,
        q.median_ack_ms ? FormatDurationMs(*q.median_ack_ms) : "-", q.flaps,
        fmt::format("{}/{}", q.notifications, q.failed_notifications));
  }
  bool any = false;
  for (const auto& q : r.alerts) {
    if (!q.recalibrate) continue;
    if (!any) out += "\n";
    any = true;
    out += fmt::format(
        "! {}: {:.0f}% of reviewed occurrences were not actionable (over "
        "30%): recalibrate it (vigil calibrate)\n",
        q.alertname, *q.not_actionable_share * 100);
  }
  for (const auto& q : r.alerts) {
    if (q.flaps > 0)
      out += fmt::format(
          "~ {}: {} re-fire(s) within an hour of resolving (flapping: "
          "raise `for` or add hysteresis)\n",
          q.alertname, q.flaps);
  }
  return out;
}

}  // namespace vigil::alerting
