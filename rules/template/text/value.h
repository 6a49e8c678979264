// -----------------------------------------------------------------------------
// File: text/value.h
// -----------------------------------------------------------------------------
//
// The dynamic values a template manipulates. Go's text/template works on
// reflect.Value; the templates Prometheus runs only ever see a handful of Go
// types, so `Value` models exactly those, and keeps their Go type names for
// error messages ("wrong type for value; expected string; got float64").
// Callers outside rules build their own data trees from records (structs
// with fields and methods), lists (slices) and named maps (Alertmanager's
// template.Data, template.Alerts, template.KV: server/alerting).
#ifndef VIGIL_RULES_TEMPLATE_TEXT_VALUE_H_
#define VIGIL_RULES_TEMPLATE_TEXT_VALUE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vigil::rules::tmpl {

enum class Kind {
  kInvalid,    // Go's zero reflect.Value: missing value or untyped nil
  kBool,       // bool
  kInt,        // int (Go's int is 64-bit here)
  kUint,       // uint8 (from indexing a string)
  kFloat,      // float64
  kString,     // string or template.HTML (see Value::html)
  kMap,        // map[string]string or map[string]interface {}
  kSlice,      // template.queryResult ([]*template.sample)
  kSample,     // *template.sample
  kAlertData,  // the struct Prometheus passes as "." to alert templates
  kTime,       // *time.Time (UTC)
  kDuration,   // *time.Duration
  kRecord,     // any other Go struct (or pointer to one) a caller builds
  kList,       // any other Go slice a caller builds ([]string, Alerts, ...)
};

struct Value;

// The methods of a caller-defined Go type (funcs.h defines it): each takes
// the receiver as its first argument.
struct MethodSet;

// A Go map with string keys; entries sorted by key (Go's fmt and range
// print and visit maps in key order).
struct MapData {
  bool string_elems = true;  // map[string]string, else map[string]interface {}
  std::string type_name;     // a named map type ("template.KV"), else empty
  std::shared_ptr<const MethodSet> methods;  // of the named type, may be null
  std::vector<std::pair<std::string, Value>> entries;
  const Value* Find(const std::string& key) const;
};

struct SampleData {
  std::shared_ptr<const MapData> labels;  // includes __name__
  double value = 0;
};

using SampleList = std::vector<std::shared_ptr<const SampleData>>;

struct AlertData {
  std::shared_ptr<const MapData> labels;
  std::shared_ptr<const MapData> external_labels;
  std::string external_url;
  double value = 0;
};

// A Go struct value built by a caller outside rules (Alertmanager's
// template.Data, template.Alert, ...): its type name as Go prints it
// ("*template.Data" for a pointer), its fields in declaration order, and
// its methods.
struct RecordData {
  std::string type_name;
  bool pointer = false;  // type_name starts with '*'; printed as &{...}
  std::vector<std::pair<std::string, Value>> fields;
  std::shared_ptr<const MethodSet> methods;
  const Value* Find(std::string_view name) const;
};

// A Go slice value built by a caller ("[]string", "template.Alerts").
struct ListData {
  std::string type_name;
  std::vector<Value> elems;
  std::shared_ptr<const MethodSet> methods;
};

struct Value {
  Kind kind = Kind::kInvalid;
  bool b = false;
  int64_t i = 0;         // kInt; kTime: seconds; kDuration: nanoseconds
  uint64_t u = 0;        // kUint
  double f = 0;          // kFloat
  int32_t nsec = 0;      // kTime: nanoseconds within the second
  bool html = false;     // kString: type is template.HTML
  bool nil_ptr = false;  // kSample/kSlice/kMap/kTime/kDuration typed nil
  bool not_ptr = false;  // kTime/kDuration: time.Time rather than *time.Time
  bool iface = false;    // read from an interface {} field (.Value) and not
                         // yet unwrapped by the end of a pipeline
  std::string s;         // kString
  std::shared_ptr<const MapData> map;
  std::shared_ptr<const SampleList> slice;
  std::shared_ptr<const SampleData> sample;
  std::shared_ptr<const AlertData> alert;
  std::shared_ptr<const RecordData> record;  // kRecord
  std::shared_ptr<const ListData> list;      // kList

  static Value Bool(bool v);
  static Value Int(int64_t v);
  static Value Uint8(uint8_t v);
  static Value Float(double v);
  static Value String(std::string v);
  static Value Html(std::string v);
  static Value Map(std::shared_ptr<const MapData> m);
  static Value Slice(std::shared_ptr<const SampleList> l);
  static Value Sample(std::shared_ptr<const SampleData> s);
  static Value Time(int64_t sec, int32_t nsec);
  static Value Duration(int64_t ns);
  static Value Record(std::shared_ptr<const RecordData> r);
  static Value List(std::shared_ptr<const ListData> l);

  bool valid() const { return kind != Kind::kInvalid; }
};

// Go's reflect type name: "float64", "map[string]string",
// "template.queryResult", "*template.sample", "*time.Time", ...
std::string TypeName(const Value& v);

// Go text/template's notion of truth; `ok` false for values that have none.
bool IsTrue(const Value& v, bool* ok = nullptr);

// Length for len/index/range: strings (bytes), maps and slices (lists).
bool HasLen(const Value& v);
size_t Len(const Value& v);

// Builds a map[string]string value from name/value pairs (sorted here).
Value StringMap(std::vector<std::pair<std::string, std::string>> pairs);

// A []string value.
Value StringList(std::vector<std::string> elems);

}  // namespace vigil::rules::tmpl

#endif  // VIGIL_RULES_TEMPLATE_TEXT_VALUE_H_
