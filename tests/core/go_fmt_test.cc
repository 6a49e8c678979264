// core/go/fmt.h: Go's fmt verbs, flags and Printf machinery, tested without
// template values. Expected strings come from promtool's recorded output
// (tests/rules/testdata/templates/pass_printf.yml and pass_values.yml, cited
// as printf_NNN / values_NNN) or from the fmt package documentation (cited
// as "fmt docs"); none is invented here.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/go/fmt.h"

namespace vigil {
namespace {

using Scalar = std::variant<bool, int64_t, uint64_t, double, std::string>;

// A PrintfOperands over scalars, as a caller of core implements one:
// printing a refused verb as Go's badVerb does, with Go's type names.
class Scalars : public go::PrintfOperands {
 public:
  Scalars(std::vector<Scalar> a, go::Formatter* p) : a_(std::move(a)), p_(p) {}
  size_t size() const override { return a_.size(); }
  bool AsInt(size_t i, int* num) const override {
    if (const auto* v = std::get_if<int64_t>(&a_[i])) {
      if (*v < INT32_MIN || *v > INT32_MAX) return false;
      *num = static_cast<int>(*v);
      return true;
    }
    return false;
  }
  void Print(size_t i, int verb) override {
    if (PrintScalar(a_[i], verb)) return;
    p_->buf += "%!";
    p_->buf += static_cast<char>(verb);
    p_->buf += '(';
    PrintTyped(i);
    p_->buf += ')';
  }
  void PrintExtra(size_t i) override { PrintTyped(i); }

 private:
  bool PrintScalar(const Scalar& s, int verb) {
    if (const auto* b = std::get_if<bool>(&s)) return p_->FmtBool(*b, verb);
    if (const auto* i = std::get_if<int64_t>(&s))
      return p_->FmtInteger(static_cast<uint64_t>(*i), true, verb);
    if (const auto* u = std::get_if<uint64_t>(&s))
      return p_->FmtInteger(*u, false, verb);
    if (const auto* d = std::get_if<double>(&s)) return p_->FmtFloat(*d, verb);
    return p_->FmtString(std::get<std::string>(s), verb);
  }
  void PrintTyped(size_t i) {
    static const char* const kNames[] = {"bool", "int", "uint", "float64",
                                         "string"};
    p_->buf += kNames[a_[i].index()];
    p_->buf += '=';
    (void)PrintScalar(a_[i], 'v');
  }

  std::vector<Scalar> a_;
  go::Formatter* p_;
};

// fmt.Sprintf over scalars.
std::string Sprintf(std::string_view format, std::vector<Scalar> args) {
  go::Formatter p;
  Scalars operands(std::move(args), &p);
  go::DoPrintf(format, &operands, &p);
  return p.buf;
}

std::string S(const char* s) { return s; }

TEST_CASE("Formatter prints one scalar under the flags set by hand",
          "[gofmt]") {
  go::Formatter p;
  p.flags.plus = true;
  REQUIRE(p.FmtInteger(42, true, 'd'));
  REQUIRE(p.buf == "+42");

  go::Formatter w;
  w.flags.wid_present = true;
  w.flags.wid = 5;
  w.flags.minus = true;
  REQUIRE(w.FmtString("abc", 's'));
  w.buf += '|';
  REQUIRE(w.buf == "abc  |");
}

TEST_CASE("A verb the type does not take prints nothing and returns false",
          "[gofmt]") {
  go::Formatter p;
  REQUIRE_FALSE(p.FmtBool(true, 'd'));
  REQUIRE_FALSE(p.FmtInteger(1, true, 's'));
  REQUIRE_FALSE(p.FmtInteger(1, true, 'z'));
  REQUIRE_FALSE(p.FmtFloat(1.5, 'd'));
  REQUIRE_FALSE(p.FmtFloat(1.5, 'q'));
  REQUIRE_FALSE(p.FmtString("x", 'd'));
  REQUIRE_FALSE(p.FmtString("x", 'f'));
  REQUIRE(p.buf.empty());
  // The caller names the type (fmt docs; printf_027).
  REQUIRE(Sprintf("%d", {S("hi")}) == "%!d(string=hi)");
  REQUIRE(Sprintf("%.2f|%d|%s|%t", {S("str"), true, true, int64_t{1}}) ==
          "%!f(string=st)|%!d(bool=true)|%!s(bool=true)|%!t(int=1)");
  REQUIRE(Sprintf("%d", {1234567.0}) == "%!d(float64=1.234567e+06)");
}

TEST_CASE("Booleans: %t and %v", "[gofmt]") {
  // printf_009
  REQUIRE(Sprintf("%t|%v|%5t", {true, false, true}) == "true|false| true");
}

TEST_CASE("Integers: bases, sign, zero padding and precision", "[gofmt]") {
  // printf_008
  REQUIRE(Sprintf("%d|%5d|%-5d|%05d|%+d|%x|%X|%o|%b|%#x|%#o|% d",
                  {int64_t{42}, int64_t{42}, int64_t{42}, int64_t{42},
                   int64_t{42}, int64_t{255}, int64_t{255}, int64_t{8},
                   int64_t{5}, int64_t{255}, int64_t{8}, int64_t{42}}) ==
          "42|   42|42   |00042|+42|ff|FF|10|101|0xff|010| 42");
  // printf_021, printf_022
  REQUIRE(Sprintf("%x|%X", {int64_t{-255}, int64_t{-255}}) == "-ff|-FF");
  REQUIRE(Sprintf("%+v|%#b|%08d|%-08d|%+08d|%.3d|%8.3d",
                  {int64_t{1}, int64_t{5}, int64_t{-42}, int64_t{42},
                   int64_t{42}, int64_t{7}, int64_t{7}}) ==
          "1|0b101|-0000042|42      |+0000042|007|     007");
  // fmt docs: "%O base 8 with 0o prefix"; 42 = 0x2a = 0o52 = 0b101010.
  REQUIRE(Sprintf("%O", {int64_t{8}}) == "0o10");
  REQUIRE(Sprintf("%v %d %x %o %b", {int64_t{42}, int64_t{42}, int64_t{42},
                                     int64_t{42}, int64_t{42}}) ==
          "42 42 2a 52 101010");
  // An unsigned operand is never negative.
  go::Formatter p;
  REQUIRE(p.FmtInteger(UINT64_MAX, false, 'd'));
  REQUIRE(p.buf == "18446744073709551615");
}

TEST_CASE("Integers as runes: %c %q %U %#U", "[gofmt]") {
  // printf_008, printf_023, printf_024
  REQUIRE(Sprintf("%c|%q|%U|%#U", {int64_t{65}, int64_t{65}, int64_t{65},
                                   int64_t{65}}) == "A|'A'|U+0041|U+0041 'A'");
  REQUIRE(Sprintf("%c|%c|%q|%U", {int64_t{0x1F600}, int64_t{-1},
                                  int64_t{0x1F600}, int64_t{0x1F600}}) ==
          "\xf0\x9f\x98\x80|\xef\xbf\xbd|'\xf0\x9f\x98\x80'|U+1F600");
  REQUIRE(Sprintf("%3c|%-4q|%#U", {int64_t{65}, int64_t{66}, int64_t{0x41}}) ==
          "  A|'B' |U+0041 'A'");
}

TEST_CASE("Floats: %e %f %g %v and their flags", "[gofmt]") {
  // printf_030, printf_031, printf_032
  REQUIRE(Sprintf("%e|%.0e|%E|%.10e", {0.0, 5.0, 123456.789, 1.0}) ==
          "0.000000e+00|5e+00|1.234568E+05|1.0000000000e+00");
  REQUIRE(Sprintf("%g|%g|%g|%g|%g|%g",
                  {100000.0, 1000000.0, 0.0001, 0.00001, 1e21, 123456789.0}) ==
          "100000|1e+06|0.0001|1e-05|1e+21|1.23456789e+08");
  REQUIRE(Sprintf("%v|%v|%v", {1e20, 1e21, 1.0e-5}) == "1e+20|1e+21|1e-05");
  // printf_028, printf_029, printf_021
  REQUIRE(Sprintf("%6.2f|%-6.1f|%06.2f|%+06.1f|% .2f",
                  {3.14159, 2.0, -1.5, 1.25, 0.125}) ==
          "  3.14|2.0   |-01.50|+001.2| 0.12");
  REQUIRE(Sprintf("%.0f|%.0f|%.0f|%.1f|%.2f|%.3f",
                  {0.5, 1.5, 2.5, 0.05, 1.005, 2.0005}) ==
          "0|2|2|0.1|1.00|2.001");
  REQUIRE(Sprintf("%08.3f|%+.3e|%10.4g|%-8.2f|%6.2v",
                  {-3.14159, 12345.678, 0.000123456, 2.5, 3.14159}) ==
          "-003.142|+1.235e+04| 0.0001235|2.50    |   3.1");
  // fmt docs: '0' pads with leading zeros, after the sign.
  REQUIRE(Sprintf("%05.1f|%05.1f", {3.14159, -2.5}) == "003.1|-02.5");
  // values_011 ($value 1e-06 and 123.456), values_012 ('#' keeps zeros)
  REQUIRE(Sprintf("%G|%.0f|% f|%+f", {1e-06, 1e-06, 1e-06, 1e-06}) ==
          "1E-06|0| 0.000001|+0.000001");
  REQUIRE(
      Sprintf("%.3g|%.1g|%6.2g|%#g", {123.456, 123.456, 123.456, 123.456}) ==
      "123|1e+02|1.2e+02|123.456");
  REQUIRE(Sprintf("%#g|%#g", {0.0, 1.0}) == "0.00000|1.00000");
  // strconv docs: "+Inf", "-Inf", "NaN". format.go fmtFloat: infinities and
  // NaN are never zero-padded, and NaN's '+' shows only when asked for.
  REQUIRE(Sprintf("%v|%v|%v", {std::nan(""), HUGE_VAL, -HUGE_VAL}) ==
          "NaN|+Inf|-Inf");
  REQUIRE(Sprintf("%06.1f|%+f|% f", {-HUGE_VAL, std::nan(""), std::nan("")}) ==
          "  -Inf|+NaN| NaN");
  // values_013: %x of a float64
  REQUIRE(Sprintf("%x|%x|%x", {0.0, 1.0, 123.456}) ==
          "0x0p+00|0x1p+00|0x1.edd2f1a9fbe77p+06");
}

TEST_CASE("Strings: %s %q %x with width, precision and flags", "[gofmt]") {
  // printf_007
  REQUIRE(Sprintf("%5s|%-5s|%.2s|%5.1s|%q|%x|% x|%X|%#x",
                  {S("abc"), S("abc"), S("abc"), S("abc"), S("a\nb"), S("hi"),
                   S("hi"), S("hi"), S("hi")}) ==
          "  abc|abc  |ab|    a|\"a\\nb\"|6869|68 69|6869|0x6869");
  // printf_003, printf_021, printf_022
  REQUIRE(Sprintf("%-8s|%q", {S("ab"), S("c\"d")}) == "ab      |\"c\\\"d\"");
  REQUIRE(Sprintf("%-10v|%+q|%#q", {S("ab"), S("\xc3\xa9"), S("a`b")}) ==
          "ab        |\"\\u00e9\"|\"a`b\"");
  REQUIRE(Sprintf("%#v|%x", {S("s"), S("")}) == "\"s\"|");
  // fmt docs: %#q prints a raw string when it can; precision counts runes.
  REQUIRE(Sprintf("%#q", {S("abc")}) == "`abc`");
  REQUIRE(Sprintf("%.3s|", {S("h\xc3\xa9llo")}) == "h\xc3\xa9l|");
  // Width counts runes too.
  REQUIRE(Sprintf("%4s|", {S("\xc3\xa9")}) == "   \xc3\xa9|");
}

TEST_CASE("Printf: '*' widths and precisions", "[gofmt]") {
  // printf_011
  REQUIRE(Sprintf("%*d|%-*d|%.*f", {int64_t{5}, int64_t{1}, int64_t{5},
                                    int64_t{1}, int64_t{2}, 3.14159}) ==
          "    1|1    |3.14");
  // fmt docs: a non-int width or precision.
  REQUIRE(Sprintf("%*s", {4.5, S("hi")}) == "%!(BADWIDTH)hi");
  REQUIRE(Sprintf("%.*s", {4.5, S("hi")}) == "%!(BADPREC)hi");
}

TEST_CASE("Printf: explicit argument indexes", "[gofmt]") {
  // printf_012
  REQUIRE(Sprintf("%[2]d %[1]d", {int64_t{1}, int64_t{2}}) == "2 1");
  // fmt docs
  REQUIRE(Sprintf("%[2]d %[1]d\n", {int64_t{11}, int64_t{22}}) == "22 11\n");
  REQUIRE(Sprintf("%[3]*.[2]*[1]f", {12.0, int64_t{2}, int64_t{6}}) ==
          " 12.00");
  REQUIRE(Sprintf("%d %d %#[1]x %#x", {int64_t{16}, int64_t{17}}) ==
          "16 17 0x10 0x11");
  REQUIRE(Sprintf("%*[2]d", {int64_t{7}}) == "%!d(BADINDEX)");
  REQUIRE(Sprintf("%.[2]d", {int64_t{7}}) == "%!d(BADINDEX)");
}

TEST_CASE("Printf: missing, extra and verbless operands", "[gofmt]") {
  // fmt docs
  REQUIRE(Sprintf("hi", {S("guys")}) == "hi%!(EXTRA string=guys)");
  REQUIRE(Sprintf("hi%d", {}) == "hi%!d(MISSING)");
  // printf_004, printf_013
  REQUIRE(Sprintf("%s", {int64_t{1}}) == "%!s(int=1)");
  REQUIRE(Sprintf("%d %d", {int64_t{1}}) == "1 %!d(MISSING)");
  REQUIRE(Sprintf("%d", {int64_t{1}, int64_t{2}}) == "1%!(EXTRA int=2)");
  REQUIRE(Sprintf("%!", {}) == "%!!(MISSING)");
  REQUIRE(Sprintf("%", {}) == "%!(NOVERB)");
  REQUIRE(Sprintf("%z", {int64_t{1}}) == "%!z(int=1)");
  REQUIRE(Sprintf("100%%", {}) == "100%");
  // printf_024: "%%" takes no operand.
  REQUIRE(Sprintf("%5.1f%%", {99.56}) == " 99.6%");
}

}  // namespace
}  // namespace vigil
