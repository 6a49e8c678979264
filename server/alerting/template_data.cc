// alerting/template_data.h: Alertmanager's template.Data as template values.
#include "server/alerting/template_data.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "fmt/format.h"

namespace vigil::alerting {

namespace {

using rules::tmpl::FuncDef;
using rules::tmpl::FuncEnv;
using rules::tmpl::ListData;
using rules::tmpl::MapData;
using rules::tmpl::MethodSet;
using rules::tmpl::RecordData;
using rules::tmpl::Value;
using P = rules::tmpl::ParamType;

// Go's time.Time{} as Unix seconds.
constexpr int64_t kGoZeroTimeUnix = -62135596800;

// Alertmanager's model.LabelSet.Fingerprint (FNV-1a 64 over sorted names
// and values, each followed by 0xff), kept here so the template data does
// not depend on where the router implements alert.h.
uint64_t LabelsFingerprint(const Labels& labels) {
  uint64_t h = 14695981039346656037ULL;
  auto add = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ULL;
    }
    h ^= 0xff;
    h *= 1099511628211ULL;
  };
  if (labels.size() == 0) return h;
  for (const Label& l : labels) {  // Labels are sorted by name
    add(l.name);
    add(l.value);
  }
  return h;
}

FuncDef Getter(Value (*f)(const Value&)) {
  return FuncDef{
      {},
      false,
      [f](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
        return f(a[0]);
      }};
}

std::shared_ptr<const MethodSet> PairsMethods();
std::shared_ptr<const MethodSet> KVMethods();

Value MakeList(std::string type, std::vector<Value> elems,
               std::shared_ptr<const MethodSet> methods = nullptr) {
  auto l = std::make_shared<ListData>();
  l->type_name = std::move(type);
  l->elems = std::move(elems);
  l->methods = std::move(methods);
  return Value::List(std::move(l));
}

Value MakeKV(std::vector<std::pair<std::string, std::string>> pairs) {
  Value v = rules::tmpl::StringMap(std::move(pairs));
  auto m = std::make_shared<MapData>(*v.map);
  m->type_name = "template.KV";
  m->methods = KVMethods();
  return Value::Map(std::move(m));
}

// KV.SortedPairs: alertname first, then by name.
Value SortedPairs(const Value& kv) {
  std::vector<const std::pair<std::string, Value>*> order;
  for (const auto& e : kv.map->entries) order.push_back(&e);
  std::stable_partition(order.begin(), order.end(),
                        [](const auto* e) { return e->first == "alertname"; });
  std::vector<Value> pairs;
  for (const auto* e : order) {
    auto r = std::make_shared<RecordData>();
    r->type_name = "template.Pair";
    r->fields = {{"Name", Value::String(e->first)}, {"Value", e->second}};
    pairs.push_back(Value::Record(std::move(r)));
  }
  return MakeList("template.Pairs", std::move(pairs), PairsMethods());
}

Value PairsField(const Value& pairs, int field) {
  std::vector<std::string> out;
  for (const Value& p : pairs.list->elems)
    out.push_back(p.record->fields[field].second.s);
  return rules::tmpl::StringList(std::move(out));
}

std::shared_ptr<const MethodSet> PairsMethods() {
  static const auto* set = [] {
    auto* m = new std::shared_ptr<MethodSet>(std::make_shared<MethodSet>());
    auto& f = (*m)->methods.funcs;
    f["Names"] = Getter([](const Value& p) { return PairsField(p, 0); });
    f["Values"] = Getter([](const Value& p) { return PairsField(p, 1); });
    return m;
  }();
  return *set;
}

std::shared_ptr<const MethodSet> KVMethods() {
  static const auto* set = [] {
    auto* m = new std::shared_ptr<MethodSet>(std::make_shared<MethodSet>());
    auto& f = (*m)->methods.funcs;
    f["SortedPairs"] = Getter(SortedPairs);
    f["Names"] =
        Getter([](const Value& kv) { return PairsField(SortedPairs(kv), 0); });
    f["Values"] =
        Getter([](const Value& kv) { return PairsField(SortedPairs(kv), 1); });
    f["Remove"] = FuncDef{
        {P::kStringSlice},
        false,
        [](const FuncEnv&, std::vector<Value>& a) -> absl::StatusOr<Value> {
          std::vector<std::pair<std::string, std::string>> kept;
          for (const auto& entry : a[0].map->entries) {
            // Not a structured binding: clang 14 cannot capture one.
            const auto& k = entry.first;
            bool removed =
                std::any_of(a[1].list->elems.begin(), a[1].list->elems.end(),
                            [&k](const Value& name) { return name.s == k; });
            if (!removed) kept.emplace_back(k, entry.second.s);
          }
          return MakeKV(std::move(kept));
        }};
    return m;
  }();
  return *set;
}

Value AlertsWithStatus(const Value& alerts, std::string_view status) {
  std::vector<Value> out;
  for (const Value& a : alerts.list->elems) {
    if (a.record->Find("Status")->s == status) out.push_back(a);
  }
  return MakeList("[]template.Alert", std::move(out));
}

std::shared_ptr<const MethodSet> AlertsMethods() {
  static const auto* set = [] {
    auto* m = new std::shared_ptr<MethodSet>(std::make_shared<MethodSet>());
    auto& f = (*m)->methods.funcs;
    f["Firing"] =
        Getter([](const Value& a) { return AlertsWithStatus(a, "firing"); });
    f["Resolved"] =
        Getter([](const Value& a) { return AlertsWithStatus(a, "resolved"); });
    return m;
  }();
  return *set;
}

std::vector<std::pair<std::string, std::string>> Pairs(const Labels& labels) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Label& l : labels) out.emplace_back(l.name, l.value);
  return out;
}

// The labels (or annotations) every alert has with the same value.
std::vector<std::pair<std::string, std::string>> Common(
    const std::vector<Alert>& alerts, bool annotations) {
  if (alerts.empty()) return {};
  auto set = [annotations](const Alert& a) -> const Labels& {
    return annotations ? a.annotations : a.labels;
  };
  std::vector<std::pair<std::string, std::string>> common;
  for (const Label& l : set(alerts[0])) {
    bool shared =
        std::all_of(alerts.begin() + 1, alerts.end(), [&](const Alert& a) {
          for (const Label& o : set(a)) {
            if (o.name == l.name) return o.value == l.value;
          }
          return l.value.empty();  // Go: a missing key reads as ""
        });
    if (shared) common.emplace_back(l.name, l.value);
  }
  return common;
}

}  // namespace

std::string QuoteMeta(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos)
      out += '\\';
    out += c;
  }
  return out;
}

Value TimeValue(Timestamp ms) {
  int64_t sec = ms == 0 ? kGoZeroTimeUnix : ms / 1000;
  int64_t rem = ms == 0 ? 0 : ms % 1000;
  if (rem < 0) {
    rem += 1000;
    --sec;
  }
  Value v = Value::Time(sec, static_cast<int32_t>(rem * 1000000));
  v.not_ptr = true;
  return v;
}

Value KVValue(const Labels& labels) { return MakeKV(Pairs(labels)); }

Value NotificationData(const Notification& n) {
  std::vector<Value> alerts;
  bool firing = false;
  for (const Alert& a : n.alerts) {
    bool resolved = a.Resolved(n.now);
    firing = firing || !resolved;
    auto r = std::make_shared<RecordData>();
    r->type_name = "template.Alert";
    r->fields = {
        {"Status", Value::String(resolved ? "resolved" : "firing")},
        {"Labels", KVValue(a.labels)},
        {"Annotations", KVValue(a.annotations)},
        {"StartsAt", TimeValue(a.starts_at)},
        // Alertmanager hides an end time not reached yet.
        {"EndsAt", TimeValue(resolved ? a.ends_at : 0)},
        {"GeneratorURL", Value::String(a.generator_url)},
        {"Fingerprint",
         Value::String(fmt::format("{:016x}", LabelsFingerprint(a.labels)))},
    };
    alerts.push_back(Value::Record(std::move(r)));
  }
  auto d = std::make_shared<RecordData>();
  d->type_name = "*template.Data";
  d->pointer = true;
  d->fields = {
      {"Receiver", Value::String(QuoteMeta(n.receiver))},
      {"Status", Value::String(firing ? "firing" : "resolved")},
      {"Alerts",
       MakeList("template.Alerts", std::move(alerts), AlertsMethods())},
      {"GroupLabels", KVValue(n.group_labels)},
      {"CommonLabels", MakeKV(Common(n.alerts, false))},
      {"CommonAnnotations", MakeKV(Common(n.alerts, true))},
      {"ExternalURL", Value::String(n.external_url)},
  };
  return Value::Record(std::move(d));
}

}  // namespace vigil::alerting
