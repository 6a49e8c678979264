#include "rules/template/text/fmt_print.h"

#include <cmath>
#include <cstdio>

#include "core/go/strconv.h"
#include "core/go/time.h"
#include "core/go/utf8.h"
#include "fmt/format.h"
#include "rules/template/humanize.h"
#include "rules/template/text/fmt_printer.h"
#include "rules/template/text/unicode.h"

namespace vigil::rules::tmpl {

namespace gofmt {

void Printer::Pad(std::string_view s) {
  if (!f.wid_present || f.wid == 0) {
    buf.append(s);
    return;
  }
  int width = f.wid - static_cast<int>(go::RuneCount(s));
  if (!f.minus) {
    WritePadding(width);
    buf.append(s);
  } else {
    buf.append(s);
    WritePadding(width);
  }
}

void Printer::BadVerb(const Value& v, int verb) {
  buf += "%!";
  go::AppendRune(&buf, static_cast<uint32_t>(verb));
  buf += '(';
  if (v.valid()) {
    buf += TypeName(v);
    buf += '=';
    PrintValue(v, 'v', 0);
  } else {
    buf += "<nil>";
  }
  buf += ')';
}

void Printer::FmtBool(bool b, int verb, const Value& v) {
  if (verb == 't' || verb == 'v') {
    Pad(b ? "true" : "false");
  } else {
    BadVerb(v, verb);
  }
}

void Printer::FmtIntegerBase(uint64_t u, int base, bool is_signed, int verb,
                             bool upper) {
  bool negative = is_signed && static_cast<int64_t>(u) < 0;
  if (negative) u = 0 - u;
  int prec = 0;
  if (f.prec_present) {
    prec = f.prec;
    if (prec == 0 && u == 0) {
      bool old = f.zero;
      f.zero = false;
      WritePadding(f.wid);
      f.zero = old;
      return;
    }
  } else if (f.zero && !f.minus && f.wid_present) {
    prec = f.wid;
    if (negative || f.plus || f.space) --prec;
  }
  const char* digits = upper ? "0123456789ABCDEFX" : "0123456789abcdefx";
  std::string rev;
  do {
    rev.push_back(digits[u % static_cast<uint64_t>(base)]);
    u /= static_cast<uint64_t>(base);
  } while (u != 0);
  while (static_cast<int>(rev.size()) < prec) rev.push_back('0');
  if (f.sharp) {
    if (base == 2) {
      rev += "b0";
    } else if (base == 8 && rev.back() != '0') {
      rev.push_back('0');
    } else if (base == 16) {
      rev.push_back(digits[16]);
      rev.push_back('0');
    }
  }
  if (verb == 'O') rev += "o0";
  if (negative) {
    rev.push_back('-');
  } else if (f.plus) {
    rev.push_back('+');
  } else if (f.space) {
    rev.push_back(' ');
  }
  std::string s(rev.rbegin(), rev.rend());
  bool old = f.zero;
  f.zero = false;
  Pad(s);
  f.zero = old;
}

void Printer::FmtInteger(uint64_t u, bool is_signed, int verb, const Value& v) {
  switch (verb) {
    case 'v':
    case 'd':
      FmtIntegerBase(u, 10, is_signed, verb, false);
      return;
    case 'b':
      FmtIntegerBase(u, 2, is_signed, verb, false);
      return;
    case 'o':
    case 'O':
      FmtIntegerBase(u, 8, is_signed, verb, false);
      return;
    case 'x':
      FmtIntegerBase(u, 16, is_signed, verb, false);
      return;
    case 'X':
      FmtIntegerBase(u, 16, is_signed, verb, true);
      return;
    case 'c': {
      std::string s;
      go::AppendRune(&s, u > 0x10ffff ? 0xfffd : static_cast<uint32_t>(u));
      Pad(s);
      return;
    }
    case 'q': {
      std::string s;
      go::AppendRune(&s, u > 0x10ffff ? 0xfffd : static_cast<uint32_t>(u));
      std::string q = go::Quote(s);
      if (s == "'") q = "\"\\'\"";
      Pad("'" + q.substr(1, q.size() - 2) + "'");
      return;
    }
    case 'U': {
      std::string s = fmt::format("U+{:04X}", u);
      if (f.sharp && u <= 0x10ffff && go::IsPrint(static_cast<uint32_t>(u))) {
        s += " '";
        go::AppendRune(&s, static_cast<uint32_t>(u));
        s += "'";
      }
      Pad(s);
      return;
    }
    default:
      BadVerb(v, verb);
  }
}

void Printer::FmtSx(std::string_view s, bool upper) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  size_t length = s.size();
  if (f.prec_present && static_cast<size_t>(f.prec) < length) length = f.prec;
  std::string out;
  for (size_t i = 0; i < length; ++i) {
    if (f.space && i > 0) out.push_back(' ');
    if (f.sharp && (f.space || i == 0)) out += upper ? "0X" : "0x";
    unsigned char c = s[i];
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  Pad(out);
}

// strconv.QuoteToASCII: like go::Quote, with every non-ASCII rune escaped.
std::string QuoteToAscii(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    uint32_t r;
    size_t n = go::DecodeRune(s, i, &r);
    bool invalid = r == 0xfffd && n == 1;
    if (r < 0x80 && !invalid) {
      std::string q = go::Quote(s.substr(i, n));
      out += q.substr(1, q.size() - 2);
    } else if (invalid) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i]));
    } else if (r < 0x10000) {
      out += fmt::format("\\u{:04x}", r);
    } else {
      out += fmt::format("\\U{:08x}", r);
    }
    i += n;
  }
  return "\"" + out + "\"";
}

void Printer::FmtString(std::string_view s, int verb, const Value& v) {
  if (f.prec_present) s = TruncateRunes(s, static_cast<size_t>(f.prec));
  switch (verb) {
    case 'v':
      if (f.sharp_v) {
        Pad(go::Quote(s));
      } else {
        Pad(s);
      }
      return;
    case 's':
      Pad(s);
      return;
    case 'x':
      FmtSx(s, false);
      return;
    case 'X':
      FmtSx(s, true);
      return;
    case 'q':
      if (f.sharp && s.find('`') == std::string_view::npos &&
          s.find_first_of("\n\r") == std::string_view::npos) {
        Pad("`" + std::string(s) + "`");
      } else {
        Pad(f.plus ? QuoteToAscii(s) : go::Quote(s));
      }
      return;
    default:
      BadVerb(v, verb);
  }
}

void Printer::FmtMap(const MapData& m, int verb, int depth) {
  buf += "map[";
  for (size_t i = 0; i < m.entries.size(); ++i) {
    if (i > 0) buf += ' ';
    PrintValue(Value::String(m.entries[i].first), verb, depth + 1);
    buf += ':';
    const Value& e = m.entries[i].second;
    if (!e.valid()) {
      buf += "<nil>";
    } else {
      PrintValue(e, verb, depth + 1);
    }
  }
  buf += ']';
}

void Printer::FmtSample(const SampleData& s, int verb, int depth) {
  buf += '{';
  if (f.plus_v) buf += "Labels:";
  if (s.labels) {
    FmtMap(*s.labels, verb, depth + 1);
  } else {
    buf += "map[]";
  }
  buf += ' ';
  if (f.plus_v) buf += "Value:";
  PrintValue(Value::Float(s.value), verb, depth + 1);
  buf += '}';
}

void Printer::FmtSlice(const Value& v, int verb, int depth) {
  buf += '[';
  if (v.slice) {
    for (size_t i = 0; i < v.slice->size(); ++i) {
      if (i > 0) buf += ' ';
      buf += '&';  // Go prints the element pointers' addresses here
      FmtSample(*(*v.slice)[i], verb, depth + 1);
    }
  }
  buf += ']';
}

void Printer::FmtAlertData(const AlertData& a, int verb, int depth) {
  buf += '{';
  if (f.plus_v) buf += "Labels:";
  PrintValue(Value::Map(a.labels), verb, depth + 1);
  buf += f.plus_v ? " ExternalLabels:" : " ";
  PrintValue(Value::Map(a.external_labels), verb, depth + 1);
  buf += f.plus_v ? " ExternalURL:" : " ";
  PrintValue(Value::String(a.external_url), verb, depth + 1);
  buf += f.plus_v ? " Value:" : " ";
  PrintValue(Value::Float(a.value), verb, depth + 1);
  buf += '}';
}

void Printer::PrintValue(const Value& v, int verb, int depth) {
  if (!v.valid()) {
    if (verb == 'T' || verb == 'v') {
      Pad("<nil>");
    } else {
      BadVerb(v, verb);
    }
    return;
  }
  if (verb == 'T') return FmtString(TypeName(v), 's', v);
  switch (v.kind) {
    case Kind::kBool:
      return FmtBool(v.b, verb, v);
    case Kind::kInt:
      return FmtInteger(static_cast<uint64_t>(v.i), true, verb, v);
    case Kind::kUint:
      return FmtInteger(v.u, false, verb, v);
    case Kind::kFloat:
      return FmtFloat(v.f, verb, v);
    case Kind::kString:
      return FmtString(v.s, verb, v);
    case Kind::kTime:
    case Kind::kDuration:
      if (verb == 'v' || verb == 's' || verb == 'x' || verb == 'X' ||
          verb == 'q') {
        if (v.nil_ptr) return FmtString("<nil>", verb, v);
        return FmtString(v.kind == Kind::kTime ? go::TimeString(v.i, v.nsec)
                                               : go::DurationString(v.i),
                         verb, v);
      }
      return BadVerb(v, verb);
    case Kind::kMap:
      if (v.nil_ptr || !v.map) {
        buf += "map[]";
        return;
      }
      return FmtMap(*v.map, verb, depth);
    case Kind::kSample:
      if (v.nil_ptr || !v.sample) {
        Pad("<nil>");
        return;
      }
      buf += '&';
      return FmtSample(*v.sample, verb, depth);
    case Kind::kSlice:
      return FmtSlice(v, verb, depth);
    case Kind::kAlertData:
      return FmtAlertData(*v.alert, verb, depth);
    case Kind::kInvalid:
      return;
  }
}

bool IsStringKind(const Value& v) { return v.kind == Kind::kString; }

bool TooLarge(int x) { return x > 1000000 || x < -1000000; }

// Parses decimal digits in s[start:end].
int ParseNum(std::string_view s, size_t start, size_t end, bool* isnum,
             size_t* newi) {
  int num = 0;
  *isnum = false;
  size_t i = start;
  for (; i < end && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (TooLarge(num)) {
      *isnum = false;
      *newi = end;
      return 0;
    }
    num = num * 10 + (s[i] - '0');
    *isnum = true;
  }
  *newi = i;
  return num;
}

}  // namespace gofmt

using gofmt::IsStringKind;
using gofmt::Printer;

std::string GoSprint(const std::vector<Value>& args) {
  Printer p;
  bool prev_string = false;
  for (size_t i = 0; i < args.size(); ++i) {
    bool is_string = IsStringKind(args[i]);
    if (i > 0 && !is_string && !prev_string) p.buf += ' ';
    p.PrintArg(args[i], 'v');
    prev_string = is_string;
  }
  return std::move(p.buf);
}

std::string GoSprintln(const std::vector<Value>& args) {
  Printer p;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) p.buf += ' ';
    p.PrintArg(args[i], 'v');
  }
  p.buf += '\n';
  return std::move(p.buf);
}

std::string TemplatePrint(const Value& v) {
  if (!v.valid()) return "<no value>";
  Printer p;
  if (v.kind == Kind::kSample && !v.nil_ptr && v.sample) {
    p.FmtSample(*v.sample, 'v', 0);  // the pointer is followed once
    return std::move(p.buf);
  }
  p.PrintArg(v, 'v');
  return std::move(p.buf);
}

}  // namespace vigil::rules::tmpl
