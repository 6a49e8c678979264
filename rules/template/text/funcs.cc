// The function table (builtins and Prometheus's) and shared helpers.
#include "rules/template/text/funcs.h"

#include <map>

namespace vigil::rules::tmpl {

using P = ParamType;

std::string UrlQueryEscape(std::string_view s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
        c == '~') {
      out += static_cast<char>(c);
    } else if (c == ' ') {
      out += '+';
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string ParamTypeName(ParamType t) {
  switch (t) {
    case P::kNone:
      return "<nil>";
    case P::kReflect:
      return "reflect.Value";
    case P::kAny:
      return "interface {}";
    case P::kString:
      return "string";
    case P::kQueryResult:
      return "template.queryResult";
    case P::kSamplePtr:
      return "*template.sample";
    case P::kDuration:
      return "time.Duration";
    case P::kTime:
      return "time.Time";
    case P::kStringSlice:
      return "[]string";
  }
  return "";
}

const FuncDef* LookupFunction(std::string_view name, bool* builtin) {
  struct Table {
    std::map<std::string, FuncDef, std::less<>> funcs;
    std::map<std::string, bool, std::less<>> is_builtin;
  };
  static const Table* table = [] {
    auto* t = new Table;
    std::vector<std::pair<std::string, FuncDef>> b, p;
    AddBuiltinFuncs(&b);
    AddPrometheusFuncs(&p);
    for (auto& [n, d] : b) {
      t->is_builtin[n] = true;
      t->funcs[n] = std::move(d);
    }
    for (auto& [n, d] : p) {  // Prometheus's map is consulted first, as in Go
      t->is_builtin[n] = false;
      t->funcs[n] = std::move(d);
    }
    return t;
  }();
  auto it = table->funcs.find(name);
  if (it == table->funcs.end()) return nullptr;
  if (builtin != nullptr) *builtin = table->is_builtin.find(name)->second;
  return &it->second;
}

const FuncDef* FuncTable::Find(std::string_view name) const {
  auto it = funcs.find(name);
  return it == funcs.end() ? nullptr : &it->second;
}

const FuncDef* LookupBuiltin(std::string_view name) {
  static const FuncTable* table = [] {
    auto* t = new FuncTable;
    std::vector<std::pair<std::string, FuncDef>> b;
    AddBuiltinFuncs(&b);
    for (auto& [n, d] : b) t->funcs[n] = std::move(d);
    return t;
  }();
  return table->Find(name);
}

const FuncDef* LookupFunction(const FuncEnv& env, std::string_view name,
                              bool* builtin) {
  if (env.funcs == nullptr) return LookupFunction(name, builtin);
  if (const FuncDef* f = env.funcs->Find(name)) {
    if (builtin != nullptr) *builtin = false;
    return f;
  }
  if (builtin != nullptr) *builtin = true;
  return LookupBuiltin(name);
}

bool HasTemplateFunction(std::string_view name) {
  return LookupFunction(name) != nullptr;
}

}  // namespace vigil::rules::tmpl
