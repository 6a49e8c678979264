#include "server/notifier/targets.h"

#include <set>
#include <utility>

#include "core/go/path.h"
#include "fmt/format.h"

namespace vigil::notifier {

namespace {

constexpr std::string_view kAddressLabel = "__address__";
constexpr std::string_view kSchemeLabel = "__scheme__";
constexpr std::string_view kAlertsPathLabel = "__alerts_path__";

// alertmanagerLabels.url(): url.URL{Scheme, Host, Path}.String().
std::string AlertmanagerUrl(const Labels& ls) {
  std::string_view path = ls.Get(kAlertsPathLabel);
  std::string out =
      fmt::format("{}://{}", ls.Get(kSchemeLabel), ls.Get(kAddressLabel));
  if (!path.empty() && path[0] != '/') out.push_back('/');
  out.append(path);
  return out;
}

}  // namespace

// path.Join cleans the joined path; empty elements vanish.
std::string AlertsPath(std::string_view prefix) {
  return go::CleanPath(fmt::format("/{}/api/v2/alerts", prefix));
}

// AlertmanagerFromGroup per group, then sync's deduplication over all.
void ResolveAlertmanagers(const AlertmanagerSet& cfg,
                          const std::vector<AlertmanagerTargetGroup>& groups,
                          std::vector<std::string>* urls,
                          std::vector<std::string>* dropped, Logger* logger) {
  std::set<std::string> seen;
  std::string path = AlertsPath(cfg.path_prefix);
  for (const AlertmanagerTargetGroup& g : groups) {
    std::vector<std::string> group_urls, group_dropped;
    bool ok = true;
    for (const std::string& target : g.targets) {
      LabelsBuilder lb;
      lb.Set(kAddressLabel, target);
      lb.Set(kSchemeLabel, cfg.scheme);
      lb.Set(kAlertsPathLabel, path);
      for (const Label& l : g.labels) {
        if (l.name != kAddressLabel) lb.Set(l.name, l.value);
      }
      Labels pre = lb.Build();
      Labels post;
      if (!Process(pre, cfg.relabel_configs, &post)) {
        group_dropped.push_back(AlertmanagerUrl(pre));
        continue;
      }
      std::string_view addr = post.Get(kAddressLabel);
      if (addr.find('/') != std::string_view::npos) {
        if (logger != nullptr) {
          logger->Error(
              "Creating discovered Alertmanagers failed",
              {{"err", fmt::format("\"{}\" is not a valid hostname", addr)}});
        }
        ok = false;
        break;
      }
      group_urls.push_back(AlertmanagerUrl(post));
    }
    if (!ok) continue;
    for (std::string& u : group_urls) {
      if (seen.insert(u).second) urls->push_back(std::move(u));
    }
    for (std::string& u : group_dropped) dropped->push_back(std::move(u));
  }
}

std::vector<Alert> RelabelAlerts(const std::vector<RelabelConfig>& cfgs,
                                 const Labels& external,
                                 std::vector<Alert> alerts) {
  if (cfgs.empty() && external.empty()) return alerts;
  std::vector<Alert> out;
  out.reserve(alerts.size());
  for (Alert& a : alerts) {
    Labels in;
    if (external.empty()) {
      in = std::move(a.labels);
    } else {
      LabelsBuilder lb(a.labels);
      for (const Label& l : external) {
        if (a.labels.Get(l.name).empty()) lb.Set(l.name, l.value);
      }
      in = lb.Build();
    }
    if (cfgs.empty()) {
      a.labels = std::move(in);
    } else if (!Process(in, cfgs, &a.labels)) {
      continue;
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace vigil::notifier
