// Inhibition (Alertmanager's inhibit.Inhibitor.Mutes).
#include "catch2/catch.hpp"
#include "server/alerting/inhibit.h"

namespace vigil::alerting {
namespace {

constexpr Timestamp kNow = 1'700'000'000'000;

Matcher M(std::string_view n, std::string_view v,
          MatchType t = MatchType::kEqual) {
  auto m = Matcher::Make(t, n, v);
  REQUIRE(m.ok());
  return *m;
}

Alert A(Labels l, Timestamp ends = kNow + 300'000) {
  Alert a;
  a.labels = std::move(l);
  a.starts_at = kNow - 1000;
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
  Inhibitor ih(
      {Rule({M("alertname", "LLMEngineDown")},
            {M("alertname", "QueueHigh|TTFTHigh", MatchType::kRegexMatch)},
            {"instance"})});
  Labels down{{"alertname", "LLMEngineDown"}, {"instance", "gpu1"}};
  Labels queue1{{"alertname", "QueueHigh"}, {"instance", "gpu1"}};
  Labels queue2{{"alertname", "QueueHigh"}, {"instance", "gpu2"}};
  Labels other{{"alertname", "DiskFull"}, {"instance", "gpu1"}};
  CHECK(!ih.Mutes(queue1, kNow));  // no source yet
  ih.Observe(A(down), Fingerprint(down));
  auto by = ih.Mutes(queue1, kNow);
  REQUIRE(by);
  CHECK(*by == Fingerprint(down));
  CHECK(!ih.Mutes(queue2, kNow));  // other instance
  CHECK(!ih.Mutes(other, kNow));   // not a target
  CHECK(!ih.Mutes(down, kNow));    // the source itself is no target
  // Once the source resolves it mutes nothing.
  CHECK(!ih.Mutes(queue1, kNow + 300'000));
  ih.Observe(A(down, kNow - 1), Fingerprint(down));
  CHECK(!ih.Mutes(queue1, kNow));
  ih.Observe(A(down), Fingerprint(down));
  CHECK(ih.Mutes(queue1, kNow));
  ih.Forget(Fingerprint(down));
  CHECK(!ih.Mutes(queue1, kNow));
}

TEST_CASE("inhibit: missing equal labels count as equal (both empty)",
          "[alerting][inhibit]") {
  Inhibitor ih({Rule({M("severity", "critical")}, {M("severity", "warning")},
                     {"cluster"})});
  Labels src{{"alertname", "X"}, {"severity", "critical"}};
  Labels tgt{{"alertname", "Y"}, {"severity", "warning"}};
  Labels tgt_c{{"alertname", "Y"}, {"cluster", "a"}, {"severity", "warning"}};
  ih.Observe(A(src), Fingerprint(src));
  CHECK(ih.Mutes(tgt, kNow));
  CHECK(!ih.Mutes(tgt_c, kNow));
}

TEST_CASE("inhibit: an alert matching both sides is not muted by its peers",
          "[alerting][inhibit]") {
  // Source and target matchers both match every `team=db` alert.
  Inhibitor ih({Rule({M("team", "db")}, {M("team", "db")}, {})});
  Labels a{{"alertname", "A"}, {"team", "db"}};
  Labels b{{"alertname", "B"}, {"team", "db"}};
  ih.Observe(A(a), Fingerprint(a));
  ih.Observe(A(b), Fingerprint(b));
  CHECK(!ih.Mutes(a, kNow));
  CHECK(!ih.Mutes(b, kNow));

  // A source that matches only the source side still mutes a two-sided
  // target.
  Inhibitor ih2(
      {Rule({M("severity", "critical|warning", MatchType::kRegexMatch)},
            {M("severity", "warning")}, {"alertname"})});
  Labels crit{{"alertname", "Z"}, {"severity", "critical"}};
  Labels warn{{"alertname", "Z"}, {"severity", "warning"}};
  ih2.Observe(A(warn), Fingerprint(warn));
  CHECK(!ih2.Mutes(warn, kNow));  // only itself, which is a target too
  ih2.Observe(A(crit), Fingerprint(crit));
  auto by = ih2.Mutes(warn, kNow);
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
