// Vector selectors, label matchers, range/subquery brackets, `offset` and
// `@` modifiers.
#include <cmath>
#include <cstdint>
#include <utility>

#include "core/go/strconv.h"
#include "core/labels.h"
#include "core/time.h"
#include "fmt/format.h"
#include "promql/internal/parser.h"
#include "promql/internal/text.h"

namespace vigil::promql::internal {
namespace {

// Durations beyond what int64 nanoseconds hold (lex.go
// durationLiteralOutOfRange).
bool DurationOutOfRange(double secs) {
  return secs > 9223372036854775808.0 / 1e9 ||
         secs < -9223372036854775808.0 / 1e9;
}

bool IsMatchOp(Tok t) {
  return t == Tok::kEql || t == Tok::kNeq || t == Tok::kEqlRegex ||
         t == Tok::kNeqRegex;
}

MatchType ToMatchType(Tok t) {
  switch (t) {
    case Tok::kNeq:
      return MatchType::kNotEqual;
    case Tok::kEqlRegex:
      return MatchType::kRegexMatch;
    case Tok::kNeqRegex:
      return MatchType::kRegexNoMatch;
    default:
      return MatchType::kEqual;
  }
}

// time.Duration(math.Round(secs * 1e9)) converted to whole milliseconds.
// Go's int64() on amd64 gives -2^63 for NaN and out-of-range values
// (`offset -nan`, found by fuzzing; the C++ cast is undefined there).
int64_t SecondsToMs(double secs) {
  const double ns = std::round(secs * 1e9);
  const int64_t n = ns >= -9223372036854775808.0 && ns < 9223372036854775808.0
                        ? static_cast<int64_t>(ns)
                        : INT64_MIN;
  return n / 1000000;
}

Modifiers* ModifiersOf(Expr* e) {
  switch (e->kind) {
    case NodeKind::kVectorSelector:
      return &e->As<VectorSelector>().mod;
    case NodeKind::kMatrixSelector:
      return &e->As<MatrixSelector>().vs->mod;
    case NodeKind::kSubquery:
      return &e->As<SubqueryExpr>().mod;
    default:
      return nullptr;
  }
}

}  // namespace

std::unique_ptr<NumberLiteral> Parser::ParseNumberToken() {
  Token tok = Next();
  auto n = std::make_unique<NumberLiteral>();
  n->pos = {tok.pos, tok.end()};
  if (tok.type == Tok::kDuration) {
    auto ms = ParseDuration(tok.val);
    if (!ms.ok()) {
      Fail(n->pos, std::string(ms.status().message()));
      return nullptr;
    }
    // float64 nanoseconds over 1e9, as Prometheus computes seconds.
    n->value = static_cast<double>(*ms * 1000000) / 1e9;
    n->is_duration = true;
    return n;
  }
  auto v = ParseNumber(tok.val);
  if (!v.ok()) {
    Fail(n->pos, fmt::format("error parsing number: {}",
                             std::string(v.status().message())));
    return nullptr;
  }
  n->value = *v;
  return n;
}

ExprPtr Parser::ParseVectorSelector() {
  auto vs = std::make_unique<VectorSelector>();
  int start = Peek().pos;
  if (Peek().type != Tok::kLeftBrace) {
    Token name = Next();
    vs->name = std::string(name.val);
    vs->pos = {name.pos, name.end()};
  }
  if (Peek().type == Tok::kLeftBrace) {
    if (!ParseLabelMatchers(&vs->matchers)) return nullptr;
    vs->pos = {start, last_closing_};
  }
  if (!vs->name.empty()) {
    auto m = Matcher::Make(MatchType::kEqual, kMetricName, vs->name);
    if (!m.ok()) {
      Fail(vs->pos, std::string(m.status().message()));
      return nullptr;
    }
    vs->matchers.push_back(*std::move(m));
  }
  vs->original_text =
      std::string(in_.substr(vs->pos.start, vs->pos.end - vs->pos.start));
  return vs;
}

bool Parser::ParseLabelMatchers(std::vector<Matcher>* out) {
  Next();  // '{'
  for (;;) {
    Tok t = Peek().type;
    if (t == Tok::kRightBrace) {
      Next();
      return true;
    }
    if (t != Tok::kIdentifier && t != Tok::kString) {
      Unexpected("label matching", "identifier or \"}\"");
      return false;
    }
    if (!ParseMatcher(out)) return false;
    t = Peek().type;
    if (t == Tok::kComma) {
      Next();
    } else if (t != Tok::kRightBrace) {
      Unexpected("label matching", "\",\" or \"}\"");
      return false;
    }
  }
}

bool Parser::ParseMatcher(std::vector<Matcher>* out) {
  Token label = Next();
  std::string name(label.val);
  if (label.type == Tok::kString) {
    auto u = UnquoteString(label.val);
    if (!u.ok()) return Fail({label.pos, label.end()}, "invalid label name");
    name = *std::move(u);
    if (!IsMatchOp(Peek().type)) {
      // {"metric.name"}: a bare quoted string is the metric name.
      auto m = Matcher::Make(MatchType::kEqual, kMetricName, name);
      if (!m.ok())
        return Fail({label.pos, label.end()},
                    std::string(m.status().message()));
      out->push_back(*std::move(m));
      return true;
    }
  } else if (!IsMatchOp(Peek().type)) {
    Unexpected("label matching", "label matching operator");
    return false;
  }
  Token op = Next();
  if (Peek().type != Tok::kString) {
    Unexpected("label matching", "string");
    return false;
  }
  Token value = Next();
  auto v = UnquoteString(value.val);
  if (!v.ok()) {
    return Fail(
        {value.pos, value.end()},
        fmt::format("error unquoting string {}: {}", go::Quote(value.val),
                    std::string(v.status().message())));
  }
  auto m = Matcher::Make(ToMatchType(op.type), name, *v);
  if (!m.ok())
    return Fail({label.pos, value.end()}, std::string(m.status().message()));
  out->push_back(*std::move(m));
  return true;
}

// Duration arithmetic, step(), range(), min_of/max_of and parenthesised
// durations need Prometheus's experimental duration-expression feature.
bool Parser::ExperimentalDurationStart() {
  Tok t = Peek().type;
  if (t == Tok::kLeftParen || t == Tok::kMaxOf || t == Tok::kMinOf ||
      ((t == Tok::kStep || t == Tok::kRange) &&
       Peek(1).type == Tok::kLeftParen)) {
    const Token& tok = Peek();
    return Fail({tok.pos, tok.end()},
                "experimental duration expression is not enabled");
  }
  return true;
}

bool Parser::ParseDurationLiteral(bool in_brackets, std::string_view ctx,
                                  std::string_view expected, double* secs,
                                  PosRange* pos) {
  Tok t = Peek().type;
  int sign_pos = -1;
  bool negative = false;
  if (t == Tok::kAdd || t == Tok::kSub) {
    Token s = Next();
    sign_pos = s.pos;
    negative = t == Tok::kSub;
    t = Peek().type;
  }
  if (!ExperimentalDurationStart()) return false;
  if (t == Tok::kStep || t == Tok::kRange) Next();  // without "()"
  if (t != Tok::kNumber && t != Tok::kDuration) {
    Unexpected(ctx, expected);
    return false;
  }
  auto n = ParseNumberToken();
  if (!n) return false;
  *secs = negative ? -n->value : n->value;
  *pos = n->pos;
  if (sign_pos >= 0) pos->start = sign_pos;
  if (in_brackets) {
    switch (Peek().type) {
      case Tok::kAdd:
      case Tok::kSub:
      case Tok::kMul:
      case Tok::kDiv:
      case Tok::kMod:
      case Tok::kPow:
        return Fail(*pos, "experimental duration expression is not enabled");
      default:
        break;
    }
  }
  if (DurationOutOfRange(*secs)) return Fail(*pos, "duration out of range");
  if (in_brackets && *secs <= 0)
    return Fail(*pos, "duration must be greater than 0");
  return true;
}

ExprPtr Parser::ParseRangeOrSubquery(ExprPtr e) {
  Token lb = Next();
  double range;
  PosRange rpos;
  if (!ParseDurationLiteral(true, "subquery or range selector",
                            "number, duration, step(), or range()", &range,
                            &rpos)) {
    return nullptr;
  }
  if (Peek().type == Tok::kRightBracket) {
    Token rb = Next();
    PosRange err_pos{lb.pos, rb.end()};
    if (e->kind != NodeKind::kVectorSelector) {
      Fail(err_pos, "ranges only allowed for vector selectors");
      return nullptr;
    }
    auto& vs = e->As<VectorSelector>();
    if (vs.mod.offset_ms != 0) {
      Fail(err_pos, "no offset modifiers allowed before range");
      return nullptr;
    }
    if (vs.mod.at != AtKind::kNone) {
      Fail(err_pos, "no @ modifiers allowed before range");
      return nullptr;
    }
    auto ms = std::make_unique<MatrixSelector>();
    ms->pos = {e->pos.start, rb.end()};
    ms->range_ms = SecondsToMs(range);
    ms->vs.reset(static_cast<VectorSelector*>(e.release()));
    return ms;
  }
  if (Peek().type != Tok::kColon) {
    Unexpected("subquery or range", "\":\" or \"]\"");
    return nullptr;
  }
  Next();
  auto sq = std::make_unique<SubqueryExpr>();
  sq->range_ms = SecondsToMs(range);
  if (Peek().type != Tok::kRightBracket) {
    double step;
    PosRange spos;
    if (!ParseDurationLiteral(true, "subquery selector",
                              "number, duration, step(), range(), or \"]\"",
                              &step, &spos)) {
      return nullptr;
    }
    sq->step_ms = SecondsToMs(step);
    if (Peek().type != Tok::kRightBracket) {
      Unexpected("subquery selector", "\"]\"");
      return nullptr;
    }
  }
  Token rb = Next();
  sq->pos = {e->pos.start, rb.pos + 1};
  sq->expr = std::move(e);
  return sq;
}

ExprPtr Parser::ParseOffset(ExprPtr e) {
  Next();  // offset
  double secs;
  PosRange pos;
  if (!ParseDurationLiteral(false, "offset",
                            "number, duration, step(), or range()", &secs,
                            &pos)) {
    return nullptr;
  }
  Modifiers* mod = ModifiersOf(e.get());
  if (mod == nullptr) {
    Fail(e->pos,
         "offset modifier must be preceded by an instant vector selector "
         "or range vector selector or a subquery");
    return nullptr;
  }
  if (mod->offset_ms != 0) {
    Fail(e->pos, "offset may not be set multiple times");
    return nullptr;
  }
  mod->offset_ms = SecondsToMs(secs);
  e->pos.end = last_closing_;
  return e;
}

ExprPtr Parser::ParseAt(ExprPtr e) {
  Next();  // @
  Tok t = Peek().type;
  AtKind kind = AtKind::kTimestamp;
  double ts = 0;
  if (t == Tok::kStart || t == Tok::kEnd) {
    Next();
    kind = t == Tok::kStart ? AtKind::kStart : AtKind::kEnd;
    if (Peek().type != Tok::kLeftParen) {
      Unexpected("@", "timestamp");
      return nullptr;
    }
    Next();
    if (Peek().type != Tok::kRightParen) {
      Unexpected("@", "timestamp");
      return nullptr;
    }
    Next();
  } else {
    bool negative = false;
    if (t == Tok::kAdd || t == Tok::kSub) {
      Next();
      negative = t == Tok::kSub;
      t = Peek().type;
    }
    if (t != Tok::kNumber && t != Tok::kDuration) {
      Unexpected("@", "timestamp");
      return nullptr;
    }
    auto n = ParseNumberToken();
    if (!n) return nullptr;
    ts = negative ? -n->value : n->value;
    if (std::isnan(ts) || std::isinf(ts) || ts >= 9223372036854775807.0 ||
        ts <= -9223372036854775808.0) {
      Fail(e->pos,
           "timestamp out of bounds for @ modifier: " + FormatGoFixed6(ts));
      return nullptr;
    }
  }
  Modifiers* mod = ModifiersOf(e.get());
  if (mod == nullptr) {
    Fail(e->pos,
         "@ modifier must be preceded by an instant vector selector or "
         "range vector selector or a subquery");
    return nullptr;
  }
  if (mod->at != AtKind::kNone) {
    Fail(e->pos, "@ <timestamp> may not be set multiple times");
    return nullptr;
  }
  mod->at = kind;
  if (kind == AtKind::kTimestamp) {
    // Prometheus's timestamp.FromFloatSeconds: Go's int64(math.Round(ts *
    // 1000)) on amd64, where milliseconds outside [-2^63, 2^63) give -2^63
    // (found by fuzzing: C++'s cast is undefined there).
    const double ms = std::round(ts * 1000);
    mod->at_ms = ms >= -9223372036854775808.0 && ms < 9223372036854775808.0
                     ? static_cast<int64_t>(ms)
                     : INT64_MIN;
  }
  e->pos.end = last_closing_;
  return e;
}

ExprPtr Parser::ParseSelectorOnly() {
  Tok t = Peek().type;
  if (t != Tok::kLeftBrace && !IsMetricIdentifierTok(t)) {
    if (t == Tok::kEOF) {
      Fail({0, 0}, "unexpected end of input");
    } else {
      Unexpected("", "");
    }
    return nullptr;
  }
  ExprPtr e = ParseVectorSelector();
  if (!e) return nullptr;
  if (Peek().type != Tok::kEOF) {
    Unexpected("", "");
    return nullptr;
  }
  return e;
}

}  // namespace vigil::promql::internal
