#include "rules/template/text/ast.h"

#include "core/go/strconv.h"

namespace vigil::rules::tmpl {

namespace {

void WriteTo(const Node& n, std::string* sb);

void WriteBranch(const Node& n, const char* name, std::string* sb) {
  *sb += "{{";
  *sb += name;
  *sb += ' ';
  WriteTo(*n.node, sb);
  *sb += "}}";
  WriteTo(*n.list, sb);
  if (n.else_list != nullptr) {
    *sb += "{{else}}";
    WriteTo(*n.else_list, sb);
  }
  *sb += "{{end}}";
}

void WritePipe(const Node& n, std::string* sb) {
  for (size_t i = 0; i < n.decl.size(); ++i) {
    if (i > 0) *sb += ", ";
    WriteTo(*n.decl[i], sb);
  }
  if (!n.decl.empty()) *sb += n.is_assign ? " = " : " := ";
  for (size_t i = 0; i < n.cmds.size(); ++i) {
    if (i > 0) *sb += " | ";
    WriteTo(*n.cmds[i], sb);
  }
}

void WriteMaybeParens(const Node& n, std::string* sb) {
  if (n.type == NodeType::kPipe) {
    *sb += '(';
    WritePipe(n, sb);
    *sb += ')';
  } else {
    WriteTo(n, sb);
  }
}

void WriteTo(const Node& n, std::string* sb) {
  switch (n.type) {
    case NodeType::kText:
      *sb += n.text;
      break;
    case NodeType::kAction:
      *sb += "{{";
      WriteTo(*n.node, sb);
      *sb += "}}";
      break;
    case NodeType::kBool:
      *sb += n.bool_val ? "true" : "false";
      break;
    case NodeType::kChain:
      WriteMaybeParens(*n.node, sb);
      for (const std::string& f : n.idents) *sb += "." + f;
      break;
    case NodeType::kCommand:
      for (size_t i = 0; i < n.args.size(); ++i) {
        if (i > 0) *sb += ' ';
        WriteMaybeParens(*n.args[i], sb);
      }
      break;
    case NodeType::kDot:
      *sb += '.';
      break;
    case NodeType::kField:
      for (const std::string& f : n.idents) *sb += "." + f;
      break;
    case NodeType::kIdentifier:
    case NodeType::kNumber:
    case NodeType::kString:
      *sb += n.text;
      break;
    case NodeType::kIf:
      WriteBranch(n, "if", sb);
      break;
    case NodeType::kRange:
      WriteBranch(n, "range", sb);
      break;
    case NodeType::kWith:
      WriteBranch(n, "with", sb);
      break;
    case NodeType::kList:
      for (const NodePtr& c : n.args) WriteTo(*c, sb);
      break;
    case NodeType::kNil:
      *sb += "nil";
      break;
    case NodeType::kPipe:
      WritePipe(n, sb);
      break;
    case NodeType::kTemplate:
      *sb += "{{template " + go::Quote(n.text);
      if (n.node != nullptr) {
        *sb += ' ';
        WriteTo(*n.node, sb);
      }
      *sb += "}}";
      break;
    case NodeType::kVariable:
      for (size_t i = 0; i < n.idents.size(); ++i) {
        if (i > 0) *sb += '.';
        *sb += n.idents[i];
      }
      break;
    case NodeType::kBreak:
      *sb += "{{break}}";
      break;
    case NodeType::kContinue:
      *sb += "{{continue}}";
      break;
    case NodeType::kElse:
      *sb += "{{else}}";
      break;
    case NodeType::kEnd:
      *sb += "{{end}}";
      break;
  }
}

}  // namespace

std::string Node::String() const {
  std::string sb;
  WriteTo(*this, &sb);
  return sb;
}

}  // namespace vigil::rules::tmpl
