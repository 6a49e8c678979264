// -----------------------------------------------------------------------------
// File: text/parser.h
// -----------------------------------------------------------------------------
//
// Recursive-descent parser for Go text/template syntax. It follows the
// grammar and three-token look-ahead of Go's text/template/parse, so a bad
// template is rejected with the same message Go (and so promtool) prints:
//
//   template: __alert_X:1: function "foo" not defined
//   template: __alert_X:1: unexpected "}" in operand
//
// Functions are checked at parse time against `has_function`, as Go does.
#ifndef VIGIL_RULES_TEMPLATE_TEXT_PARSER_H_
#define VIGIL_RULES_TEMPLATE_TEXT_PARSER_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "rules/template/text/ast.h"
#include "rules/template/text/lexer.h"

namespace vigil::rules::tmpl {

using HasFunction = std::function<bool(std::string_view)>;

// Parses `text` as the template `name`. InvalidArgument with Go's message
// ("template: NAME:LINE: ...") on error.
absl::StatusOr<std::unique_ptr<TemplateTree>> ParseTemplate(
    std::string_view name, std::string_view text,
    const HasFunction& has_function);

class Parser {
 public:
  Parser(std::string_view name, std::string_view text,
         const HasFunction& has_function, TemplateTree* tree);
  // Parses everything; false (and error() set) on failure.
  bool Run();
  const std::string& error() const { return error_; }

 private:
  bool ok() const { return error_.empty(); }
  void Errorf(const std::string& msg);
  void Unexpected(const Item& token, std::string_view context);

  Item& Next();
  void Backup() { ++peek_count_; }
  void Backup2(Item t1);
  void Backup3(Item t2, Item t1);
  Item& Peek();
  Item NextNonSpace();
  Item PeekNonSpace();
  bool Expect(ItemType type, std::string_view context, Item* out);

  void ParseDefinition();
  NodePtr ItemList(NodePtr* end);
  NodePtr TextOrAction();
  NodePtr Action();
  NodePtr BreakOrContinue(const Item& token, bool is_break);
  NodePtr Pipeline(std::string_view context, ItemType end);
  bool PipelineDecls(std::string_view context, Node* pipe);
  void CheckPipeline(const Node& pipe, std::string_view context);
  NodePtr Control(NodeType type, std::string_view context);
  NodePtr ControlBody(NodeType type, std::string_view context);
  NodePtr Else();
  NodePtr End();
  NodePtr Block();
  NodePtr TemplateCall();
  bool TemplateName(const Item& token, std::string_view context,
                    std::string* name);
  NodePtr Command();
  NodePtr Operand();
  NodePtr Term();
  NodePtr Number(const Item& token);
  NodePtr UseVar(size_t pos, std::string_view name);
  void AddDefinition(const std::string& name, NodePtr list);

  // Go allows 10000 nested parentheses; its stacks grow and ours do not, so
  // nesting of parentheses and of if/range/with is capped lower.
  static constexpr int kMaxStackDepth = 1000;

  std::string name_;
  std::string_view text_;
  const HasFunction& has_function_;
  TemplateTree* tree_;
  Lexer lexer_;
  Item token_[3];
  int peek_count_ = 0;
  std::vector<std::string> vars_;
  int action_line_ = 0;
  int range_depth_ = 0;
  int stack_depth_ = 0;
  std::string error_;
};

}  // namespace vigil::rules::tmpl

#endif  // VIGIL_RULES_TEMPLATE_TEXT_PARSER_H_
