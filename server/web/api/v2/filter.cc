#include "server/web/api/v2/filter.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "server/config/alertmanager.h"

namespace vigil::web::api::v2 {
namespace {

// The last value of `name`, if non-empty (go-openapi's reading of an
// optional scalar parameter).
std::optional<std::string_view> Last(const net::HttpRequest& req,
                                     std::string_view name) {
  std::vector<std::string_view> v = req.Params(name);
  if (v.empty() || v.back().empty()) return std::nullopt;
  return v.back();
}

bool BoolParam(const net::HttpRequest& req, std::string_view name) {
  auto v = Last(req, name);
  return v ? ParseOpenApiBool(*v) : true;
}

absl::StatusOr<std::vector<Matcher>> Matchers(const net::HttpRequest& req) {
  std::vector<Matcher> out;
  for (std::string_view f : req.Params("filter")) {
    auto m = config::am::ParseMatcher(f);
    if (!m.ok()) return absl::InvalidArgumentError(m.status().message());
    out.push_back(*std::move(m));
  }
  return out;
}

}  // namespace

bool ParseOpenApiBool(std::string_view s) {
  std::string l(s);
  std::transform(l.begin(), l.end(), l.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (std::string_view t : {"true", "1", "yes", "ok", "y", "on", "selected",
                             "checked", "t", "enabled"}) {
    if (l == t) return true;
  }
  return false;
}

absl::StatusOr<AlertFilter> ParseAlertFilter(const net::HttpRequest& req) {
  AlertFilter f;
  auto ms = Matchers(req);
  if (!ms.ok()) return ms.status();
  f.matchers = *std::move(ms);
  if (auto r = Last(req, "receiver")) {
    auto m = Matcher::Make(MatchType::kRegexMatch, "receiver", *r);
    if (!m.ok()) {
      return absl::InvalidArgumentError("failed to parse receiver param: " +
                                        std::string(m.status().message()));
    }
    f.receiver = *std::move(m);
  }
  f.silenced = BoolParam(req, "silenced");
  f.inhibited = BoolParam(req, "inhibited");
  f.active = BoolParam(req, "active");
  return f;
}

absl::StatusOr<std::vector<Matcher>> ParseSilenceFilter(
    const net::HttpRequest& req) {
  return Matchers(req);
}

bool AlertFilter::Matches(const alerting::AlertView& a) const {
  if (!active && a.state == alerting::AlertState::kActive) return false;
  if (!silenced && !a.silenced_by.empty()) return false;
  if (!inhibited && !a.inhibited_by.empty()) return false;
  // Alertmanager's matchFilterLabels comes to this: an absent label is "".
  for (const Matcher& m : matchers) {
    if (!m.Matches(a.alert.labels.Get(m.name()))) return false;
  }
  return true;
}

bool AlertFilter::ReceiverMatches(std::string_view receiver_name) const {
  return !receiver || receiver->Matches(receiver_name);
}

bool SilenceMatchesFilter(const alerting::Silence& s,
                          const std::vector<Matcher>& filter) {
  for (const Matcher& f : filter) {
    bool found = std::any_of(
        s.matchers.begin(), s.matchers.end(), [&](const Matcher& m) {
          return m.name() == f.name() && m.type() == f.type() &&
                 m.value() == f.value();
        });
    if (!found) return false;
  }
  return true;
}

}  // namespace vigil::web::api::v2
