// -----------------------------------------------------------------------------
// File: text/funcs.h
// -----------------------------------------------------------------------------
//
// The function table templates can call: Go text/template's builtins (and,
// or, not, len, index, slice, print, printf, println, html, js, urlquery,
// call, eq, ne, lt, le, gt, ge) and Prometheus's template functions (query,
// first, label, value, strvalue, sortByLabel, args, humanize*, toTime,
// toDuration, now, title, toUpper, toLower, match, reReplaceAll, safeHtml,
// stripPort, stripDomain, graphLink, tableLink, pathPrefix, externalURL,
// parseDuration, urlQueryEscape), plus the few methods of *time.Time and
// *time.Duration that templates use.
//
// Each function declares Go's parameter types, because text/template checks
// arguments against them ("wrong type for value; expected string; got
// float64") and the executor must reproduce those checks.
#ifndef VIGIL_RULES_TEMPLATE_TEXT_FUNCS_H_
#define VIGIL_RULES_TEMPLATE_TEXT_FUNCS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "rules/template/template.h"
#include "rules/template/text/value.h"

namespace vigil::rules::tmpl {

enum class ParamType {
  kNone,         // untyped context (Go passes a nil reflect.Type)
  kReflect,      // reflect.Value: anything, nil allowed
  kAny,          // interface {}: anything, nil allowed
  kString,       // string
  kQueryResult,  // template.queryResult
  kSamplePtr,    // *template.sample
  kDuration,     // time.Duration (a *time.Duration is followed)
  kTime,         // time.Time (a *time.Time is followed)
  kStringSlice,  // []string
};

// Go's name of the parameter type, for error messages.
std::string ParamTypeName(ParamType t);

struct FuncTable;

// What functions may consult besides their arguments.
struct FuncEnv {
  const TemplateQueryFunc* query = nullptr;  // may be null or empty
  int64_t now_ms = 0;                        // evaluation time (for `now`)
  std::string_view external_url;
  // A caller's own function map. When set it replaces Prometheus's
  // functions: templates see Go's builtins and these (consulted first).
  const FuncTable* funcs = nullptr;
};

// Returns the result, or an error whose message is what Go reports after
// "error calling NAME: ".
using FuncImpl = std::function<absl::StatusOr<Value>(const FuncEnv& env,
                                                     std::vector<Value>& args)>;

struct FuncDef {
  std::vector<ParamType> params;  // when variadic, the last is the element type
  bool variadic = false;
  FuncImpl impl;
};

// A function map (Go's template.FuncMap) or a type's methods.
struct FuncTable {
  std::map<std::string, FuncDef, std::less<>> funcs;
  const FuncDef* Find(std::string_view name) const;
};

// The methods of a caller-defined type (RecordData, ListData, MapData).
struct MethodSet {
  FuncTable methods;
};

// Go's builtin function called `name` (and, or, len, printf, ...), or null.
const FuncDef* LookupBuiltin(std::string_view name);

// The function called `name` as a template with `env` sees it: the
// caller's table then the builtins when env.funcs is set, otherwise the
// builtins and Prometheus's. `builtin` as for LookupFunction.
const FuncDef* LookupFunction(const FuncEnv& env, std::string_view name,
                              bool* builtin);

// The function called `name`, or nullptr. `builtin` tells text/template's own
// functions (and/or short-circuit) from Prometheus's.
const FuncDef* LookupFunction(std::string_view name, bool* builtin = nullptr);
bool HasTemplateFunction(std::string_view name);

// A method of `receiver`'s type (e.g. Format on *time.Time), or nullptr. The
// receiver is passed to impl as args[0], before the declared params.
const FuncDef* LookupMethod(const Value& receiver, std::string_view name);

// Registration helpers implemented in template_funcs_builtin.cc and
// template_funcs_prom.cc.
void AddBuiltinFuncs(std::vector<std::pair<std::string, FuncDef>>* out);
void AddPrometheusFuncs(std::vector<std::pair<std::string, FuncDef>>* out);

// Go's fmt-level helpers used by several functions.
std::string UrlQueryEscape(std::string_view s);
absl::StatusOr<double> ConvertToFloat(const Value& v);

// regexp.MustCompile(pattern).ReplaceAllString(text, repl), the panic of a
// bad pattern becoming the error ("regexp: Compile(`(`): error parsing
// regexp: missing closing ): `(`").
absl::StatusOr<std::string> GoRegexpReplaceAll(std::string_view pattern,
                                               std::string_view repl,
                                               std::string_view text);
// regexp.MatchString(pattern, text): unanchored search.
absl::StatusOr<bool> GoRegexpMatch(std::string_view pattern,
                                   std::string_view text);

}  // namespace vigil::rules::tmpl

#endif  // VIGIL_RULES_TEMPLATE_TEXT_FUNCS_H_
