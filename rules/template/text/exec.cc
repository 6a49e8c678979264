#include "rules/template/text/exec.h"

#include <algorithm>

#include "absl/status/status.h"
#include "core/go/strconv.h"
#include "fmt/format.h"
#include "rules/template/text/fmt_print.h"

namespace vigil::rules::tmpl {

namespace {

// Go's recursion guard for {{template}} calls, lowered to fit a C++ stack.
constexpr int kMaxExecDepth = 1000;

std::string Sprintv(const Value& v) { return GoSprintf("%v", {v}); }

}  // namespace

absl::StatusOr<std::string> ExecuteTemplate(const TemplateTree& tree,
                                            const Value& dot,
                                            const FuncEnv& env,
                                            const ExecOptions& options) {
  Executor ex(tree, env, options);
  return ex.Run(dot);
}

std::string HtmlEscapeText(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '+':
        out += "&#43;";
        break;
      case '\0':
        out += "\xef\xbf\xbd";  // U+FFFD
        break;
      default:
        out += c;
    }
  }
  return out;
}

absl::StatusOr<std::string> Executor::Run(const Value& dot) {
  name_ = tree_.name;
  vars_ = {{"$", dot}};
  if (!Walk(dot, *tree_.root)) return absl::InvalidArgumentError(error_);
  return std::move(out_);
}

bool Executor::Errorf(const std::string& msg) {
  if (node_ == nullptr) {
    error_ = fmt::format("template: {}: {}", name_, msg);
    return false;
  }
  size_t pos = std::min(node_->pos, source_->text.size());
  std::string_view text = std::string_view(source_->text).substr(0, pos);
  size_t nl = text.rfind('\n');
  size_t col = nl == std::string_view::npos ? pos : pos - (nl + 1);
  size_t line =
      1 + static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  error_ =
      fmt::format("template: {}:{}:{}: executing {} at <{}>: {}", source_->name,
                  line, col, go::Quote(name_), node_->String(), msg);
  return false;
}

bool Executor::Walk(const Value& dot, const Node& node) {
  At(&node);
  // Not in Go: a runaway template (recursive {{template}}, huge ranges) must
  // not stall rule evaluation or exhaust memory.
  if (++steps_ > kMaxSteps) {
    return Errorf(
        fmt::format("template execution exceeded {} steps", kMaxSteps));
  }
  if (out_.size() > kMaxOutputBytes) {
    return Errorf(
        fmt::format("template output exceeded {} bytes", kMaxOutputBytes));
  }
  switch (node.type) {
    case NodeType::kAction: {
      Value val;
      if (!EvalPipeline(dot, node.node.get(), &val)) return false;
      if (node.node->decl.empty()) {
        At(&node);
        if (options_.escape_html && !(val.kind == Kind::kString && val.html)) {
          out_ += HtmlEscapeText(TemplatePrint(val));
        } else {
          out_ += TemplatePrint(val);
        }
      }
      return true;
    }
    case NodeType::kBreak:
      flow_ = Flow::kBreak;
      return true;
    case NodeType::kContinue:
      flow_ = Flow::kContinue;
      return true;
    case NodeType::kIf:
      return WalkIfOrWith(false, dot, node);
    case NodeType::kWith:
      return WalkIfOrWith(true, dot, node);
    case NodeType::kList:
      for (const NodePtr& n : node.args) {
        if (!Walk(dot, *n)) return false;
        if (flow_ != Flow::kNormal) return true;
      }
      return true;
    case NodeType::kRange:
      return WalkRange(dot, node);
    case NodeType::kTemplate:
      return WalkTemplate(dot, node);
    case NodeType::kText:
      out_ += node.text;
      return true;
    default:
      return Errorf("unknown node: " + node.String());
  }
}

bool Executor::WalkIfOrWith(bool is_with, const Value& dot, const Node& n) {
  size_t mark = vars_.size();
  Value val;
  if (!EvalPipeline(dot, n.node.get(), &val)) return false;
  bool ok;
  bool truth = IsTrue(val, &ok);
  if (!ok) return Errorf("if/with can't use " + Sprintv(val));
  bool result = true;
  if (truth) {
    result = Walk(is_with ? val : dot, *n.list);
  } else if (n.else_list != nullptr) {
    result = Walk(dot, *n.else_list);
  }
  vars_.resize(mark);
  return result;
}

bool Executor::RangeIteration(const Node& r, size_t mark, const Value& index,
                              const Value& elem, bool* stop) {
  const Node& pipe = *r.node;
  if (!pipe.decl.empty()) {
    if (pipe.is_assign) {
      const Value& first = pipe.decl.size() > 1 ? index : elem;
      if (!SetVar(pipe.decl[0]->idents[0], first)) return false;
    } else {
      vars_[vars_.size() - 1].second = elem;
    }
  }
  if (pipe.decl.size() > 1) {
    if (pipe.is_assign) {
      if (!SetVar(pipe.decl[1]->idents[0], elem)) return false;
    } else {
      vars_[vars_.size() - 2].second = index;
    }
  }
  bool ok = Walk(elem, *r.list);
  vars_.resize(mark);
  if (flow_ == Flow::kBreak) *stop = true;
  flow_ = Flow::kNormal;
  return ok;
}

bool Executor::WalkRange(const Value& dot, const Node& r) {
  At(&r);
  size_t outer_mark = vars_.size();
  Value val;
  if (!EvalPipeline(dot, r.node.get(), &val)) return false;
  size_t mark = vars_.size();
  bool stop = false;
  bool ran = false;
  auto iterate = [&](const Value& index, const Value& elem) {
    ran = true;
    return RangeIteration(r, mark, index, elem, &stop);
  };
  switch (val.kind) {
    case Kind::kInt:
    case Kind::kUint: {
      if (r.node->decl.size() > 1) {
        return Errorf(
            fmt::format("can't use {} to iterate over more than one variable",
                        Sprintv(val)));
      }
      int64_t n = val.kind == Kind::kInt ? val.i : static_cast<int64_t>(val.u);
      for (int64_t i = 0; i < n && !stop; ++i) {
        Value e = val.kind == Kind::kInt
                      ? Value::Int(i)
                      : Value::Uint8(static_cast<uint8_t>(i));
        if (!iterate(Value(), e)) return false;
      }
      break;
    }
    case Kind::kSlice:
      if (val.slice) {
        for (size_t i = 0; i < val.slice->size() && !stop; ++i) {
          if (!iterate(Value::Int(static_cast<int64_t>(i)),
                       Value::Sample((*val.slice)[i]))) {
            return false;
          }
        }
      }
      break;
    case Kind::kList:
      if (val.list) {
        for (size_t i = 0; i < val.list->elems.size() && !stop; ++i) {
          if (!iterate(Value::Int(static_cast<int64_t>(i)),
                       val.list->elems[i])) {
            return false;
          }
        }
      }
      break;
    case Kind::kMap:
      if (val.map) {
        for (const auto& [k, v] : val.map->entries) {
          if (stop) break;
          if (!iterate(Value::String(k), v)) return false;
        }
      }
      break;
    case Kind::kInvalid:
      break;
    default: {
      std::string shown =
          val.kind == Kind::kSample ? TemplatePrint(val) : Sprintv(val);
      return Errorf("range can't iterate over " + shown);
    }
  }
  if (!ran && r.else_list != nullptr) {
    if (!Walk(dot, *r.else_list)) return false;
  }
  vars_.resize(outer_mark);
  return true;
}

bool Executor::WalkTemplate(const Value& dot, const Node& t) {
  At(&t);
  const Node* root = nullptr;
  const TemplateTree* source = &tree_;
  auto it = tree_.defined.find(t.text);
  if (it != tree_.defined.end()) {
    root = it->second;
  } else if (t.text == tree_.name) {
    root = tree_.root.get();
  } else if (options_.library != nullptr) {
    auto lib = options_.library->find(t.text);
    if (lib != options_.library->end()) {
      root = lib->second.root;
      source = lib->second.source;
    }
  }
  if (root == nullptr)
    return Errorf(fmt::format("template {} not defined", go::Quote(t.text)));
  if (depth_ == kMaxExecDepth) {
    return Errorf(
        fmt::format("exceeded maximum template depth ({})", kMaxExecDepth));
  }
  Value new_dot;
  if (!EvalPipeline(dot, t.node.get(), &new_dot)) return false;
  std::vector<std::pair<std::string, Value>> saved = std::move(vars_);
  std::string saved_name = std::exchange(name_, t.text);
  const TemplateTree* saved_source = std::exchange(source_, source);
  vars_ = {{"$", new_dot}};
  ++depth_;
  bool ok = Walk(new_dot, *root);
  --depth_;
  flow_ = Flow::kNormal;
  if (!ok) return false;
  vars_ = std::move(saved);
  name_ = std::move(saved_name);
  source_ = saved_source;
  return true;
}

bool Executor::VarValue(const std::string& name, Value* out) {
  for (size_t i = vars_.size(); i-- > 0;) {
    if (vars_[i].first == name) {
      *out = vars_[i].second;
      return true;
    }
  }
  return Errorf("undefined variable: " + name);
}

bool Executor::SetVar(const std::string& name, const Value& v) {
  for (size_t i = vars_.size(); i-- > 0;) {
    if (vars_[i].first == name) {
      vars_[i].second = v;
      return true;
    }
  }
  return Errorf("undefined variable: " + name);
}

}  // namespace vigil::rules::tmpl
