// core/go/json.h: encoding/json's string escaping, both Go generations.
#include <catch2/catch.hpp>
#include <string>

#include "core/go/json.h"

namespace {

std::string Esc(std::string_view s, vigil::go::JsonDialect d) {
  std::string out;
  vigil::go::AppendJsonEscaped(&out, s, d);
  return out;
}

TEST_CASE("go::AppendJsonEscaped writes strings as json.Marshal", "[go]") {
  using vigil::go::JsonDialect;
  for (JsonDialect d : {JsonDialect::kGo121, JsonDialect::kGo122}) {
    CHECK(Esc("plain é ✓", d) == "plain é ✓");
    CHECK(Esc("a\"b\\c", d) == "a\\\"b\\\\c");
    CHECK(Esc("\n\r\t", d) == "\\n\\r\\t");
    CHECK(Esc("<a&b>", d) == "\\u003ca\\u0026b\\u003e");
    CHECK(Esc(std::string("\x01\x1f", 2), d) == "\\u0001\\u001f");
    CHECK(Esc("\xff", d) == "\\ufffd");
    CHECK(Esc("\xe2\x80\xa8|\xe2\x80\xa9", d) == "\\u2028|\\u2029");
  }
  CHECK(Esc("\b\f", JsonDialect::kGo121) == "\\u0008\\u000c");
  CHECK(Esc("\b\f", JsonDialect::kGo122) == "\\b\\f");
}

}  // namespace
