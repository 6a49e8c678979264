// Methods of *time.Time and *time.Duration reachable from templates
// ({{ (now | toTime).Format "2006" }}, {{ (1800 | toDuration).String }}).
#include <map>

#include "core/go/time.h"
#include "rules/template/humanize.h"
#include "rules/template/text/funcs.h"
#include "rules/template/time_zone.h"

namespace vigil::rules::tmpl {

namespace {

using P = ParamType;
using Table = std::map<std::string, FuncDef, std::less<>>;

FuncDef Method(std::vector<P> params, FuncImpl impl) {
  return FuncDef{std::move(params), false, std::move(impl)};
}

// A zero-argument method computing a value from the receiver.
template <typename F>
FuncDef Getter(F f) {
  return Method(
      {}, [f](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        return f(a[0]);
      });
}

Value TimeValue(int64_t sec, int64_t nsec) {
  sec += nsec / 1000000000;
  nsec %= 1000000000;
  if (nsec < 0) {
    nsec += 1000000000;
    --sec;
  }
  Value v = Value::Time(sec, static_cast<int32_t>(nsec));
  v.not_ptr = true;
  return v;
}

int64_t CivilField(const Value& t, const char* layout) {
  return std::stoll(FormatTimeValue(t, layout));
}

const Table& TimeMethods() {
  static const Table* t = [] {
    auto* m = new Table;
    (*m)["Format"] = Method(
        {P::kString},
        [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
          return Value::String(FormatTimeValue(a[0], a[1].s));
        });
    (*m)["String"] = Getter(
        [](const Value& t) { return Value::String(TimeValueString(t)); });
    (*m)["Unix"] = Getter([](const Value& t) { return Value::Int(t.i); });
    (*m)["UnixMilli"] = Getter([](const Value& t) {
      return Value::Int(t.i * 1000 + t.nsec / 1000000);
    });
    (*m)["UnixNano"] = Getter(
        [](const Value& t) { return Value::Int(t.i * 1000000000 + t.nsec); });
    (*m)["UTC"] = Getter([](const Value& t) { return TimeValue(t.i, t.nsec); });
    (*m)["Year"] = Getter(
        [](const Value& t) { return Value::Int(CivilField(t, "2006")); });
    (*m)["YearDay"] =
        Getter([](const Value& t) { return Value::Int(CivilField(t, "002")); });
    (*m)["Day"] =
        Getter([](const Value& t) { return Value::Int(CivilField(t, "2")); });
    (*m)["Hour"] =
        Getter([](const Value& t) { return Value::Int(CivilField(t, "15")); });
    (*m)["Minute"] =
        Getter([](const Value& t) { return Value::Int(CivilField(t, "4")); });
    (*m)["Second"] =
        Getter([](const Value& t) { return Value::Int(CivilField(t, "5")); });
    (*m)["Nanosecond"] =
        Getter([](const Value& t) { return Value::Int(t.nsec); });
    (*m)["Add"] = Method(
        {P::kDuration},
        [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
          Value r = TimeValue(a[0].i + a[1].i / 1000000000,
                              a[0].nsec + a[1].i % 1000000000);
          r.s = a[0].s;  // Add keeps the location
          return r;
        });
    return m;
  }();
  return *t;
}

const Table& DurationMethods() {
  static const Table* t = [] {
    auto* m = new Table;
    (*m)["String"] = Getter(
        [](const Value& d) { return Value::String(go::DurationString(d.i)); });
    (*m)["Seconds"] = Getter([](const Value& d) {
      return Value::Float(static_cast<double>(d.i / 1000000000) +
                          static_cast<double>(d.i % 1000000000) / 1e9);
    });
    (*m)["Minutes"] = Getter([](const Value& d) {
      return Value::Float(static_cast<double>(d.i / 60000000000) +
                          static_cast<double>(d.i % 60000000000) / 6e10);
    });
    (*m)["Hours"] = Getter([](const Value& d) {
      return Value::Float(static_cast<double>(d.i / 3600000000000) +
                          static_cast<double>(d.i % 3600000000000) / 3.6e12);
    });
    (*m)["Milliseconds"] =
        Getter([](const Value& d) { return Value::Int(d.i / 1000000); });
    (*m)["Microseconds"] =
        Getter([](const Value& d) { return Value::Int(d.i / 1000); });
    (*m)["Nanoseconds"] =
        Getter([](const Value& d) { return Value::Int(d.i); });
    return m;
  }();
  return *t;
}

}  // namespace

const FuncDef* LookupMethod(const Value& receiver, std::string_view name) {
  const MethodSet* own = nullptr;
  if (receiver.kind == Kind::kRecord && receiver.record)
    own = receiver.record->methods.get();
  if (receiver.kind == Kind::kList && receiver.list)
    own = receiver.list->methods.get();
  if (receiver.kind == Kind::kMap && receiver.map)
    own = receiver.map->methods.get();
  if (own != nullptr) return own->methods.Find(name);
  const Table* table = nullptr;
  if (receiver.kind == Kind::kTime) table = &TimeMethods();
  if (receiver.kind == Kind::kDuration) table = &DurationMethods();
  if (table == nullptr) return nullptr;
  auto it = table->find(name);
  return it == table->end() ? nullptr : &it->second;
}

}  // namespace vigil::rules::tmpl
