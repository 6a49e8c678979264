// core/go/strconv.h and utf8.h: Go's strconv (Unquote and its PromQL
// dialect, ParseFloat, ParseInt) and utf8 decoding.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>

#include "core/go/strconv.h"
#include "core/go/utf8.h"

namespace vigil {
namespace {

using D = go::UnquoteDialect;

TEST_CASE("go::Unquote decodes Go's escapes", "[go][strconv]") {
  REQUIRE(go::Unquote(R"("a\tb\\c\"d")") == "a\tb\\c\"d");
  REQUIRE(go::Unquote(R"("\a\b\f\n\r\v")") == "\a\b\f\n\r\v");
  REQUIRE(go::Unquote(R"("\x41\101\u00e9\U0001F600")") ==
          "AA\xc3\xa9\xf0\x9f\x98\x80");
  REQUIRE(go::Unquote(R"("\xff")") ==
          std::string("\xff"));                        // a raw byte, not a rune
  REQUIRE(go::Unquote("\"\xc3\xa9\"") == "\xc3\xa9");  // literal UTF-8 kept
  REQUIRE(go::Unquote("\"\xff\"") == "\xff");  // invalid UTF-8 kept as is
  REQUIRE(go::Unquote(R"('\'')") == "'");
  REQUIRE(go::Unquote("`a\\n\r`") == "a\\n");  // raw: no escapes, \r dropped
}

TEST_CASE("go::Unquote rejects malformed literals", "[go][strconv]") {
  for (const char* bad :
       {"",          "\"",        "\"abc",    "abc\"",       "'ab'",
        "''",        "\"a\"b\"",  "\"\\\"",   "\"\\q\"",     "\"\\x4\"",
        "\"\\xg0\"", "\"\\400\"", "\"\\19\"", "\"\\uD800\"", "\"\\U00110000\"",
        "\"a\nb\"",  "\"\\'\"",   "'\\\"'",   "`a`b`",       "\"a'",
        "xax"}) {
    INFO(bad);
    REQUIRE_FALSE(go::Unquote(bad).has_value());
  }
}

TEST_CASE(
    "PromQL's dialect: single quotes hold strings, raw strings keep carriage "
    "returns",
    "[go][strconv]") {
  REQUIRE(go::Unquote("'abc'", D::kPromQL) == "abc");
  REQUIRE(go::Unquote("''", D::kPromQL) == "");
  REQUIRE(go::Unquote(R"('a\'b"c')", D::kPromQL) == "a'b\"c");
  REQUIRE(go::Unquote("`a\r`", D::kPromQL) == "a\r");
  REQUIRE_FALSE(go::Unquote(R"('a\"')", D::kPromQL).has_value());
  REQUIRE_FALSE(go::Unquote("'a\nb'", D::kPromQL).has_value());
}

TEST_CASE("go::UnquoteRune reads exactly one rune", "[go][strconv]") {
  REQUIRE(go::UnquoteRune("'a'") == uint32_t{'a'});
  REQUIRE(go::UnquoteRune(R"('\n')") == uint32_t{'\n'});
  REQUIRE(go::UnquoteRune(R"('\u00e9')") == uint32_t{0xe9});
  REQUIRE(go::UnquoteRune("'\xc3\xa9'") == uint32_t{0xe9});
  REQUIRE_FALSE(go::UnquoteRune("'ab'").has_value());
  REQUIRE_FALSE(go::UnquoteRune("''").has_value());
  REQUIRE_FALSE(go::UnquoteRune("\"a\"").has_value());
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

TEST_CASE("go::ParseFloat accepts Go's float syntax only", "[go][strconv]") {
  CHECK(*go::ParseFloat("1.5e3") == 1500);
  CHECK(*go::ParseFloat("0x1p-2") == 0.25);
  CHECK(*go::ParseFloat("1_000.5") == 1000.5);
  CHECK(*go::ParseFloat("-Inf") == -HUGE_VAL);
  CHECK(*go::ParseFloat("infinity") == HUGE_VAL);
  CHECK(std::isnan(*go::ParseFloat("NaN")));
  CHECK(*go::ParseFloat("1e-400") == 0);  // underflow rounds to zero
  CHECK(go::ParseFloat("+NaN").status().message() ==
        "strconv.ParseFloat: parsing \"+NaN\": invalid syntax");
  CHECK(go::ParseFloat("0x10").status().message() ==
        "strconv.ParseFloat: parsing \"0x10\": invalid syntax");
  CHECK(go::ParseFloat("1__0").status().message() ==
        "strconv.ParseFloat: parsing \"1__0\": invalid syntax");
  CHECK(go::ParseFloat("_1").ok() == false);
  CHECK(go::ParseFloat("1e400").status().message() ==
        "strconv.ParseFloat: parsing \"1e400\": value out of range");
}

TEST_CASE("go::ParseInt with base 0 reads Go's integer literals",
          "[go][strconv]") {
  CHECK(*go::ParseInt("0x1F", 0) == 31);
  CHECK(*go::ParseInt("0o17", 0) == 15);
  CHECK(*go::ParseInt("017", 0) == 15);
  CHECK(*go::ParseInt("0b101", 0) == 5);
  CHECK(*go::ParseInt("1_000", 0) == 1000);
  CHECK(*go::ParseInt("-9223372036854775808", 10) == INT64_MIN);
  CHECK(go::ParseInt("9223372036854775808", 10).status().message() ==
        "strconv.ParseInt: parsing \"9223372036854775808\": value out of "
        "range");
  CHECK(go::ParseInt("1_000", 10).status().message() ==
        "strconv.ParseInt: parsing \"1_000\": invalid syntax");
  CHECK_FALSE(go::ParseInt("08", 0).ok());
  CHECK_FALSE(go::ParseInt("", 0).ok());
  CHECK_FALSE(go::ParseInt("0x", 0).ok());
}

TEST_CASE("go::DecodeRune follows utf8.DecodeRuneInString", "[go][utf8]") {
  uint32_t r;
  CHECK(go::DecodeRune("é", 0, &r) == 2);
  CHECK(r == 0xE9);
  CHECK(go::DecodeRune("\xff", 0, &r) == 1);
  CHECK(r == go::kRuneError);
  CHECK(go::DecodeRune("\xe2\x82", 0, &r) == 1);      // truncated
  CHECK(go::DecodeRune("\xed\xa0\x80", 0, &r) == 1);  // surrogate
  CHECK(go::DecodeRune("\xef\xbf\xbd", 0, &r) == 3);  // a real U+FFFD
  CHECK(r == go::kRuneError);
  CHECK(go::DecodeRune("a", 1, &r) == 0);
  CHECK(go::RuneCount("a\xffé") == 3);
  CHECK(go::ValidString("aé"));
  CHECK_FALSE(go::ValidString("a\xc0\x80"));  // overlong
}

}  // namespace
}  // namespace vigil
