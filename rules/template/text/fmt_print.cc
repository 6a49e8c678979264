#include "rules/template/text/fmt_print.h"

#include "core/go/time.h"
#include "core/go/utf8.h"
#include "rules/template/text/fmt_printer.h"
#include "rules/template/time_zone.h"

namespace vigil::rules::tmpl {

namespace gofmt {

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
  if (flags.plus_v) buf += "Labels:";
  if (s.labels) {
    FmtMap(*s.labels, verb, depth + 1);
  } else {
    buf += "map[]";
  }
  buf += ' ';
  if (flags.plus_v) buf += "Value:";
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
  if (flags.plus_v) buf += "Labels:";
  PrintValue(Value::Map(a.labels), verb, depth + 1);
  buf += flags.plus_v ? " ExternalLabels:" : " ";
  PrintValue(Value::Map(a.external_labels), verb, depth + 1);
  buf += flags.plus_v ? " ExternalURL:" : " ";
  PrintValue(Value::String(a.external_url), verb, depth + 1);
  buf += flags.plus_v ? " Value:" : " ";
  PrintValue(Value::Float(a.value), verb, depth + 1);
  buf += '}';
}

void Printer::FmtRecord(const RecordData& r, int verb, int depth) {
  buf += '{';
  for (size_t i = 0; i < r.fields.size(); ++i) {
    if (i > 0) buf += ' ';
    if (flags.plus_v) {
      buf += r.fields[i].first;
      buf += ':';
    }
    const Value& e = r.fields[i].second;
    if (!e.valid()) {
      buf += "<nil>";
    } else {
      PrintValue(e, verb, depth + 1);
    }
  }
  buf += '}';
}

void Printer::FmtList(const ListData& l, int verb, int depth) {
  buf += '[';
  for (size_t i = 0; i < l.elems.size(); ++i) {
    if (i > 0) buf += ' ';
    PrintValue(l.elems[i], verb, depth + 1);
  }
  buf += ']';
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
  if (verb == 'T') {
    (void)FmtString(TypeName(v), 's');  // 's' takes any string
    return;
  }
  switch (v.kind) {
    case Kind::kBool:
      if (!FmtBool(v.b, verb)) BadVerb(v, verb);
      return;
    case Kind::kInt:
      if (!FmtInteger(static_cast<uint64_t>(v.i), true, verb)) BadVerb(v, verb);
      return;
    case Kind::kUint:
      if (!FmtInteger(v.u, false, verb)) BadVerb(v, verb);
      return;
    case Kind::kFloat:
      if (!FmtFloat(v.f, verb)) BadVerb(v, verb);
      return;
    case Kind::kString:
      if (!FmtString(v.s, verb)) BadVerb(v, verb);
      return;
    case Kind::kTime:
    case Kind::kDuration:
      if (verb == 'v' || verb == 's' || verb == 'x' || verb == 'X' ||
          verb == 'q') {
        // Strings take all five verbs.
        (void)FmtString(v.nil_ptr               ? "<nil>"
                        : v.kind == Kind::kTime ? TimeValueString(v)
                                                : go::DurationString(v.i),
                        verb);
        return;
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
    case Kind::kRecord:
      if (v.nil_ptr || !v.record) {
        Pad("<nil>");
        return;
      }
      if (v.record->pointer && depth == 0) buf += '&';
      return FmtRecord(*v.record, verb, depth);
    case Kind::kList:
      if (!v.list) {
        buf += "[]";
        return;
      }
      return FmtList(*v.list, verb, depth);
    case Kind::kInvalid:
      return;
  }
}

bool IsStringKind(const Value& v) { return v.kind == Kind::kString; }

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
  if (v.kind == Kind::kRecord && !v.nil_ptr && v.record) {
    p.FmtRecord(*v.record, 'v', 0);  // likewise
    return std::move(p.buf);
  }
  p.PrintArg(v, 'v');
  return std::move(p.buf);
}

}  // namespace vigil::rules::tmpl
