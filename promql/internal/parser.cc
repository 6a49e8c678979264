#include "promql/internal/parser.h"

#include <utility>

#include "core/go/strconv.h"
#include "fmt/format.h"
#include "promql/internal/text.h"

namespace vigil::promql::internal {
namespace {

constexpr int kPowPrec = 6;
constexpr int kMaxDepth = 10000;

struct DepthGuard {
  explicit DepthGuard(int* d) : depth(d) { ++*depth; }
  ~DepthGuard() { --*depth; }
  int* depth;
};

// Binding power of a binary operator token, -1 if not one. Higher binds
// tighter; only `^` is right-associative.
int BinaryPrec(Tok t) {
  switch (t) {
    case Tok::kLor:
      return 1;
    case Tok::kLand:
    case Tok::kLunless:
      return 2;
    case Tok::kEqlc:
    case Tok::kNeq:
    case Tok::kLte:
    case Tok::kLss:
    case Tok::kGte:
    case Tok::kGtr:
    case Tok::kTrimUpper:
    case Tok::kTrimLower:
      return 3;
    case Tok::kAdd:
    case Tok::kSub:
      return 4;
    case Tok::kMul:
    case Tok::kDiv:
    case Tok::kMod:
    case Tok::kAtan2:
      return 5;
    case Tok::kPow:
      return kPowPrec;
    default:
      return -1;
  }
}

BinOp ToBinOp(Tok t) {
  switch (t) {
    case Tok::kAdd:
      return BinOp::kAdd;
    case Tok::kSub:
      return BinOp::kSub;
    case Tok::kMul:
      return BinOp::kMul;
    case Tok::kDiv:
      return BinOp::kDiv;
    case Tok::kMod:
      return BinOp::kMod;
    case Tok::kPow:
      return BinOp::kPow;
    case Tok::kAtan2:
      return BinOp::kAtan2;
    case Tok::kEqlc:
      return BinOp::kEql;
    case Tok::kNeq:
      return BinOp::kNeq;
    case Tok::kGtr:
      return BinOp::kGtr;
    case Tok::kLss:
      return BinOp::kLss;
    case Tok::kGte:
      return BinOp::kGte;
    case Tok::kLte:
      return BinOp::kLte;
    case Tok::kLand:
      return BinOp::kAnd;
    case Tok::kLor:
      return BinOp::kOr;
    case Tok::kLunless:
      return BinOp::kUnless;
    case Tok::kTrimUpper:
      return BinOp::kTrimUpper;
    default:
      return BinOp::kTrimLower;
  }
}

AggOp ToAggOp(Tok t) {
  switch (t) {
    case Tok::kSum:
      return AggOp::kSum;
    case Tok::kAvg:
      return AggOp::kAvg;
    case Tok::kCount:
      return AggOp::kCount;
    case Tok::kMin:
      return AggOp::kMin;
    case Tok::kMax:
      return AggOp::kMax;
    case Tok::kGroup:
      return AggOp::kGroup;
    case Tok::kStddev:
      return AggOp::kStddev;
    case Tok::kStdvar:
      return AggOp::kStdvar;
    case Tok::kTopk:
      return AggOp::kTopK;
    case Tok::kBottomk:
      return AggOp::kBottomK;
    case Tok::kQuantile:
      return AggOp::kQuantile;
    case Tok::kCountValues:
      return AggOp::kCountValues;
    case Tok::kLimitk:
      return AggOp::kLimitK;
    default:
      return AggOp::kLimitRatio;
  }
}

// Tokens that may name a function: identifiers and the preprocessor words.
bool IsFunctionNameTok(Tok t) {
  return t == Tok::kIdentifier || t == Tok::kStart || t == Tok::kEnd ||
         t == Tok::kStep || t == Tok::kRange || t == Tok::kMaxOf ||
         t == Tok::kMinOf;
}

PosRange Merge(const Expr& a, const Expr& b) {
  return {a.pos.start, b.pos.end};
}

}  // namespace

absl::Status MakeParseError(std::string_view query, const ParseError& e) {
  return absl::InvalidArgumentError(fmt::format(
      "{}: parse error: {}", FormatPosition(query, e.pos.start), e.msg));
}

const Token& Parser::Peek(int n) {
  while (la_count_ <= n) {
    la_[la_count_++] = lex_.Next();
    const Token& t = la_[la_count_ - 1];
    if (t.type == Tok::kError) {
      Fail({t.pos, static_cast<int>(in_.size())}, std::string(t.val));
    }
  }
  return la_[n];
}

Token Parser::Next() {
  Peek();
  Token t = la_[0];
  la_[0] = la_[1];
  --la_count_;
  switch (t.type) {
    case Tok::kRightBrace:
    case Tok::kRightParen:
    case Tok::kRightBracket:
    case Tok::kDuration:
    case Tok::kNumber:
      last_closing_ = t.end();
      break;
    default:
      break;
  }
  return t;
}

bool Parser::Fail(PosRange pos, std::string msg) {
  if (!err_) err_ = ParseError{pos, std::move(msg)};
  return false;
}

void Parser::Unexpected(std::string_view context, std::string_view expected) {
  const Token& t = Peek();
  if (t.type == Tok::kError || failed()) return;
  std::string msg = "unexpected " + DescribeToken(t);
  if (context.empty() && agg_depth_ > 0) context = "aggregation";
  if (!context.empty()) msg += fmt::format(" in {}", context);
  if (!expected.empty()) msg += fmt::format(", expected {}", expected);
  Fail({t.pos, t.end()}, std::move(msg));
}

ExprPtr Parser::ParseExpression() {
  if (Peek().type == Tok::kEOF) {
    Fail({0, 0}, "no expression found in input");
    return nullptr;
  }
  ExprPtr e = ParseBinary(0);
  if (!e) return nullptr;
  if (Peek().type != Tok::kEOF) {
    Unexpected("", "");
    return nullptr;
  }
  Check(e.get());
  return failed() ? nullptr : std::move(e);
}

bool Parser::CheckDepth(int extra) {
  if (depth_ + extra <= kMaxDepth) return true;
  const Token& t = Peek();
  return Fail({t.pos, t.end()}, "expression nesting too deep");
}

ExprPtr Parser::ParseBinary(int min_prec) {
  DepthGuard guard(&depth_);
  if (!CheckDepth(0)) return nullptr;
  ExprPtr lhs = ParseUnary();
  for (int chain = 1; lhs; ++chain) {
    if (!CheckDepth(chain)) return nullptr;
    Tok t = Peek().type;
    int prec = BinaryPrec(t);
    if (prec < 0 || prec < min_prec) break;
    Next();
    auto b = std::make_unique<BinaryExpr>();
    b->op = ToBinOp(t);
    b->matching.emplace();
    bool fill = false;
    if (!ParseBinaryModifiers(b.get(), &fill)) return nullptr;
    ExprPtr rhs = ParseBinary(t == Tok::kPow ? prec : prec + 1);
    if (!rhs) return nullptr;
    b->pos = Merge(*lhs, *rhs);
    if (fill) {
      Fail(b->pos, "binop fill modifiers are experimental and not enabled");
      return nullptr;
    }
    b->lhs = std::move(lhs);
    b->rhs = std::move(rhs);
    lhs = std::move(b);
  }
  return lhs;
}

// bool, on/ignoring (...), group_left/group_right [(...)], fill*(...).
bool Parser::ParseBinaryModifiers(BinaryExpr* b, bool* fill) {
  auto& vm = *b->matching;
  if (Peek().type == Tok::kBool) {
    Next();
    b->return_bool = true;
  }
  Tok t = Peek().type;
  if (t == Tok::kOn || t == Tok::kIgnoring) {
    Next();
    vm.on = t == Tok::kOn;
    if (!ParseGroupingLabels(&vm.matching_labels)) return false;
    t = Peek().type;
    if (t == Tok::kGroupLeft || t == Tok::kGroupRight) {
      Next();
      vm.card = t == Tok::kGroupLeft ? Cardinality::kManyToOne
                                     : Cardinality::kOneToMany;
      if (Peek().type == Tok::kLeftParen && !ParseGroupingLabels(&vm.include)) {
        return false;
      }
    }
  }
  for (int i = 0; i < 2; ++i) {
    t = Peek().type;
    if (t != Tok::kFill && t != Tok::kFillLeft && t != Tok::kFillRight) break;
    Next();
    *fill = true;
    if (Peek().type != Tok::kLeftParen) {
      Unexpected("", "");
      return false;
    }
    Next();
    if (Peek().type == Tok::kAdd || Peek().type == Tok::kSub) Next();
    if (Peek().type != Tok::kNumber && Peek().type != Tok::kDuration) {
      Unexpected("", "");
      return false;
    }
    Next();
    if (Peek().type != Tok::kRightParen) {
      Unexpected("", "");
      return false;
    }
    Next();
    if (t == Tok::kFill) break;
  }
  return !failed();
}

bool Parser::ParseGroupingLabels(std::vector<std::string>* out) {
  if (Peek().type != Tok::kLeftParen) {
    Unexpected("grouping opts", "\"(\"");
    return false;
  }
  Next();
  for (;;) {
    const Token& t = Peek();
    if (t.type == Tok::kRightParen) {
      Next();
      return true;
    }
    bool is_label = t.type == Tok::kString || IsMetricIdentifierTok(t.type) ||
                    IsKeywordTok(t.type) || t.type == Tok::kAtan2;
    if (!is_label) {
      Unexpected("grouping opts", "label");
      return false;
    }
    Token tok = Next();
    std::string name(tok.val);
    if (tok.type == Tok::kString) {
      auto u = UnquoteString(tok.val);
      if (!u.ok())
        return Fail({tok.pos, tok.end()}, "invalid label name for grouping");
      name = *std::move(u);
      if (name.empty()) {
        return Fail({tok.pos + 1, tok.end()},
                    fmt::format("invalid label name for grouping: {}",
                                go::Quote(name)));
      }
    }
    out->push_back(std::move(name));
    if (Peek().type == Tok::kComma) {
      Next();
      continue;
    }
    if (Peek().type != Tok::kRightParen) {
      Unexpected("grouping opts", "\",\" or \")\"");
      return false;
    }
  }
}

ExprPtr Parser::ParseUnary() {
  Tok t = Peek().type;
  if (t != Tok::kAdd && t != Tok::kSub) return ParsePrimary();
  Token op = Next();
  // `unary_op expr %prec MUL`: the operand absorbs only `^`.
  ExprPtr operand = ParseBinary(kPowPrec);
  if (!operand) return nullptr;
  if (operand->kind == NodeKind::kNumberLiteral) {
    auto& n = operand->As<NumberLiteral>();
    if (t == Tok::kSub) n.value = -n.value;
    n.pos.start = op.pos;
    return operand;
  }
  auto u = std::make_unique<UnaryExpr>();
  u->op = t == Tok::kSub ? UnaryOp::kMinus : UnaryOp::kPlus;
  u->pos = {op.pos, operand->pos.end};
  u->expr = std::move(operand);
  return u;
}

ExprPtr Parser::ParsePrimary() {
  const Token& t = Peek();
  ExprPtr e;
  switch (t.type) {
    case Tok::kNumber:
    case Tok::kDuration:
      e = ParseNumberToken();
      break;
    case Tok::kString: {
      Token tok = Next();
      auto s = std::make_unique<StringLiteral>();
      auto u = UnquoteString(tok.val);
      if (!u.ok()) {
        Fail({tok.pos, tok.end()},
             fmt::format("error unquoting string {}: {}", go::Quote(tok.val),
                         std::string(u.status().message())));
        return nullptr;
      }
      s->value = *std::move(u);
      s->pos = {tok.pos, tok.end()};
      e = std::move(s);
      break;
    }
    case Tok::kLeftParen: {
      Token lp = Next();
      ExprPtr inner = ParseBinary(0);
      if (!inner) return nullptr;
      if (Peek().type != Tok::kRightParen) {
        Unexpected("", "");
        return nullptr;
      }
      Token rp = Next();
      auto p = std::make_unique<ParenExpr>();
      p->pos = {lp.pos, rp.end()};
      p->expr = std::move(inner);
      e = std::move(p);
      break;
    }
    case Tok::kLeftBrace:
      e = ParseVectorSelector();
      break;
    default: {
      Tok next = Peek(1).type;
      if (failed()) return nullptr;
      if (IsAggregatorTok(t.type) &&
          (next == Tok::kLeftParen || next == Tok::kBy ||
           next == Tok::kWithout)) {
        e = ParseAggregate();
      } else if (IsFunctionNameTok(t.type) && next == Tok::kLeftParen) {
        e = ParseCall();
      } else if (IsMetricIdentifierTok(t.type)) {
        e = ParseVectorSelector();
      } else {
        Unexpected("", "");
        return nullptr;
      }
    }
  }
  if (!e) return nullptr;
  return ParsePostfix(std::move(e));
}

ExprPtr Parser::ParsePostfix(ExprPtr e) {
  for (int n = 1; e; ++n) {
    if (!CheckDepth(n)) return nullptr;
    switch (Peek().type) {
      case Tok::kLeftBracket:
        e = ParseRangeOrSubquery(std::move(e));
        break;
      case Tok::kOffset:
        e = ParseOffset(std::move(e));
        break;
      case Tok::kAt:
        e = ParseAt(std::move(e));
        break;
      case Tok::kAnchored:
      case Tok::kSmoothed:
        Fail(e->pos, fmt::format("{} modifier is experimental and not enabled",
                                 Peek().type == Tok::kAnchored ? "anchored"
                                                               : "smoothed"));
        return nullptr;
      default:
        return e;
    }
  }
  return e;
}

bool Parser::ParseCallArgs(std::vector<ExprPtr>* args) {
  Next();  // '('
  if (Peek().type == Tok::kRightParen) {
    Next();
    return true;
  }
  for (;;) {
    ExprPtr arg = ParseBinary(0);
    if (!arg) return false;
    args->push_back(std::move(arg));
    if (Peek().type == Tok::kComma) {
      Token comma = Next();
      if (Peek().type == Tok::kRightParen) {
        return Fail({comma.pos, comma.end()},
                    "trailing commas not allowed in function call args");
      }
      continue;
    }
    if (Peek().type == Tok::kRightParen) {
      Next();
      return true;
    }
    Unexpected("", "");
    return false;
  }
}

ExprPtr Parser::ParseCall() {
  Token name = Next();
  auto c = std::make_unique<Call>();
  if (!ParseCallArgs(&c->args)) return nullptr;
  c->pos = {name.pos, last_closing_};
  c->func = LookupFunction(name.val);
  if (c->func == nullptr) {
    Fail({name.pos, name.end()},
         fmt::format("unknown function with name {}", go::Quote(name.val)));
    return nullptr;
  }
  if (c->func->experimental && !opts_.enable_experimental_functions) {
    Fail({name.pos, name.end()},
         fmt::format("function {} is not enabled", go::Quote(name.val)));
    return nullptr;
  }
  return c;
}

ExprPtr Parser::ParseAggregate() {
  Token op = Next();
  auto a = std::make_unique<AggregateExpr>();
  a->op = ToAggOp(op.type);
  ++agg_depth_;
  bool modifier_first = false;
  auto parse_modifier = [&] {
    a->without = Next().type == Tok::kWithout;
    return ParseGroupingLabels(&a->grouping);
  };
  if (Peek().type == Tok::kBy || Peek().type == Tok::kWithout) {
    modifier_first = true;
    if (!parse_modifier()) return nullptr;
  }
  if (Peek().type != Tok::kLeftParen) {
    Unexpected("", "");
    return nullptr;
  }
  std::vector<ExprPtr> args;
  if (!ParseCallArgs(&args)) return nullptr;
  --agg_depth_;
  if (!modifier_first &&
      (Peek().type == Tok::kBy || Peek().type == Tok::kWithout)) {
    if (!parse_modifier()) return nullptr;
  }
  a->pos = {op.pos, last_closing_};
  if (args.empty()) {
    Fail(a->pos, "no arguments for aggregate expression provided");
    return nullptr;
  }
  size_t want = 1;
  if (AggOpHasParam(a->op)) {
    bool exp = a->op == AggOp::kLimitK || a->op == AggOp::kLimitRatio;
    if (exp && !opts_.enable_experimental_functions) {
      Fail(a->pos, fmt::format("{}() is experimental and must be enabled with "
                               "--enable-feature=promql-experimental-functions",
                               AggOpString(a->op)));
      return nullptr;
    }
    want = 2;
  }
  if (args.size() != want) {
    Fail(a->pos,
         fmt::format("wrong number of arguments for aggregate expression "
                     "provided, expected {}, got {}",
                     want, args.size()));
    return nullptr;
  }
  if (want == 2) a->param = std::move(args[0]);
  a->expr = std::move(args[want - 1]);
  return a;
}

}  // namespace vigil::promql::internal
