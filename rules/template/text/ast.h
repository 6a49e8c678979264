// -----------------------------------------------------------------------------
// File: text/ast.h
// -----------------------------------------------------------------------------
//
// Parse tree of a template, shaped like Go's text/template/parse nodes so
// that execution errors can name the same node ("at <humanize \"x\">") at the
// same byte position as Go does.
#ifndef VIGIL_RULES_TEMPLATE_TEXT_AST_H_
#define VIGIL_RULES_TEMPLATE_TEXT_AST_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace vigil::rules::tmpl {

enum class NodeType {
  kText,
  kAction,
  kBool,
  kChain,
  kCommand,
  kDot,
  kField,
  kIdentifier,
  kIf,
  kList,
  kNil,
  kNumber,
  kPipe,
  kRange,
  kString,
  kTemplate,
  kVariable,
  kWith,
  kBreak,
  kContinue,
  kElse,
  kEnd,  // parser-internal markers, never in a finished tree
};

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Node {
  NodeType type;
  size_t pos = 0;  // byte offset in the template text
  int line = 0;

  std::string text;                 // kText; kIdentifier name; kNumber and
                                    // kString source text; kTemplate name
  std::string str;                  // kString: unquoted value
  std::vector<std::string> idents;  // kField / kVariable / kChain fields
  bool bool_val = false;            // kBool

  // kNumber: which interpretations hold, as in Go's NumberNode.
  bool is_int = false, is_uint = false, is_float = false;
  int64_t int_val = 0;
  uint64_t uint_val = 0;
  double float_val = 0;

  // kPipe
  bool is_assign = false;
  std::vector<NodePtr> decl;  // kVariable nodes
  std::vector<NodePtr> cmds;  // kCommand nodes

  std::vector<NodePtr> args;  // kCommand operands; kList items
  NodePtr node;               // kChain: the term; kAction/kIf/...: the pipe
  NodePtr list;               // kIf / kRange / kWith
  NodePtr else_list;          // kIf / kRange / kWith, may be null

  explicit Node(NodeType t, size_t p = 0) : type(t), pos(p) {}

  // Go's Node.String(): the node re-printed in template syntax.
  std::string String() const;
};

inline NodePtr NewNode(NodeType t, size_t pos, int line = 0) {
  auto n = std::make_unique<Node>(t, pos);
  n->line = line;
  return n;
}

// A parsed template plus the {{define}}d templates it carries.
struct TemplateTree {
  std::string name;
  std::string text;  // the full source, for error positions
  NodePtr root;      // kList
  std::map<std::string, const Node*> defined;  // name -> kList (owned below)
  std::vector<NodePtr> owned;
};

}  // namespace vigil::rules::tmpl

#endif  // VIGIL_RULES_TEMPLATE_TEXT_AST_H_
