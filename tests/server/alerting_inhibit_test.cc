// Inhibition (Alertmanager's inhibit.Inhibitor.Mutes).
#include "catch2/catch.hpp"
#include "server/alerting/inhibit.h"

namespace vigil::alerting {
namespace {

constexpr Timestamp kInhibitNow = 1'700'000'000'000;

Matcher InhibitMatcher(std::string_view n, std::string_view v,
                       MatchType t = MatchType::kEqual) {
  auto m = Matcher::Make(t, n, v);
  REQUIRE(m.ok());
  return *m;
}

Alert InhibitAlert(Labels l, Timestamp ends = kInhibitNow + 300'000) {
  Alert a;
  a.labels = std::move(l);
  a.starts_at = kInhibitNow - 1000;
  a.ends_at = ends;
  return a;
}

config::am::InhibitRule Rule(std::vector<Matcher> src, std::vector<Matcher> tgt,
                             std::vector<std::string> equal) {
  config::am::InhibitRule r;
  r.source_matchers = std::move(src);
  r.target_matchers = std::move(tgt);
  r.equal = std::move(equal);
  return r;
}

TEST_CASE("inhibit: source mutes targets with equal labels",
          "[alerting][inhibit]") {
  Inhibitor ih({Rule({InhibitMatcher("alertname", "LLMEngineDown")},
                     {InhibitMatcher("alertname", "QueueHigh|TTFTHigh",
                                     MatchType::kRegexMatch)},
                     {"instance"})});
  Labels down{{"alertname", "LLMEngineDown"}, {"instance", "gpu1"}};
  Labels queue1{{"alertname", "QueueHigh"}, {"instance", "gpu1"}};
  Labels queue2{{"alertname", "QueueHigh"}, {"instance", "gpu2"}};
  Labels other{{"alertname", "DiskFull"}, {"instance", "gpu1"}};
  CHECK(!ih.Mutes(queue1, kInhibitNow));  // no source yet
  ih.Observe(InhibitAlert(down), Fingerprint(down));
  auto by = ih.Mutes(queue1, kInhibitNow);
  REQUIRE(by);
  CHECK(*by == Fingerprint(down));
  CHECK(!ih.Mutes(queue2, kInhibitNow));  // other instance
  CHECK(!ih.Mutes(other, kInhibitNow));   // not a target
  CHECK(!ih.Mutes(down, kInhibitNow));    // the source itself is no target
  // Once the source resolves it mutes nothing.
  CHECK(!ih.Mutes(queue1, kInhibitNow + 300'000));
  ih.Observe(InhibitAlert(down, kInhibitNow - 1), Fingerprint(down));
  CHECK(!ih.Mutes(queue1, kInhibitNow));
  ih.Observe(InhibitAlert(down), Fingerprint(down));
  CHECK(ih.Mutes(queue1, kInhibitNow));
  ih.Forget(Fingerprint(down));
  CHECK(!ih.Mutes(queue1, kInhibitNow));
}

TEST_CASE("inhibit: missing equal labels count as equal (both empty)",
          "[alerting][inhibit]") {
  Inhibitor ih({Rule({InhibitMatcher("severity", "critical")},
                     {InhibitMatcher("severity", "warning")}, {"cluster"})});
  Labels src{{"alertname", "X"}, {"severity", "critical"}};
  Labels tgt{{"alertname", "Y"}, {"severity", "warning"}};
  Labels tgt_c{{"alertname", "Y"}, {"cluster", "a"}, {"severity", "warning"}};
  ih.Observe(InhibitAlert(src), Fingerprint(src));
  CHECK(ih.Mutes(tgt, kInhibitNow));
  CHECK(!ih.Mutes(tgt_c, kInhibitNow));
}

TEST_CASE("inhibit: an alert matching both sides is not muted by its peers",
          "[alerting][inhibit]") {
  // Source and target matchers both match every `team=db` alert.
  Inhibitor ih({Rule({InhibitMatcher("team", "db")},
                     {InhibitMatcher("team", "db")}, {})});
  Labels a{{"alertname", "A"}, {"team", "db"}};
  Labels b{{"alertname", "B"}, {"team", "db"}};
  ih.Observe(InhibitAlert(a), Fingerprint(a));
  ih.Observe(InhibitAlert(b), Fingerprint(b));
  CHECK(!ih.Mutes(a, kInhibitNow));
  CHECK(!ih.Mutes(b, kInhibitNow));

  // A source that matches only the source side still mutes a two-sided
  // target.
  Inhibitor ih2({Rule(
      {InhibitMatcher("severity", "critical|warning", MatchType::kRegexMatch)},
      {InhibitMatcher("severity", "warning")}, {"alertname"})});
  Labels crit{{"alertname", "Z"}, {"severity", "critical"}};
  Labels warn{{"alertname", "Z"}, {"severity", "warning"}};
  ih2.Observe(InhibitAlert(warn), Fingerprint(warn));
  CHECK(!ih2.Mutes(warn, kInhibitNow));  // only itself, which is a target too
  ih2.Observe(InhibitAlert(crit), Fingerprint(crit));
  auto by = ih2.Mutes(warn, kInhibitNow);
  REQUIRE(by);
  CHECK(*by == Fingerprint(crit));
}

TEST_CASE("alert fingerprint is Alertmanager's", "[alerting][inhibit]") {
  // model.LabelSet{}.Fingerprint() is FNV-1a's offset basis.
  CHECK(Fingerprint(Labels{}) == 14695981039346656037ull);
  CHECK(FingerprintHex(0xab) == "00000000000000ab");
  // As the real Alertmanager 0.25 reported for this alert.
  CHECK(FingerprintHex(Fingerprint(Labels{{"alertname", "X"}, {"job", "y"}})) ==
        "74297ba8ea7829fa");
  CHECK(Fingerprint(Labels{{"a", "b"}}) != Fingerprint(Labels{{"a", "c"}}));
}

}  // namespace
}  // namespace vigil::alerting
