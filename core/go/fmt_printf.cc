// fmt.Sprintf's format-string interpreter (fmt/print.go doPrintf), with
// the operands behind PrintfOperands. Moved here unchanged from
// rules/template/text/fmt_printf.cc (issue 8).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "core/go/fmt.h"
#include "core/go/utf8.h"

namespace vigil::go {

namespace {

bool TooLarge(int x) { return x > 1000000 || x < -1000000; }

// fmt's parsenum: decimal digits in s[start:end]; *isnum false if none or
// absurdly large. *newi is where parsing stopped.
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

struct ArgState {
  size_t arg_num = 0;
  bool reordered = false;
  bool good_arg_num = true;
};

// "[n]" at format[i]: returns the new index and whether one was found.
size_t ArgNumber(std::string_view format, size_t i, size_t num_args,
                 ArgState* st, bool* found) {
  *found = false;
  if (i >= format.size() || format[i] != '[') return i;
  st->reordered = true;
  std::string_view rest = format.substr(i);
  if (rest.size() < 3) {
    st->good_arg_num = false;
    return i + 1;
  }
  for (size_t k = 1; k < rest.size(); ++k) {
    if (rest[k] != ']') continue;
    bool ok;
    size_t newi;
    int width = ParseNum(rest, 1, k, &ok, &newi);
    if (!ok || newi != k) {
      st->good_arg_num = false;
      return i + k + 1;
    }
    int index = width - 1;
    *found = true;
    if (index >= 0 && static_cast<size_t>(index) < num_args) {
      st->arg_num = static_cast<size_t>(index);
    } else {
      st->good_arg_num = false;
    }
    return i + k + 1;
  }
  st->good_arg_num = false;
  return i + 1;
}

bool IntFromArg(PrintfOperands* a, ArgState* st, int* num) {
  bool is_int = false;
  *num = 0;
  if (st->arg_num < a->size()) {
    is_int = a->AsInt(st->arg_num, num);
    if (!is_int) *num = 0;
    ++st->arg_num;
    if (TooLarge(*num)) {
      *num = 0;
      is_int = false;
    }
  }
  return is_int;
}

// Flags "#0+- " at format[i]; returns the index after them.
size_t ParseFlags(std::string_view format, size_t i, FmtFlags* f) {
  for (; i < format.size(); ++i) {
    switch (format[i]) {
      case '#':
        f->sharp = true;
        break;
      case '0':
        f->zero = !f->minus;
        break;  // only pad with zeros on the left
      case '+':
        f->plus = true;
        break;
      case '-':
        f->minus = true;
        f->zero = false;
        break;
      case ' ':
        f->space = true;
        break;
      default:
        return i;
    }
  }
  return i;
}

// Width and precision (digits, "*" or "[n]*") after the flags. Returns the
// index of the verb; *after_index tells whether an "[n]" was just consumed.
size_t ParseWidthPrec(std::string_view format, size_t i, PrintfOperands* a,
                      ArgState* st, Formatter* p, bool* after_index) {
  size_t end = format.size();
  FmtFlags& f = p->flags;
  i = ArgNumber(format, i, a->size(), st, after_index);
  if (i < end && format[i] == '*') {
    ++i;
    f.wid_present = IntFromArg(a, st, &f.wid);
    if (!f.wid_present) p->buf += "%!(BADWIDTH)";
    if (f.wid < 0) {
      f.wid = -f.wid;
      f.minus = true;
      f.zero = false;
    }
    *after_index = false;
  } else {
    f.wid = ParseNum(format, i, end, &f.wid_present, &i);
    if (*after_index && f.wid_present) st->good_arg_num = false;
  }
  if (i + 1 < end && format[i] == '.') {
    ++i;
    if (*after_index) st->good_arg_num = false;
    i = ArgNumber(format, i, a->size(), st, after_index);
    if (i < end && format[i] == '*') {
      ++i;
      f.prec_present = IntFromArg(a, st, &f.prec);
      if (f.prec < 0) {
        f.prec = 0;
        f.prec_present = false;
      }
      if (!f.prec_present) p->buf += "%!(BADPREC)";
      *after_index = false;
    } else {
      f.prec = ParseNum(format, i, end, &f.prec_present, &i);
      if (!f.prec_present) {
        f.prec = 0;
        f.prec_present = true;
      }
    }
  }
  if (!*after_index) i = ArgNumber(format, i, a->size(), st, after_index);
  return i;
}

void PrintVerb(uint32_t verb, PrintfOperands* a, ArgState* st, Formatter* p) {
  if (verb == '%') {
    p->buf += '%';  // absorbs no operand, ignores width and precision
  } else if (!st->good_arg_num || st->arg_num >= a->size()) {
    p->buf += "%!";
    AppendRune(&p->buf, verb);
    p->buf += st->good_arg_num ? "(MISSING)" : "(BADINDEX)";
  } else {
    if (verb == 'v') {
      p->flags.sharp_v = std::exchange(p->flags.sharp, false);
      p->flags.plus_v = std::exchange(p->flags.plus, false);
    }
    a->Print(st->arg_num, static_cast<int>(verb));
    ++st->arg_num;
  }
}

// "%!(EXTRA type=value, ...)" for operands no verb used.
void PrintExtra(PrintfOperands* a, const ArgState& st, Formatter* p) {
  if (st.reordered || st.arg_num >= a->size()) return;
  p->flags = FmtFlags();
  p->buf += "%!(EXTRA ";
  for (size_t k = st.arg_num; k < a->size(); ++k) {
    if (k > st.arg_num) p->buf += ", ";
    a->PrintExtra(k);
  }
  p->buf += ')';
}

}  // namespace

void DoPrintf(std::string_view format, PrintfOperands* a, Formatter* out) {
  Formatter& p = *out;
  ArgState st;
  size_t end = format.size();
  for (size_t i = 0; i < end;) {
    st.good_arg_num = true;
    size_t lasti = i;
    while (i < end && format[i] != '%') ++i;
    if (i > lasti) p.buf.append(format.substr(lasti, i - lasti));
    if (i >= end) break;
    p.flags = FmtFlags();
    i = ParseFlags(format, i + 1, &p.flags);
    bool after_index;
    i = ParseWidthPrec(format, i, a, &st, &p, &after_index);
    if (i >= end) {
      p.buf += "%!(NOVERB)";
      break;
    }
    uint32_t verb;
    i += DecodeRune(format, i, &verb);
    PrintVerb(verb, a, &st, &p);
  }
  PrintExtra(a, st, &p);
}

}  // namespace vigil::go
