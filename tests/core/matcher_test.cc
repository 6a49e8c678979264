#include "core/matcher.h"

#include <catch2/catch.hpp>

#include "core/status_macros.h"
#include "core/time.h"

namespace vigil {

static Matcher M(MatchType t, std::string_view v) {
  auto m = Matcher::Make(t, "a", v);
  REQUIRE(m.ok());
  return *m;
}

TEST_CASE("Regex matchers are fully anchored and dot matches newline",
          "[matcher]") {
  REQUIRE(M(MatchType::kRegexMatch, "fo+").Matches("foo"));
  REQUIRE_FALSE(M(MatchType::kRegexMatch, "fo+").Matches("xfoo"));
  REQUIRE_FALSE(M(MatchType::kRegexMatch, "foo").Matches("foobar"));
  REQUIRE(M(MatchType::kRegexMatch, "a.b").Matches("a\nb"));
  REQUIRE(M(MatchType::kRegexMatch, "x|y").Matches("y"));
  REQUIRE_FALSE(M(MatchType::kRegexMatch, "x|y").Matches("xy"));
  REQUIRE(M(MatchType::kRegexNoMatch, "x|y").Matches("z"));
}

// Found by fuzz_matcher (tests/fuzz/regressions/matcher/).
TEST_CASE("A value that closes the anchoring group matches as in Prometheus",
          "[matcher][fuzz]") {
  // Prometheus compiles ^(?:value)$ and searches it (Go's MatchString):
  // here the value's `)` closes the group and \Q quotes the rest, so the
  // pattern is `^(?:a)` then the literal `(b)$`, anchored at the start only.
  const Matcher m = M(MatchType::kRegexMatch, "a)\\Q(b");
  CHECK(m.Matches("a(b)$"));
  CHECK(m.Matches("a(b)$ and more"));
  CHECK_FALSE(m.Matches("a(b)"));
  CHECK_FALSE(m.Matches("xa(b)$"));
  CHECK_FALSE(M(MatchType::kRegexNoMatch, "a)\\Q(b").Matches("a(b)$z"));
}

TEST_CASE("Empty-value semantics follow Prometheus", "[matcher]") {
  REQUIRE(M(MatchType::kEqual, "").MatchesEmpty());
  REQUIRE(M(MatchType::kRegexMatch, ".*").MatchesEmpty());
  REQUIRE_FALSE(M(MatchType::kRegexMatch, ".+").MatchesEmpty());
  REQUIRE(M(MatchType::kNotEqual, "x").MatchesEmpty());
}

TEST_CASE("Invalid regex is an InvalidArgument naming the regex", "[matcher]") {
  auto m = Matcher::Make(MatchType::kRegexMatch, "a", "(");
  REQUIRE_FALSE(m.ok());
  REQUIRE(m.status().code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(std::string(m.status().message()).find("error parsing regexp") !=
          std::string::npos);
}

TEST_CASE("Durations parse like Prometheus", "[time]") {
  REQUIRE(*ParseDuration("1h30m") == 5400000);
  REQUIRE(*ParseDuration("15d") == 15 * 86400000LL);
  REQUIRE(*ParseDuration("500ms") == 500);
  REQUIRE(*ParseDuration("1m5s") == 65000);
  REQUIRE_FALSE(ParseDuration("5x").ok());
  REQUIRE_FALSE(ParseDuration("30m1h").ok());
  REQUIRE_FALSE(ParseDuration("").ok());
  REQUIRE(FormatDurationMs(5400000) == "1h30m");
}

TEST_CASE("Staleness NaN is bit-distinct from NaN", "[time]") {
  REQUIRE(IsStaleNaN(StaleNaN()));
  REQUIRE_FALSE(IsStaleNaN(std::numeric_limits<double>::quiet_NaN()));
}

}  // namespace vigil

#include "core/logger.h"

namespace vigil {
TEST_CASE("Logger writes logfmt lines, quoting when needed", "[logger]") {
  std::string line = Logger::Format(
      1767225600123, LogLevel::kWarn, "scrape failed",
      {{"target", "http://a:9100/metrics"}, {"err", "dial tcp: refused"}});
  REQUIRE(line ==
          "ts=2026-01-01T00:00:00.123Z level=warn msg=\"scrape failed\" "
          "target=http://a:9100/metrics err=\"dial tcp: refused\"");
  LogLevel l;
  REQUIRE(ParseLogLevel("debug", &l));
  REQUIRE(l == LogLevel::kDebug);
  REQUIRE_FALSE(ParseLogLevel("loud", &l));
}
}  // namespace vigil
