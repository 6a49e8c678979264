// core/time.h: the one model.ParseDuration of the project.
#include "core/time.h"

#include <catch2/catch.hpp>
#include <string>

namespace {

using vigil::ParseDuration;
using vigil::ParseDurationAllowNegative;

std::string Error(std::string_view s) {
  auto d = ParseDuration(s);
  return d.ok() ? "ok" : std::string(d.status().message());
}

TEST_CASE("ParseDuration reads model.Duration's units largest first",
          "[time]") {
  CHECK(*ParseDuration("0") == 0);
  CHECK(*ParseDuration("1y2w3d4h5m6s7ms") ==
        ((((365 + 14 + 3) * 24 + 4) * 60 + 5) * 60 + 6) * 1000LL + 7);
  CHECK(*ParseDuration("90s") == 90000);
  CHECK(*ParseDuration("1ms") == 1);
}

TEST_CASE("ParseDuration's errors are model's texts, kinds in the code",
          "[time]") {
  CHECK(Error("") == "empty duration string");
  CHECK(Error("5x") == "unknown unit \"x\" in duration \"5x\"");
  CHECK(Error("5m1h") == "not a valid duration string: \"5m1h\"");
  CHECK(Error("1m1m") == "not a valid duration string: \"1m1m\"");
  CHECK(Error("m") == "not a valid duration string: \"m\"");
  CHECK(Error("5") == "not a valid duration string: \"5\"");
  CHECK(Error("-5m") == "not a valid duration string: \"-5m\"");
  CHECK(Error("1.5h") == "unknown unit \".\" in duration \"1.5h\"");
  CHECK(ParseDuration("5x").status().code() ==
        absl::StatusCode::kInvalidArgument);
  // int64 nanoseconds end at about 292 years.
  CHECK(*ParseDuration("292y") == 292LL * 365 * 86400 * 1000);
  auto big = ParseDuration("293y");
  CHECK(big.status().code() == absl::StatusCode::kOutOfRange);
  CHECK(big.status().message() == "duration out of range");
  CHECK(ParseDuration("99999999999999999999s").status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("ParseDurationAllowNegative takes one leading minus", "[time]") {
  CHECK(*ParseDurationAllowNegative("-1m30s") == -90000);
  CHECK(*ParseDurationAllowNegative("1m") == 60000);
  CHECK_FALSE(ParseDurationAllowNegative("--1m").ok());
}

}  // namespace
