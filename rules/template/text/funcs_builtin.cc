// Go text/template's builtin functions (text/template/funcs.go semantics).
#include <algorithm>
#include <map>

#include "absl/status/status.h"
#include "core/go/strconv.h"
#include "core/go/utf8.h"
#include "fmt/format.h"
#include "rules/template/text/fmt_print.h"
#include "rules/template/text/funcs.h"
#include "rules/template/text/unicode.h"

namespace vigil::rules::tmpl {

namespace {

using absl::InvalidArgumentError;
using P = ParamType;

enum class BasicKind { kInvalid, kBool, kInt, kFloat, kString, kUint };

BasicKind Basic(const Value& v) {
  switch (v.kind) {
    case Kind::kBool:
      return BasicKind::kBool;
    case Kind::kInt:
      return BasicKind::kInt;
    case Kind::kUint:
      return BasicKind::kUint;
    case Kind::kFloat:
      return BasicKind::kFloat;
    case Kind::kString:
      return BasicKind::kString;
    default:
      return BasicKind::kInvalid;
  }
}

bool IsPointerKind(const Value& v) {
  return v.kind == Kind::kSample ||
         ((v.kind == Kind::kTime || v.kind == Kind::kDuration) && !v.not_ptr);
}

// Equality of two non-basic values with the same basic kind (Go's default
// branch of eq): pointers compare by identity, maps/slices/structs cannot.
absl::StatusOr<bool> EqOther(const Value& a, const Value& b) {
  bool same_kind = a.kind == b.kind || (IsPointerKind(a) && IsPointerKind(b));
  if (!same_kind && a.valid() && b.valid()) {
    return InvalidArgumentError(
        fmt::format("non-comparable types {}: {}, {}: {}", GoSprintf("%s", {a}),
                    TypeName(a), TypeName(b), GoSprintf("%v", {b})));
  }
  bool a_nil = !a.valid() || a.nil_ptr;
  bool b_nil = !b.valid() || b.nil_ptr;
  if (a_nil || b_nil) return a_nil == b_nil;
  if (!IsPointerKind(b)) {
    return InvalidArgumentError(fmt::format("non-comparable type {}: {}",
                                            GoSprintf("%s", {b}), TypeName(b)));
  }
  if (a.kind != b.kind) return false;
  if (a.kind == Kind::kSample) return a.sample == b.sample;
  return a.i == b.i &&
         a.nsec == b.nsec;  // time values are never shared; compare by value
}

absl::StatusOr<bool> Eq(const Value& a, const Value& b) {
  BasicKind k1 = Basic(a), k2 = Basic(b);
  if (k1 != k2) {
    if (k1 == BasicKind::kInt && k2 == BasicKind::kUint)
      return a.i >= 0 && static_cast<uint64_t>(a.i) == b.u;
    if (k1 == BasicKind::kUint && k2 == BasicKind::kInt)
      return b.i >= 0 && a.u == static_cast<uint64_t>(b.i);
    if (a.valid() && b.valid())
      return InvalidArgumentError("incompatible types for comparison");
    return false;
  }
  switch (k1) {
    case BasicKind::kBool:
      return a.b == b.b;
    case BasicKind::kFloat:
      return a.f == b.f;
    case BasicKind::kInt:
      return a.i == b.i;
    case BasicKind::kString:
      return a.s == b.s;
    case BasicKind::kUint:
      return a.u == b.u;
    case BasicKind::kInvalid:
      return EqOther(a, b);
  }
  return false;
}

absl::StatusOr<Value> EqFunc(const FuncEnv&, std::vector<Value>& args) {
  if (args.size() < 2)
    return InvalidArgumentError("missing argument for comparison");
  for (size_t i = 1; i < args.size(); ++i) {
    absl::StatusOr<bool> r = Eq(args[0], args[i]);
    if (!r.ok()) return r.status();
    if (*r) return Value::Bool(true);
  }
  return Value::Bool(false);
}

absl::StatusOr<bool> Lt(const Value& a, const Value& b) {
  BasicKind k1 = Basic(a), k2 = Basic(b);
  if (k1 == BasicKind::kInvalid || k2 == BasicKind::kInvalid) {
    return InvalidArgumentError("invalid type for comparison");
  }
  if (k1 != k2) {
    if (k1 == BasicKind::kInt && k2 == BasicKind::kUint)
      return a.i < 0 || static_cast<uint64_t>(a.i) < b.u;
    if (k1 == BasicKind::kUint && k2 == BasicKind::kInt)
      return b.i >= 0 && a.u < static_cast<uint64_t>(b.i);
    return InvalidArgumentError("incompatible types for comparison");
  }
  switch (k1) {
    case BasicKind::kFloat:
      return a.f < b.f;
    case BasicKind::kInt:
      return a.i < b.i;
    case BasicKind::kString:
      return a.s < b.s;
    case BasicKind::kUint:
      return a.u < b.u;
    default:
      return InvalidArgumentError("invalid type for comparison");
  }
}

absl::StatusOr<bool> Le(const Value& a, const Value& b) {
  absl::StatusOr<bool> lt = Lt(a, b);
  if (!lt.ok() || *lt) return lt;
  return Eq(a, b);
}

FuncImpl Compare(int op) {  // 0 ne, 1 lt, 2 le, 3 gt, 4 ge
  return [op](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
    absl::StatusOr<bool> r;
    switch (op) {
      case 0:
        r = Eq(a[0], a[1]);
        if (r.ok()) r = !*r;
        break;
      case 1:
        r = Lt(a[0], a[1]);
        break;
      case 2:
        r = Le(a[0], a[1]);
        break;
      case 3:
        r = Le(a[0], a[1]);
        if (r.ok()) r = !*r;
        break;
      default:
        r = Lt(a[0], a[1]);
        if (r.ok()) r = !*r;
        break;
    }
    if (!r.ok()) return r.status();
    return Value::Bool(*r);
  };
}

absl::StatusOr<int64_t> IndexArg(const Value& index, size_t cap) {
  int64_t x;
  if (index.kind == Kind::kInt) {
    x = index.i;
  } else if (index.kind == Kind::kUint) {
    x = static_cast<int64_t>(index.u);
  } else if (!index.valid()) {
    return InvalidArgumentError("cannot index slice/array with nil");
  } else {
    return InvalidArgumentError("cannot index slice/array with type " +
                                TypeName(index));
  }
  if (x < 0 || static_cast<uint64_t>(x) > cap) {
    return InvalidArgumentError(fmt::format("index out of range: {}", x));
  }
  return x;
}

absl::StatusOr<Value> IndexFunc(const FuncEnv&, std::vector<Value>& a) {
  Value item = a[0];
  if (!item.valid()) return InvalidArgumentError("index of untyped nil");
  for (size_t k = 1; k < a.size(); ++k) {
    const Value& index = a[k];
    if (item.kind == Kind::kSample || item.kind == Kind::kTime ||
        item.kind == Kind::kDuration) {
      if (item.nil_ptr) return InvalidArgumentError("index of nil pointer");
    }
    if (item.kind == Kind::kString || item.kind == Kind::kSlice ||
        item.kind == Kind::kList) {
      size_t len = Len(item);
      absl::StatusOr<int64_t> x = IndexArg(index, len);
      if (!x.ok()) return x.status();
      if (static_cast<size_t>(*x) == len) {
        return InvalidArgumentError(item.kind == Kind::kString
                                        ? "reflect: string index out of range"
                                        : "reflect: slice index out of range");
      }
      if (item.kind == Kind::kList) {
        item = Value(item.list->elems[static_cast<size_t>(*x)]);
        continue;
      }
      item = item.kind == Kind::kString
                 ? Value::Uint8(
                       static_cast<uint8_t>(item.s[static_cast<size_t>(*x)]))
                 : Value::Sample((*item.slice)[static_cast<size_t>(*x)]);
    } else if (item.kind == Kind::kMap) {
      if (!index.valid())
        return InvalidArgumentError("value is nil; should be of type string");
      if (index.kind != Kind::kString || index.html) {
        return InvalidArgumentError(fmt::format(
            "value has type {}; should be string", TypeName(index)));
      }
      const Value* v = item.map ? item.map->Find(index.s) : nullptr;
      bool strings = item.map == nullptr || item.map->string_elems;
      item = v != nullptr ? *v : (strings ? Value::String("") : Value());
    } else {
      std::string typ = TypeName(item);
      if (item.kind == Kind::kSample ||
          ((item.kind == Kind::kTime || item.kind == Kind::kDuration) &&
           !item.not_ptr)) {
        typ = typ.substr(1);  // indirect() followed the pointer
      }
      return InvalidArgumentError("can't index item of type " + typ);
    }
  }
  return item;
}

absl::StatusOr<Value> SliceFunc(const FuncEnv&, std::vector<Value>& a) {
  const Value& item = a[0];
  if (!item.valid()) return InvalidArgumentError("slice of untyped nil");
  size_t nidx = a.size() - 1;
  if (nidx > 3)
    return InvalidArgumentError(
        fmt::format("too many slice indexes: {}", nidx));
  if (item.kind == Kind::kString) {
    if (nidx == 3) return InvalidArgumentError("cannot 3-index slice a string");
  } else if (item.kind != Kind::kSlice && item.kind != Kind::kList) {
    return InvalidArgumentError("can't slice item of type " + TypeName(item));
  }
  size_t cap = Len(item);
  size_t idx[3] = {0, cap, cap};
  for (size_t i = 0; i < nidx; ++i) {
    absl::StatusOr<int64_t> x = IndexArg(a[i + 1], cap);
    if (!x.ok()) return x.status();
    idx[i] = static_cast<size_t>(*x);
  }
  if (idx[0] > idx[1]) {
    return InvalidArgumentError(
        fmt::format("invalid slice index: {} > {}", idx[0], idx[1]));
  }
  if (nidx == 3 && idx[1] > idx[2]) {
    return InvalidArgumentError(
        fmt::format("invalid slice index: {} > {}", idx[1], idx[2]));
  }
  if (item.kind == Kind::kString) {
    Value r = item;
    r.s = item.s.substr(idx[0], idx[1] - idx[0]);
    return r;
  }
  if (item.kind == Kind::kList) {
    auto l = std::make_shared<ListData>(*item.list);
    l->elems.assign(item.list->elems.begin() + idx[0],
                    item.list->elems.begin() + idx[1]);
    return Value::List(std::move(l));
  }
  auto list = std::make_shared<SampleList>();
  if (item.slice)
    list->assign(item.slice->begin() + idx[0], item.slice->begin() + idx[1]);
  return Value::Slice(std::move(list));
}

absl::StatusOr<Value> LenFunc(const FuncEnv&, std::vector<Value>& a) {
  const Value& item = a[0];
  if (!item.valid())
    return InvalidArgumentError(
        "reflect: call of reflect.Value.Type on zero Value");
  if (item.nil_ptr && (item.kind == Kind::kSample || item.kind == Kind::kTime ||
                       item.kind == Kind::kDuration)) {
    return InvalidArgumentError("len of nil pointer");
  }
  if (HasLen(item)) return Value::Int(static_cast<int64_t>(Len(item)));
  std::string typ = TypeName(item);
  if (item.kind == Kind::kSample) typ = typ.substr(1);
  return InvalidArgumentError("len of type " + typ);
}

// text/template's evalArgs: fmt.Sprint with each argument made printable.
std::string EvalArgs(const std::vector<Value>& args) {
  if (args.size() == 1 && args[0].kind == Kind::kString) return args[0].s;
  std::string out;
  bool prev_string = false;
  for (size_t i = 0; i < args.size(); ++i) {
    bool is_string = args[i].kind == Kind::kString || !args[i].valid();
    if (i > 0 && !is_string && !prev_string) out += ' ';
    out += TemplatePrint(args[i]);
    prev_string = is_string;
  }
  return out;
}

std::string HtmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '\0':
        out += "\xef\xbf\xbd";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string JsEscape(std::string_view s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    if (c < 0x80) {
      switch (c) {
        case '\\':
          out += "\\\\";
          break;
        case '\'':
          out += "\\'";
          break;
        case '"':
          out += "\\\"";
          break;
        case '<':
          out += "\\u003C";
          break;
        case '>':
          out += "\\u003E";
          break;
        case '&':
          out += "\\u0026";
          break;
        case '=':
          out += "\\u003D";
          break;
        default:
          if (c < ' ') {
            out += "\\u00";
            out += kHex[c >> 4];
            out += kHex[c & 15];
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    uint32_t r;
    size_t n = go::DecodeRune(s, i, &r);
    if (go::IsPrint(r)) {
      out.append(s.substr(i, n));
    } else {
      out += fmt::format("\\u{:04X}", r);
    }
    i += n;
  }
  return out;
}

FuncDef Def(std::vector<P> params, bool variadic, FuncImpl impl) {
  return FuncDef{std::move(params), variadic, std::move(impl)};
}

}  // namespace

void AddBuiltinFuncs(std::vector<std::pair<std::string, FuncDef>>* out) {
  auto unreachable = [](const FuncEnv&,
                        std::vector<Value>&) -> absl::StatusOr<Value> {
    return absl::InternalError("unreachable");
  };
  out->emplace_back("and", Def({P::kReflect, P::kReflect}, true, unreachable));
  out->emplace_back("or", Def({P::kReflect, P::kReflect}, true, unreachable));
  out->emplace_back(
      "call",
      Def({P::kReflect, P::kReflect}, true,
          [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
            if (!a[0].valid()) return InvalidArgumentError("call of nil");
            return InvalidArgumentError(
                fmt::format("non-function of type {}", TypeName(a[0])));
          }));
  out->emplace_back(
      "not",
      Def({P::kReflect}, false,
          [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
            return Value::Bool(!IsTrue(a[0]));
          }));
  out->emplace_back("len", Def({P::kReflect}, false, LenFunc));
  out->emplace_back("index", Def({P::kReflect, P::kReflect}, true, IndexFunc));
  out->emplace_back("slice", Def({P::kReflect, P::kReflect}, true, SliceFunc));
  out->emplace_back(
      "print",
      Def({P::kAny}, true,
          [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
            return Value::String(GoSprint(a));
          }));
  out->emplace_back(
      "println",
      Def({P::kAny}, true,
          [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
            return Value::String(GoSprintln(a));
          }));
  out->emplace_back(
      "printf",
      Def({P::kString, P::kAny}, true,
          [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
            std::vector<Value> rest(a.begin() + 1, a.end());
            return Value::String(GoSprintf(a[0].s, rest));
          }));
  out->emplace_back(
      "html",
      Def({P::kAny}, true,
          [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
            return Value::String(HtmlEscape(EvalArgs(a)));
          }));
  out->emplace_back(
      "js",
      Def({P::kAny}, true,
          [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
            return Value::String(JsEscape(EvalArgs(a)));
          }));
  out->emplace_back(
      "urlquery",
      Def({P::kAny}, true,
          [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
            return Value::String(UrlQueryEscape(EvalArgs(a)));
          }));
  out->emplace_back("eq", Def({P::kReflect, P::kReflect}, true, EqFunc));
  out->emplace_back("ne", Def({P::kReflect, P::kReflect}, false, Compare(0)));
  out->emplace_back("lt", Def({P::kReflect, P::kReflect}, false, Compare(1)));
  out->emplace_back("le", Def({P::kReflect, P::kReflect}, false, Compare(2)));
  out->emplace_back("gt", Def({P::kReflect, P::kReflect}, false, Compare(3)));
  out->emplace_back("ge", Def({P::kReflect, P::kReflect}, false, Compare(4)));
}

}  // namespace vigil::rules::tmpl
