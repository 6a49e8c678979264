// Control structures and template definitions: if/range/with/else/end,
// break/continue, define/template/block (Go's parse.go *Control functions).
#include <utility>

#include "core/go/strconv.h"
#include "fmt/format.h"
#include "rules/template/text/parser.h"
#include "rules/template/text/unicode.h"

namespace vigil::rules::tmpl {

namespace {

// Go's parse.IsEmptyTree for a list: only white space text (and comments).
bool IsEmptyList(const Node& list) {
  for (const NodePtr& n : list.args) {
    if (n->type != NodeType::kText ||
        n->text.find_first_not_of(" \t\r\n\v\f") != std::string::npos) {
      return false;
    }
  }
  return true;
}

}  // namespace

// Go's Tree.add: a definition replaces an empty one; two non-empty ones clash.
void Parser::AddDefinition(const std::string& name, NodePtr list) {
  auto it = tree_->defined.find(name);
  if (it == tree_->defined.end() || IsEmptyList(*it->second)) {
    tree_->defined[name] = list.get();
    tree_->owned.push_back(std::move(list));
    return;
  }
  if (!IsEmptyList(*list)) {
    Errorf("template: multiple definition of template " + go::Quote(name));
  }
}

void Parser::ParseDefinition() {
  constexpr std::string_view kContext = "define clause";
  Item tok = NextNonSpace();
  if (tok.type != ItemType::kString && tok.type != ItemType::kRawString) {
    return Unexpected(tok, kContext);
  }
  std::optional<std::string> name = go::Unquote(tok.val);
  if (!name) return Errorf("invalid syntax");
  Item delim;
  if (!Expect(ItemType::kRightDelim, kContext, &delim)) return;
  std::vector<std::string> saved_vars = std::exchange(vars_, {"$"});
  NodePtr end;
  NodePtr list = ItemList(&end);
  vars_ = std::move(saved_vars);
  if (!ok()) return;
  if (end->type != NodeType::kEnd) {
    return Errorf(fmt::format("unexpected {} in {}", end->String(), kContext));
  }
  AddDefinition(*name, std::move(list));
}

NodePtr Parser::BreakOrContinue(const Item& token, bool is_break) {
  const char* what = is_break ? "{{break}}" : "{{continue}}";
  Item next = NextNonSpace();
  if (next.type != ItemType::kRightDelim) {
    Unexpected(next, what);
    return nullptr;
  }
  if (range_depth_ == 0) {
    Errorf(fmt::format("{} outside {{{{range}}}}", what));
    return nullptr;
  }
  return NewNode(is_break ? NodeType::kBreak : NodeType::kContinue, token.pos,
                 token.line);
}

// Declarations at the start of a pipeline: "$x :=", "$x =", "$i, $v :=".
// Returns false on error.
NodePtr Parser::Control(NodeType type, std::string_view context) {
  if (stack_depth_ >= kMaxStackDepth) {
    Errorf("max expression depth exceeded");
    return nullptr;
  }
  ++stack_depth_;
  NodePtr n = ControlBody(type, context);
  --stack_depth_;
  return n;
}

NodePtr Parser::ControlBody(NodeType type, std::string_view context) {
  size_t mark = vars_.size();
  NodePtr n = NewNode(type, 0);
  n->node = Pipeline(context, ItemType::kRightDelim);
  if (!ok()) return nullptr;
  n->pos = n->node->pos;
  n->line = n->node->line;
  if (type == NodeType::kRange) ++range_depth_;
  NodePtr next;
  n->list = ItemList(&next);
  if (type == NodeType::kRange) --range_depth_;
  if (!ok()) return nullptr;
  if (next->type == NodeType::kElse) {
    if ((type == NodeType::kIf && Peek().type == ItemType::kIf) ||
        (type == NodeType::kWith && Peek().type == ItemType::kWith)) {
      Next();
      n->else_list = NewNode(NodeType::kList, next->pos);
      NodePtr inner = Control(type, context);
      if (!ok()) return nullptr;
      n->else_list->args.push_back(std::move(inner));
    } else {
      n->else_list = ItemList(&next);
      if (!ok()) return nullptr;
      if (next->type != NodeType::kEnd) {
        Errorf("expected end; found " + next->String());
        return nullptr;
      }
    }
  }
  vars_.resize(mark);
  return n;
}

NodePtr Parser::Else() {
  Item peek = PeekNonSpace();
  if (peek.type == ItemType::kIf || peek.type == ItemType::kWith) {
    return NewNode(NodeType::kElse, peek.pos, peek.line);
  }
  Item token;
  if (!Expect(ItemType::kRightDelim, "else", &token)) return nullptr;
  return NewNode(NodeType::kElse, token.pos, token.line);
}

NodePtr Parser::End() {
  Item token;
  if (!Expect(ItemType::kRightDelim, "end", &token)) return nullptr;
  return NewNode(NodeType::kEnd, token.pos);
}

bool Parser::TemplateName(const Item& token, std::string_view context,
                          std::string* name) {
  if (token.type != ItemType::kString && token.type != ItemType::kRawString) {
    Unexpected(token, context);
    return false;
  }
  std::optional<std::string> s = go::Unquote(token.val);
  if (!s) {
    Errorf("invalid syntax");
    return false;
  }
  *name = std::move(*s);
  return true;
}

NodePtr Parser::Block() {
  constexpr std::string_view kContext = "block clause";
  Item token = NextNonSpace();
  std::string name;
  if (!TemplateName(token, kContext, &name)) return nullptr;
  NodePtr pipe = Pipeline(kContext, ItemType::kRightDelim);
  if (!ok()) return nullptr;
  std::vector<std::string> saved_vars = std::exchange(vars_, {"$"});
  int saved_depth = std::exchange(range_depth_, 0);
  NodePtr end;
  NodePtr list = ItemList(&end);
  vars_ = std::move(saved_vars);
  range_depth_ = saved_depth;
  if (!ok()) return nullptr;
  if (end->type != NodeType::kEnd) {
    Errorf(fmt::format("unexpected {} in {}", end->String(), kContext));
    return nullptr;
  }
  AddDefinition(name, std::move(list));
  NodePtr n = NewNode(NodeType::kTemplate, token.pos, token.line);
  n->text = name;
  n->node = std::move(pipe);
  return n;
}

NodePtr Parser::TemplateCall() {
  constexpr std::string_view kContext = "template clause";
  Item token = NextNonSpace();
  std::string name;
  if (!TemplateName(token, kContext, &name)) return nullptr;
  NodePtr n = NewNode(NodeType::kTemplate, token.pos, token.line);
  n->text = name;
  if (NextNonSpace().type != ItemType::kRightDelim) {
    Backup();
    n->node = Pipeline(kContext, ItemType::kRightDelim);
    if (!ok()) return nullptr;
  }
  return n;
}

}  // namespace vigil::rules::tmpl
