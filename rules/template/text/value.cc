#include "rules/template/text/value.h"

#include <algorithm>

namespace vigil::rules::tmpl {

const Value* MapData::Find(const std::string& key) const {
  auto it = std::lower_bound(
      entries.begin(), entries.end(), key,
      [](const auto& e, const std::string& k) { return e.first < k; });
  if (it == entries.end() || it->first != key) return nullptr;
  return &it->second;
}

const Value* RecordData::Find(std::string_view name) const {
  for (const auto& [n, v] : fields) {
    if (n == name) return &v;
  }
  return nullptr;
}

Value Value::Bool(bool v) {
  Value r;
  r.kind = Kind::kBool;
  r.b = v;
  return r;
}
Value Value::Int(int64_t v) {
  Value r;
  r.kind = Kind::kInt;
  r.i = v;
  return r;
}
Value Value::Uint8(uint8_t v) {
  Value r;
  r.kind = Kind::kUint;
  r.u = v;
  return r;
}
Value Value::Float(double v) {
  Value r;
  r.kind = Kind::kFloat;
  r.f = v;
  return r;
}
Value Value::String(std::string v) {
  Value r;
  r.kind = Kind::kString;
  r.s = std::move(v);
  return r;
}
Value Value::Html(std::string v) {
  Value r = String(std::move(v));
  r.html = true;
  return r;
}
Value Value::Map(std::shared_ptr<const MapData> m) {
  Value r;
  r.kind = Kind::kMap;
  r.nil_ptr = m == nullptr;
  r.map = std::move(m);
  return r;
}
Value Value::Slice(std::shared_ptr<const SampleList> l) {
  Value r;
  r.kind = Kind::kSlice;
  r.nil_ptr = l == nullptr;
  r.slice = std::move(l);
  return r;
}
Value Value::Sample(std::shared_ptr<const SampleData> s) {
  Value r;
  r.kind = Kind::kSample;
  r.nil_ptr = s == nullptr;
  r.sample = std::move(s);
  return r;
}
Value Value::Time(int64_t sec, int32_t nsec) {
  Value r;
  r.kind = Kind::kTime;
  r.i = sec;
  r.nsec = nsec;
  return r;
}
Value Value::Duration(int64_t ns) {
  Value r;
  r.kind = Kind::kDuration;
  r.i = ns;
  return r;
}

Value Value::Record(std::shared_ptr<const RecordData> r) {
  Value v;
  v.kind = Kind::kRecord;
  v.record = std::move(r);
  return v;
}

Value Value::List(std::shared_ptr<const ListData> l) {
  Value v;
  v.kind = Kind::kList;
  v.list = std::move(l);
  return v;
}

std::string TypeName(const Value& v) {
  switch (v.kind) {
    case Kind::kInvalid:
      return "<nil>";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kUint:
      return "uint8";
    case Kind::kFloat:
      return "float64";
    case Kind::kString:
      return v.html ? "template.HTML" : "string";
    case Kind::kRecord:
      return v.record ? v.record->type_name : "struct {}";
    case Kind::kList:
      return v.list ? v.list->type_name : "[]interface {}";
    case Kind::kMap:
      if (v.map && !v.map->type_name.empty()) return v.map->type_name;
      return (v.map && !v.map->string_elems) ? "map[string]interface {}"
                                             : "map[string]string";
    case Kind::kSlice:
      return "template.queryResult";
    case Kind::kSample:
      return "*template.sample";
    case Kind::kAlertData:
      return "struct { Labels map[string]string; ExternalLabels "
             "map[string]string; "
             "ExternalURL string; Value interface {} }";
    case Kind::kTime:
      return v.not_ptr ? "time.Time" : "*time.Time";
    case Kind::kDuration:
      return v.not_ptr ? "time.Duration" : "*time.Duration";
  }
  return "";
}

bool IsTrue(const Value& v, bool* ok) {
  if (ok != nullptr) *ok = true;
  switch (v.kind) {
    case Kind::kInvalid:
      return false;
    case Kind::kBool:
      return v.b;
    case Kind::kInt:
      return v.i != 0;
    case Kind::kUint:
      return v.u != 0;
    case Kind::kFloat:
      return v.f != 0;
    case Kind::kString:
      return !v.s.empty();
    case Kind::kMap:
      return v.map != nullptr && !v.map->entries.empty();
    case Kind::kSlice:
      return v.slice != nullptr && !v.slice->empty();
    case Kind::kSample:
      return !v.nil_ptr;
    case Kind::kAlertData:
      return true;
    case Kind::kRecord:
      return !(v.record && v.record->pointer) || !v.nil_ptr;
    case Kind::kList:
      return v.list != nullptr && !v.list->elems.empty();
    case Kind::kTime:
    case Kind::kDuration:
      return v.not_ptr ? (v.kind == Kind::kDuration ? v.i != 0 : true)
                       : !v.nil_ptr;
  }
  return false;
}

bool HasLen(const Value& v) {
  return v.kind == Kind::kString || v.kind == Kind::kMap ||
         v.kind == Kind::kSlice || v.kind == Kind::kList;
}

size_t Len(const Value& v) {
  switch (v.kind) {
    case Kind::kString:
      return v.s.size();
    case Kind::kMap:
      return v.map ? v.map->entries.size() : 0;
    case Kind::kSlice:
      return v.slice ? v.slice->size() : 0;
    case Kind::kList:
      return v.list ? v.list->elems.size() : 0;
    default:
      return 0;
  }
}

Value StringMap(std::vector<std::pair<std::string, std::string>> pairs) {
  auto m = std::make_shared<MapData>();
  std::sort(pairs.begin(), pairs.end());
  for (auto& [k, val] : pairs)
    m->entries.emplace_back(std::move(k), Value::String(std::move(val)));
  return Value::Map(std::move(m));
}

}  // namespace vigil::rules::tmpl

namespace vigil::rules::tmpl {

Value StringList(std::vector<std::string> elems) {
  auto l = std::make_shared<ListData>();
  l->type_name = "[]string";
  l->elems.reserve(elems.size());
  for (std::string& e : elems) l->elems.push_back(Value::String(std::move(e)));
  return Value::List(std::move(l));
}

}  // namespace vigil::rules::tmpl
