// core/go/strconv.h: Go's strconv.Unquote and its PromQL dialect, shared by
// the PromQL lexer and the template engine.
#include <catch2/catch.hpp>

#include "core/go/strconv.h"

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

TEST_CASE("PromQL's dialect: single quotes hold strings, raw strings keep \\r",
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
