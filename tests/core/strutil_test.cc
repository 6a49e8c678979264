// Go's strconv.Unquote and its PromQL dialect, shared by the PromQL lexer
// and the template engine.
#include "core/strutil.h"

#include <catch2/catch.hpp>

namespace vigil {
namespace {

using D = UnquoteDialect;

TEST_CASE("GoUnquote decodes Go's escapes", "[strutil]") {
  REQUIRE(GoUnquote(R"("a\tb\\c\"d")") == "a\tb\\c\"d");
  REQUIRE(GoUnquote(R"("\a\b\f\n\r\v")") == "\a\b\f\n\r\v");
  REQUIRE(GoUnquote(R"("\x41\101\u00e9\U0001F600")") ==
          "AA\xc3\xa9\xf0\x9f\x98\x80");
  REQUIRE(GoUnquote(R"("\xff")") ==
          std::string("\xff"));                      // a raw byte, not a rune
  REQUIRE(GoUnquote("\"\xc3\xa9\"") == "\xc3\xa9");  // literal UTF-8 kept
  REQUIRE(GoUnquote("\"\xff\"") == "\xff");          // invalid UTF-8 kept as is
  REQUIRE(GoUnquote(R"('\'')") == "'");
  REQUIRE(GoUnquote("`a\\n\r`") == "a\\n");  // raw: no escapes, \r dropped
}

TEST_CASE("GoUnquote rejects malformed literals", "[strutil]") {
  for (const char* bad :
       {"",          "\"",        "\"abc",    "abc\"",       "'ab'",
        "''",        "\"a\"b\"",  "\"\\\"",   "\"\\q\"",     "\"\\x4\"",
        "\"\\xg0\"", "\"\\400\"", "\"\\19\"", "\"\\uD800\"", "\"\\U00110000\"",
        "\"a\nb\"",  "\"\\'\"",   "'\\\"'",   "`a`b`",       "\"a'",
        "xax"}) {
    INFO(bad);
    REQUIRE_FALSE(GoUnquote(bad).has_value());
  }
}

TEST_CASE("PromQL's dialect: single quotes hold strings, raw strings keep \\r",
          "[strutil]") {
  REQUIRE(GoUnquote("'abc'", D::kPromQL) == "abc");
  REQUIRE(GoUnquote("''", D::kPromQL) == "");
  REQUIRE(GoUnquote(R"('a\'b"c')", D::kPromQL) == "a'b\"c");
  REQUIRE(GoUnquote("`a\r`", D::kPromQL) == "a\r");
  REQUIRE_FALSE(GoUnquote(R"('a\"')", D::kPromQL).has_value());
  REQUIRE_FALSE(GoUnquote("'a\nb'", D::kPromQL).has_value());
}

TEST_CASE("GoUnquoteRune reads exactly one rune", "[strutil]") {
  REQUIRE(GoUnquoteRune("'a'") == uint32_t{'a'});
  REQUIRE(GoUnquoteRune(R"('\n')") == uint32_t{'\n'});
  REQUIRE(GoUnquoteRune(R"('\u00e9')") == uint32_t{0xe9});
  REQUIRE(GoUnquoteRune("'\xc3\xa9'") == uint32_t{0xe9});
  REQUIRE_FALSE(GoUnquoteRune("'ab'").has_value());
  REQUIRE_FALSE(GoUnquoteRune("''").has_value());
  REQUIRE_FALSE(GoUnquoteRune("\"a\"").has_value());
}

}  // namespace
}  // namespace vigil
