// -----------------------------------------------------------------------------
// File: text/exec.h
// -----------------------------------------------------------------------------
//
// Executes a parsed template, following Go's text/template/exec.go step for
// step (including which node an error is reported "at"), with Prometheus's
// "missingkey=zero" option.
#ifndef VIGIL_RULES_TEMPLATE_TEXT_EXEC_H_
#define VIGIL_RULES_TEMPLATE_TEXT_EXEC_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "rules/template/text/ast.h"
#include "rules/template/text/funcs.h"
#include "rules/template/text/value.h"

namespace vigil::rules::tmpl {

// A named template parsed from another source (a template file's
// {{define}}s, or the file's body under its base name): its body and the
// tree it came from, which errors inside it name ("template: FILE:L:C:").
struct TemplateRef {
  const Node* root = nullptr;  // kList
  const TemplateTree* source = nullptr;
};
// Go's set of associated templates, by name.
using TemplateLibrary = std::map<std::string, TemplateRef, std::less<>>;

struct ExecOptions {
  // Consulted by {{template "name"}} after the executed tree's own
  // {{define}}s (which, as in Go, replace the library's of the same name).
  const TemplateLibrary* library = nullptr;
  // html/template's escaping of printed values in HTML text context
  // (&'<>"+ and NUL); template.HTML values pass unescaped. An
  // approximation: Go escapes by context (attributes, URLs, scripts).
  bool escape_html = false;
};

// Runs `tree` with `dot` as "." and "$". InvalidArgument with Go's message
// ("template: NAME:LINE:COL: executing \"NAME\" at <NODE>: ...") on error.
absl::StatusOr<std::string> ExecuteTemplate(const TemplateTree& tree,
                                            const Value& dot,
                                            const FuncEnv& env,
                                            const ExecOptions& options = {});

// html/template's escaping of one printed value in HTML text.
std::string HtmlEscapeText(std::string_view s);

class Executor {
 public:
  Executor(const TemplateTree& tree, const FuncEnv& env,
           const ExecOptions& options = {})
      : tree_(tree), env_(env), options_(options), source_(&tree) {}
  absl::StatusOr<std::string> Run(const Value& dot);

 private:
  using Args = std::vector<NodePtr>;
  // Execution budget (not in Go): walked nodes and output size. A quarter
  // million steps is ~0.1 s, a range over tens of thousands of query
  // results; ten million took seconds per execution (~13 s under ASan) for
  // `{{ range 12200000122 }}{{ $.Value }}{{ end }}`.
  static constexpr int64_t kMaxSteps = 250'000;
  static constexpr size_t kMaxOutputBytes = 16 << 20;
  enum class Flow { kNormal, kBreak, kContinue };

  bool Errorf(const std::string& msg);  // always returns false
  void At(const Node* n) { node_ = n; }

  bool Walk(const Value& dot, const Node& node);
  bool WalkIfOrWith(bool is_with, const Value& dot, const Node& n);
  bool WalkRange(const Value& dot, const Node& r);
  bool RangeIteration(const Node& r, size_t mark, const Value& index,
                      const Value& elem, bool* stop);
  bool WalkTemplate(const Value& dot, const Node& t);

  bool EvalPipeline(const Value& dot, const Node* pipe, Value* out);
  bool EvalCommand(const Value& dot, const Node& cmd, const Value* final,
                   Value* out);
  bool NotAFunction(const Args* args, const Value* final);
  bool IdealConstant(const Node& n, Value* out);
  bool EvalFieldNode(const Value& dot, const Node& field, const Args* args,
                     const Value* final, Value* out);
  bool EvalChainNode(const Value& dot, const Node& chain, const Args* args,
                     const Value* final, Value* out);
  bool EvalVariableNode(const Value& dot, const Node& var, const Args* args,
                        const Value* final, Value* out);
  bool EvalFieldChain(const Value& dot, Value receiver, const Node& node,
                      const std::vector<std::string>& ident, size_t first,
                      const Args* args, const Value* final, Value* out);
  bool EvalField(const Value& dot, const std::string& name, const Node& node,
                 const Args* args, const Value* final, const Value& receiver,
                 Value* out);
  bool EvalFunction(const Value& dot, const Node& ident, const Node& cmd,
                    const Args* args, const Value* final, Value* out);
  bool EvalCall(const Value& dot, const FuncDef& fn, bool builtin,
                const Node& node, const std::string& name, const Args* args,
                const Value* final, const Value* receiver, Value* out);
  bool EvalCallArgs(const Value& dot, const FuncDef& fn, const Args* args,
                    const Value* final, size_t num_fixed,
                    std::vector<Value>* argv);
  bool EvalAndOr(const Value& dot, const std::string& name, const Args* args,
                 const Value* final, Value* out);
  bool ValidateType(const Value& v, ParamType t, Value* out);
  bool EvalArg(const Value& dot, ParamType t, const Node& n, Value* out);
  bool EvalEmptyInterface(const Value& dot, const Node& n, Value* out);

  bool VarValue(const std::string& name, Value* out);
  bool SetVar(const std::string& name, const Value& v);

  const TemplateTree& tree_;
  const FuncEnv& env_;
  const ExecOptions options_;
  const TemplateTree* source_;  // the tree the running template came from
  std::string name_;  // template being executed (changes in {{template}})
  std::string out_;
  const Node* node_ = nullptr;
  std::vector<std::pair<std::string, Value>> vars_;
  Flow flow_ = Flow::kNormal;
  int depth_ = 0;
  int64_t steps_ = 0;
  std::string error_;
};

}  // namespace vigil::rules::tmpl

#endif  // VIGIL_RULES_TEMPLATE_TEXT_EXEC_H_
