// Evaluation of pipelines, commands, fields, function calls and arguments
// (Go's text/template exec.go eval* functions).
#include "absl/status/status.h"
#include "core/go/strconv.h"
#include "fmt/format.h"
#include "rules/template/text/exec.h"

namespace vigil::rules::tmpl {

namespace {

bool IsHexInt(std::string_view s) {
  return s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
         s.find_first_of("pP") == std::string_view::npos;
}

}  // namespace

bool Executor::EvalPipeline(const Value& dot, const Node* pipe, Value* out) {
  *out = Value();
  if (pipe == nullptr) return true;
  At(pipe);
  bool have = false;
  Value value;
  for (const NodePtr& cmd : pipe->cmds) {
    Value next;
    if (!EvalCommand(dot, *cmd, have ? &value : nullptr, &next)) return false;
    value = std::move(next);
    have = true;
  }
  value.iface = false;  // Go unwraps interface values between commands
  for (const NodePtr& var : pipe->decl) {
    if (pipe->is_assign) {
      if (!SetVar(var->idents[0], value)) return false;
    } else {
      vars_.emplace_back(var->idents[0], value);
    }
  }
  *out = std::move(value);
  return true;
}

bool Executor::NotAFunction(const Args* args, const Value* final) {
  if ((args != nullptr && args->size() > 1) || final != nullptr) {
    return Errorf("can't give argument to non-function " +
                  (*args)[0]->String());
  }
  return true;
}

bool Executor::EvalCommand(const Value& dot, const Node& cmd,
                           const Value* final, Value* out) {
  const Node& first = *cmd.args[0];
  switch (first.type) {
    case NodeType::kField:
      return EvalFieldNode(dot, first, &cmd.args, final, out);
    case NodeType::kChain:
      return EvalChainNode(dot, first, &cmd.args, final, out);
    case NodeType::kIdentifier:
      return EvalFunction(dot, first, cmd, &cmd.args, final, out);
    case NodeType::kPipe:
      if (!NotAFunction(&cmd.args, final)) return false;
      return EvalPipeline(dot, &first, out);
    case NodeType::kVariable:
      return EvalVariableNode(dot, first, &cmd.args, final, out);
    default:
      break;
  }
  At(&first);
  if (!NotAFunction(&cmd.args, final)) return false;
  switch (first.type) {
    case NodeType::kBool:
      *out = Value::Bool(first.bool_val);
      return true;
    case NodeType::kDot:
      *out = dot;
      return true;
    case NodeType::kNil:
      return Errorf("nil is not a command");
    case NodeType::kNumber:
      return IdealConstant(first, out);
    case NodeType::kString:
      *out = Value::String(first.str);
      return true;
    default:
      return Errorf("can't evaluate command " + go::Quote(first.String()));
  }
}

bool Executor::IdealConstant(const Node& n, Value* out) {
  At(&n);
  if (n.is_float && !IsHexInt(n.text) && n.text[0] != '\'' &&
      n.text.find_first_of(".eEpP") != std::string::npos) {
    *out = Value::Float(n.float_val);
    return true;
  }
  if (n.is_int) {
    *out = Value::Int(n.int_val);
    return true;
  }
  if (n.is_uint) return Errorf(n.text + " overflows int");
  *out = Value();
  return true;
}

bool Executor::EvalFieldNode(const Value& dot, const Node& field,
                             const Args* args, const Value* final, Value* out) {
  At(&field);
  return EvalFieldChain(dot, dot, field, field.idents, 0, args, final, out);
}

bool Executor::EvalChainNode(const Value& dot, const Node& chain,
                             const Args* args, const Value* final, Value* out) {
  At(&chain);
  if (chain.node->type == NodeType::kNil) {
    return Errorf("indirection through explicit nil in " + chain.String());
  }
  Value pipe;
  if (!EvalArg(dot, ParamType::kNone, *chain.node, &pipe)) return false;
  return EvalFieldChain(dot, pipe, chain, chain.idents, 0, args, final, out);
}

bool Executor::EvalVariableNode(const Value& dot, const Node& var,
                                const Args* args, const Value* final,
                                Value* out) {
  At(&var);
  Value value;
  if (!VarValue(var.idents[0], &value)) return false;
  if (var.idents.size() == 1) {
    if (!NotAFunction(args, final)) return false;
    *out = std::move(value);
    return true;
  }
  return EvalFieldChain(dot, value, var, var.idents, 1, args, final, out);
}

bool Executor::EvalFieldChain(const Value& dot, Value receiver,
                              const Node& node,
                              const std::vector<std::string>& ident,
                              size_t first, const Args* args,
                              const Value* final, Value* out) {
  size_t n = ident.size();
  for (size_t i = first; i + 1 < n; ++i) {
    Value next;
    if (!EvalField(dot, ident[i], node, nullptr, nullptr, receiver, &next))
      return false;
    receiver = std::move(next);
  }
  return EvalField(dot, ident[n - 1], node, args, final, receiver, out);
}

bool Executor::EvalField(const Value& dot, const std::string& name,
                         const Node& node, const Args* args, const Value* final,
                         const Value& receiver, Value* out) {
  *out = Value();
  if (!receiver.valid())
    return true;  // missingkey=zero: nothing in, nothing out
  std::string typ = receiver.iface ? "interface {}" : TypeName(receiver);
  if (const FuncDef* method = LookupMethod(receiver, name)) {
    return EvalCall(dot, *method, false, node, name, args, final, &receiver,
                    out);
  }
  bool has_args = (args != nullptr && args->size() > 1) || final != nullptr;
  auto field = [&](Value v) {
    if (has_args)
      return Errorf(name + " has arguments but cannot be invoked as function");
    *out = std::move(v);
    return true;
  };
  switch (receiver.kind) {
    case Kind::kAlertData: {
      const AlertData& a = *receiver.alert;
      if (name == "Labels") return field(Value::Map(a.labels));
      if (name == "ExternalLabels") return field(Value::Map(a.external_labels));
      if (name == "ExternalURL") return field(Value::String(a.external_url));
      if (name == "Value") {
        Value v = Value::Float(a.value);
        v.iface = true;
        return field(std::move(v));
      }
      break;
    }
    case Kind::kSample:
      if (name != "Labels" && name != "Value") break;
      if (receiver.nil_ptr)
        return Errorf(fmt::format("nil pointer evaluating {}.{}", typ, name));
      if (name == "Labels") return field(Value::Map(receiver.sample->labels));
      {
        Value v = Value::Float(receiver.sample->value);
        v.iface = true;
        return field(std::move(v));
      }
    case Kind::kRecord: {
      const Value* v = receiver.record ? receiver.record->Find(name) : nullptr;
      if (v == nullptr) break;
      if (receiver.nil_ptr)
        return Errorf(fmt::format("nil pointer evaluating {}.{}", typ, name));
      return field(*v);
    }
    case Kind::kMap: {
      if (has_args) return Errorf(name + " is not a method but has arguments");
      const Value* v = receiver.map ? receiver.map->Find(name) : nullptr;
      if (v != nullptr) {
        *out = *v;
      } else if (receiver.map == nullptr || receiver.map->string_elems) {
        *out = Value::String("");
      }
      return true;
    }
    default:
      break;
  }
  return Errorf(fmt::format("can't evaluate field {} in type {}", name, typ));
}

bool Executor::EvalFunction(const Value& dot, const Node& ident,
                            const Node& cmd, const Args* args,
                            const Value* final, Value* out) {
  At(&ident);
  bool builtin = false;
  const FuncDef* fn = LookupFunction(env_, ident.text, &builtin);
  if (fn == nullptr)
    return Errorf(go::Quote(ident.text) + " is not a defined function");
  return EvalCall(dot, *fn, builtin, cmd, ident.text, args, final, nullptr,
                  out);
}

bool Executor::EvalAndOr(const Value& dot, const std::string& name,
                         const Args* args, const Value* final, Value* out) {
  size_t nargs = args != nullptr ? args->size() : 0;
  Value v;
  for (size_t i = 1; i < nargs; ++i) {
    if (!EvalArg(dot, ParamType::kReflect, *(*args)[i], &v)) return false;
    if (IsTrue(v) == (name == "or")) {
      *out = std::move(v);
      return true;
    }
  }
  if (final != nullptr && !ValidateType(*final, ParamType::kReflect, &v))
    return false;
  *out = std::move(v);
  return true;
}

// Evaluates a call's operands against the parameter types (Go's evalCall
// argument loop); the pipeline's value, if any, becomes the last argument.
bool Executor::EvalCallArgs(const Value& dot, const FuncDef& fn,
                            const Args* args, const Value* final,
                            size_t num_fixed, std::vector<Value>* argv) {
  size_t nargs = args != nullptr && !args->empty() ? args->size() - 1 : 0;
  size_t num_in = nargs + (final != nullptr ? 1 : 0);
  size_t i = 0;
  for (; i < num_fixed && i < nargs; ++i) {
    Value v;
    if (!EvalArg(dot, fn.params[i], *(*args)[i + 1], &v)) return false;
    argv->push_back(std::move(v));
  }
  for (; fn.variadic && i < nargs; ++i) {
    Value v;
    if (!EvalArg(dot, fn.params.back(), *(*args)[i + 1], &v)) return false;
    argv->push_back(std::move(v));
  }
  if (final != nullptr) {
    ParamType t = fn.params.back();
    if (fn.variadic && num_in - 1 < num_fixed) t = fn.params[num_in - 1];
    Value v;
    if (!ValidateType(*final, t, &v)) return false;
    argv->push_back(std::move(v));
  }
  return true;
}

bool Executor::EvalCall(const Value& dot, const FuncDef& fn, bool builtin,
                        const Node& node, const std::string& name,
                        const Args* args, const Value* final,
                        const Value* receiver, Value* out) {
  size_t nargs = args != nullptr && !args->empty() ? args->size() - 1 : 0;
  size_t num_in = nargs + (final != nullptr ? 1 : 0);
  size_t num_fixed = nargs;
  size_t nparams = fn.params.size();
  if (fn.variadic) {
    num_fixed = nparams - 1;
    if (num_in < num_fixed) {
      return Errorf(
          fmt::format("wrong number of args for {}: want at least {} got {}",
                      name, nparams - 1, nargs));
    }
  } else if (num_in != nparams) {
    return Errorf(fmt::format("wrong number of args for {}: want {} got {}",
                              name, nparams, num_in));
  }
  if (builtin && (name == "and" || name == "or"))
    return EvalAndOr(dot, name, args, final, out);
  std::vector<Value> argv;
  if (receiver != nullptr) argv.push_back(*receiver);
  if (!EvalCallArgs(dot, fn, args, final, num_fixed, &argv)) return false;
  if (builtin && name == "call") {  // no template value is a function
    std::string callee = nargs > 0 ? (*args)[1]->String()
                         : final->kind == Kind::kString
                             ? final->s
                             : "<" + TypeName(*final) + " Value>";
    At(&node);
    if (!argv[0].valid()) return Errorf("error calling call: call of nil");
    return Errorf(fmt::format("error calling call: non-function {} of type {}",
                              callee, TypeName(argv[0])));
  }
  absl::StatusOr<Value> result = fn.impl(env_, argv);
  if (!result.ok()) {
    At(&node);
    return Errorf(fmt::format("error calling {}: {}", name,
                              std::string(result.status().message())));
  }
  *out = std::move(*result);
  return true;
}

bool Executor::ValidateType(const Value& v, ParamType t, Value* out) {
  if (!v.valid()) {
    switch (t) {
      case ParamType::kNone:
      case ParamType::kReflect:
      case ParamType::kAny:
        *out = Value();
        return true;
      case ParamType::kQueryResult:
        *out = Value::Slice(nullptr);
        return true;
      case ParamType::kSamplePtr:
        *out = Value::Sample(nullptr);
        return true;
      case ParamType::kStringSlice:
        *out = StringList({});
        return true;
      default:
        return Errorf("invalid value; expected " + ParamTypeName(t));
    }
  }
  bool ok = false;
  switch (t) {
    case ParamType::kNone:
    case ParamType::kReflect:
    case ParamType::kAny:
      ok = true;
      break;
    case ParamType::kString:
      ok = v.kind == Kind::kString && !v.html;
      break;
    case ParamType::kQueryResult:
      ok = v.kind == Kind::kSlice;
      break;
    case ParamType::kSamplePtr:
      ok = v.kind == Kind::kSample;
      break;
    case ParamType::kDuration:
      if (v.kind == Kind::kDuration && !v.not_ptr) {
        if (v.nil_ptr)
          return Errorf("dereference of nil pointer of type time.Duration");
        *out = v;
        out->not_ptr = true;
        return true;
      }
      ok = v.kind == Kind::kDuration;
      break;
    case ParamType::kTime:
      if (v.kind == Kind::kTime && !v.not_ptr) {
        if (v.nil_ptr)
          return Errorf("dereference of nil pointer of type time.Time");
        *out = v;
        out->not_ptr = true;
        return true;
      }
      ok = v.kind == Kind::kTime;
      break;
    case ParamType::kStringSlice:
      ok = v.kind == Kind::kList && v.list && v.list->type_name == "[]string";
      break;
  }
  if (!ok) {
    return Errorf(fmt::format("wrong type for value; expected {}; got {}",
                              ParamTypeName(t), TypeName(v)));
  }
  *out = v;
  return true;
}

bool Executor::EvalArg(const Value& dot, ParamType t, const Node& n,
                       Value* out) {
  At(&n);
  Value v;
  switch (n.type) {
    case NodeType::kDot:
      return ValidateType(dot, t, out);
    case NodeType::kNil:
      if (t == ParamType::kString || t == ParamType::kDuration ||
          t == ParamType::kTime) {
        return Errorf("cannot assign nil to " + ParamTypeName(t));
      }
      return ValidateType(Value(), t, out);
    case NodeType::kField:
      return EvalFieldNode(dot, n, nullptr, nullptr, &v) &&
             ValidateType(v, t, out);
    case NodeType::kVariable:
      return EvalVariableNode(dot, n, nullptr, nullptr, &v) &&
             ValidateType(v, t, out);
    case NodeType::kPipe:
      return EvalPipeline(dot, &n, &v) && ValidateType(v, t, out);
    case NodeType::kIdentifier:
      return EvalFunction(dot, n, n, nullptr, nullptr, &v) &&
             ValidateType(v, t, out);
    case NodeType::kChain:
      return EvalChainNode(dot, n, nullptr, nullptr, &v) &&
             ValidateType(v, t, out);
    default:
      break;
  }
  switch (t) {
    case ParamType::kString:
      if (n.type != NodeType::kString)
        return Errorf("expected string; found " + n.String());
      *out = Value::String(n.str);
      return true;
    case ParamType::kDuration:
      if (n.type != NodeType::kNumber || !n.is_int) {
        return Errorf("expected integer; found " + n.String());
      }
      *out = Value::Duration(n.int_val);
      out->not_ptr = true;
      return true;
    case ParamType::kQueryResult:
    case ParamType::kSamplePtr:
    case ParamType::kTime:
    case ParamType::kStringSlice:
      return Errorf(fmt::format("can't handle {} for arg of type {}",
                                n.String(), ParamTypeName(t)));
    default:
      return EvalEmptyInterface(dot, n, out);
  }
}

bool Executor::EvalEmptyInterface(const Value& dot, const Node& n, Value* out) {
  At(&n);
  switch (n.type) {
    case NodeType::kBool:
      *out = Value::Bool(n.bool_val);
      return true;
    case NodeType::kDot:
      *out = dot;
      return true;
    case NodeType::kNumber:
      return IdealConstant(n, out);
    case NodeType::kString:
      *out = Value::String(n.str);
      return true;
    default:
      return Errorf(fmt::format(
          "can't handle assignment of {} to empty interface argument",
          n.String()));
  }
}

}  // namespace vigil::rules::tmpl
