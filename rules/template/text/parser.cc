#include "rules/template/text/parser.h"

#include <utility>

#include "absl/status/status.h"
#include "core/go/strconv.h"
#include "fmt/format.h"
#include "rules/template/text/number.h"
#include "rules/template/text/unicode.h"

namespace vigil::rules::tmpl {

namespace {

// Splits "$x.a.b" / ".a.b" into identifiers as Go's newVariable/newField do.
std::vector<std::string> SplitIdents(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    out.emplace_back(
        s.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return out;
}

bool IsOperandStart(ItemType t) {
  switch (t) {
    case ItemType::kBool:
    case ItemType::kCharConstant:
    case ItemType::kComplex:
    case ItemType::kDot:
    case ItemType::kField:
    case ItemType::kIdentifier:
    case ItemType::kNumber:
    case ItemType::kNil:
    case ItemType::kRawString:
    case ItemType::kString:
    case ItemType::kVariable:
    case ItemType::kLeftParen:
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<TemplateTree>> ParseTemplate(
    std::string_view name, std::string_view text,
    const HasFunction& has_function) {
  auto tree = std::make_unique<TemplateTree>();
  tree->name = std::string(name);
  tree->text = std::string(text);
  Parser p(tree->name, tree->text, has_function, tree.get());
  if (!p.Run()) return absl::InvalidArgumentError(p.error());
  return tree;
}

Parser::Parser(std::string_view name, std::string_view text,
               const HasFunction& has_function, TemplateTree* tree)
    : name_(name),
      text_(text),
      has_function_(has_function),
      tree_(tree),
      lexer_(text) {}

void Parser::Errorf(const std::string& msg) {
  if (!ok()) return;  // keep the first error
  error_ = fmt::format("template: {}:{}: {}", name_, token_[0].line, msg);
}

void Parser::Unexpected(const Item& token, std::string_view context) {
  if (token.type == ItemType::kError) {
    std::string extra;
    if (action_line_ != 0 && action_line_ != token.line) {
      extra = fmt::format(" in action started at {}:{}", name_, action_line_);
      if (token.error.ends_with(" action")) extra = extra.substr(10);
    }
    Errorf(token.String() + extra);
    return;
  }
  Errorf(fmt::format("unexpected {} in {}", token.String(), context));
}

Item& Parser::Next() {
  if (peek_count_ > 0) {
    --peek_count_;
  } else {
    token_[0] = lexer_.Next();
  }
  return token_[peek_count_];
}

void Parser::Backup2(Item t1) {
  token_[1] = std::move(t1);
  peek_count_ = 2;
}

void Parser::Backup3(Item t2, Item t1) {
  token_[1] = std::move(t1);
  token_[2] = std::move(t2);
  peek_count_ = 3;
}

Item& Parser::Peek() {
  if (peek_count_ > 0) return token_[peek_count_ - 1];
  peek_count_ = 1;
  token_[0] = lexer_.Next();
  return token_[0];
}

Item Parser::NextNonSpace() {
  while (true) {
    Item& t = Next();
    if (t.type != ItemType::kSpace) return t;
  }
}

Item Parser::PeekNonSpace() {
  Item t = NextNonSpace();
  Backup();
  return t;
}

bool Parser::Expect(ItemType type, std::string_view context, Item* out) {
  *out = NextNonSpace();
  if (out->type != type) {
    Unexpected(*out, context);
    return false;
  }
  return true;
}

bool Parser::Run() {
  vars_ = {"$"};
  tree_->root = NewNode(NodeType::kList, Peek().pos);
  while (ok() && Peek().type != ItemType::kEOF) {
    if (Peek().type == ItemType::kLeftDelim) {
      Item delim = Next();
      if (NextNonSpace().type == ItemType::kDefine) {
        ParseDefinition();
        continue;
      }
      Backup2(std::move(delim));
    }
    NodePtr n = TextOrAction();
    if (!ok()) break;
    if (n->type == NodeType::kEnd || n->type == NodeType::kElse) {
      Errorf("unexpected " + n->String());
      break;
    }
    tree_->root->args.push_back(std::move(n));
  }
  return ok();
}

NodePtr Parser::ItemList(NodePtr* end) {
  NodePtr list = NewNode(NodeType::kList, PeekNonSpace().pos);
  while (PeekNonSpace().type != ItemType::kEOF) {
    NodePtr n = TextOrAction();
    if (!ok()) return nullptr;
    if (n->type == NodeType::kEnd || n->type == NodeType::kElse) {
      *end = std::move(n);
      return list;
    }
    list->args.push_back(std::move(n));
  }
  Errorf("unexpected EOF");
  return nullptr;
}

NodePtr Parser::TextOrAction() {
  Item token = NextNonSpace();
  switch (token.type) {
    case ItemType::kText: {
      NodePtr n = NewNode(NodeType::kText, token.pos);
      n->text = std::string(token.val);
      return n;
    }
    case ItemType::kLeftDelim: {
      action_line_ = token.line;
      NodePtr n = Action();
      action_line_ = 0;
      return n;
    }
    default:
      Unexpected(token, "input");
      return nullptr;
  }
}

NodePtr Parser::Action() {
  Item token = NextNonSpace();
  switch (token.type) {
    case ItemType::kBlock:
      return Block();
    case ItemType::kBreak:
      return BreakOrContinue(token, true);
    case ItemType::kContinue:
      return BreakOrContinue(token, false);
    case ItemType::kElse:
      return Else();
    case ItemType::kEnd:
      return End();
    case ItemType::kIf:
      return Control(NodeType::kIf, "if");
    case ItemType::kRange:
      return Control(NodeType::kRange, "range");
    case ItemType::kTemplate:
      return TemplateCall();
    case ItemType::kWith:
      return Control(NodeType::kWith, "with");
    default:
      break;
  }
  Backup();
  const Item& first = Peek();
  NodePtr action = NewNode(NodeType::kAction, first.pos, first.line);
  action->node = Pipeline("command", ItemType::kRightDelim);
  if (!ok()) return nullptr;
  return action;
}

bool Parser::PipelineDecls(std::string_view context, Node* pipe) {
  while (true) {
    Item v = PeekNonSpace();
    if (v.type != ItemType::kVariable) return true;
    Next();
    Item after_var = Peek();
    Item next = PeekNonSpace();
    if (next.type == ItemType::kAssign || next.type == ItemType::kDeclare) {
      pipe->is_assign = next.type == ItemType::kAssign;
      NextNonSpace();
      NodePtr var = NewNode(NodeType::kVariable, v.pos);
      var->idents = SplitIdents(v.val);
      pipe->decl.push_back(std::move(var));
      vars_.emplace_back(v.val);
      return true;
    }
    if (next.type == ItemType::kChar && next.val == ",") {
      NextNonSpace();
      NodePtr var = NewNode(NodeType::kVariable, v.pos);
      var->idents = SplitIdents(v.val);
      pipe->decl.push_back(std::move(var));
      vars_.emplace_back(v.val);
      if (context == "range" && pipe->decl.size() < 2) {
        ItemType t = PeekNonSpace().type;
        if (t == ItemType::kVariable || t == ItemType::kRightDelim ||
            t == ItemType::kRightParen) {
          continue;  // the second variable of a range
        }
        Errorf("range can only initialize variables");
        return false;
      }
      Errorf(fmt::format("too many declarations in {}", context));
      return false;
    }
    if (after_var.type == ItemType::kSpace) {
      Backup3(std::move(v), std::move(after_var));
    } else {
      Backup2(std::move(v));
    }
    return true;
  }
}

NodePtr Parser::Pipeline(std::string_view context, ItemType end) {
  const Item& first = PeekNonSpace();
  NodePtr pipe = NewNode(NodeType::kPipe, first.pos, first.line);
  if (!PipelineDecls(context, pipe.get())) return nullptr;
  while (true) {
    Item token = NextNonSpace();
    if (token.type == end) {
      CheckPipeline(*pipe, context);
      if (!ok()) return nullptr;
      return pipe;
    }
    if (!IsOperandStart(token.type)) {
      Unexpected(token, context);
      return nullptr;
    }
    Backup();
    NodePtr cmd = Command();
    if (!ok()) return nullptr;
    pipe->cmds.push_back(std::move(cmd));
  }
}

void Parser::CheckPipeline(const Node& pipe, std::string_view context) {
  if (pipe.cmds.empty())
    return Errorf(fmt::format("missing value for {}", context));
  for (size_t i = 1; i < pipe.cmds.size(); ++i) {
    switch (pipe.cmds[i]->args[0]->type) {
      case NodeType::kBool:
      case NodeType::kDot:
      case NodeType::kNil:
      case NodeType::kNumber:
      case NodeType::kString:
        return Errorf(
            fmt::format("non executable command in pipeline stage {}", i + 1));
      default:
        break;
    }
  }
}

NodePtr Parser::Command() {
  NodePtr cmd = NewNode(NodeType::kCommand, PeekNonSpace().pos);
  while (true) {
    PeekNonSpace();
    NodePtr operand = Operand();
    if (!ok()) return nullptr;
    if (operand != nullptr) cmd->args.push_back(std::move(operand));
    Item& token = Next();
    if (token.type == ItemType::kSpace) continue;
    if (token.type == ItemType::kRightDelim ||
        token.type == ItemType::kRightParen) {
      Backup();
    } else if (token.type != ItemType::kPipe) {
      Unexpected(token, "operand");
      return nullptr;
    }
    break;
  }
  if (cmd->args.empty()) {
    Errorf("empty command");
    return nullptr;
  }
  return cmd;
}

NodePtr Parser::Operand() {
  NodePtr node = Term();
  if (node == nullptr || Peek().type != ItemType::kField) return node;
  NodePtr chain = NewNode(NodeType::kChain, Peek().pos);
  while (Peek().type == ItemType::kField) {
    chain->idents.emplace_back(Next().val.substr(1));
  }
  switch (node->type) {
    case NodeType::kField:
    case NodeType::kVariable: {
      node->idents.insert(node->idents.end(), chain->idents.begin(),
                          chain->idents.end());
      node->pos = chain->pos;
      return node;
    }
    case NodeType::kBool:
    case NodeType::kString:
    case NodeType::kNumber:
    case NodeType::kNil:
    case NodeType::kDot:
      Errorf("unexpected . after term " + go::Quote(node->String()));
      return nullptr;
    default:
      chain->node = std::move(node);
      return chain;
  }
}

NodePtr Parser::Term() {
  Item token = NextNonSpace();
  switch (token.type) {
    case ItemType::kIdentifier: {
      if (!has_function_(token.val)) {
        Errorf(fmt::format("function {} not defined", go::Quote(token.val)));
        return nullptr;
      }
      NodePtr n = NewNode(NodeType::kIdentifier, token.pos);
      n->text = std::string(token.val);
      return n;
    }
    case ItemType::kDot:
      return NewNode(NodeType::kDot, token.pos);
    case ItemType::kNil:
      return NewNode(NodeType::kNil, token.pos);
    case ItemType::kVariable:
      return UseVar(token.pos, token.val);
    case ItemType::kField: {
      NodePtr n = NewNode(NodeType::kField, token.pos);
      n->idents = SplitIdents(token.val.substr(1));
      return n;
    }
    case ItemType::kBool: {
      NodePtr n = NewNode(NodeType::kBool, token.pos);
      n->bool_val = token.val == "true";
      return n;
    }
    case ItemType::kCharConstant:
    case ItemType::kComplex:
    case ItemType::kNumber:
      return Number(token);
    case ItemType::kLeftParen: {
      if (stack_depth_ >= kMaxStackDepth) {
        Errorf("max expression depth exceeded");
        return nullptr;
      }
      ++stack_depth_;
      NodePtr pipe = Pipeline("parenthesized pipeline", ItemType::kRightParen);
      --stack_depth_;
      return pipe;
    }
    case ItemType::kString:
    case ItemType::kRawString: {
      std::optional<std::string> s = go::Unquote(token.val);
      if (!s) {
        Errorf("invalid syntax");
        return nullptr;
      }
      NodePtr n = NewNode(NodeType::kString, token.pos);
      n->text = std::string(token.val);
      n->str = std::move(*s);
      return n;
    }
    default:
      Backup();
      return nullptr;
  }
}

NodePtr Parser::Number(const Item& token) {
  NodePtr n = NewNode(NodeType::kNumber, token.pos);
  n->text = std::string(token.val);
  std::string err =
      ParseNumberLiteral(token.val, token.type == ItemType::kCharConstant,
                         token.type == ItemType::kComplex, n.get());
  if (!err.empty()) {
    Errorf(err);
    return nullptr;
  }
  return n;
}

NodePtr Parser::UseVar(size_t pos, std::string_view name) {
  NodePtr v = NewNode(NodeType::kVariable, pos);
  v->idents = SplitIdents(name);
  for (const std::string& var : vars_) {
    if (var == v->idents[0]) return v;
  }
  Errorf(fmt::format("undefined variable {}", go::Quote(v->idents[0])));
  return nullptr;
}

}  // namespace vigil::rules::tmpl
