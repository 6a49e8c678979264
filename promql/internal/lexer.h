// -----------------------------------------------------------------------------
// File: lexer.h
// -----------------------------------------------------------------------------
//
// PromQL tokenizer with the context-dependent behaviour of Prometheus's
// promql/parser/lex.go: inside `{...}` only identifiers, strings, matcher
// operators and commas exist; after `[` a duration expression is lexed;
// `5m` is a DURATION anywhere; keywords are case-insensitive; `inf`/`nan`
// are numbers. Errors are returned as a kError token whose message is
// Prometheus's ("unclosed left parenthesis", ...); after it only kEOF follows.
// Not thread-safe; one Lexer per parse.
#ifndef VIGIL_PROMQL_INTERNAL_LEXER_H_
#define VIGIL_PROMQL_INTERNAL_LEXER_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace vigil::promql::internal {

enum class Tok : uint8_t {
  kEOF,
  kError,
  kIdentifier,
  kMetricIdentifier,
  kString,
  kNumber,
  kDuration,
  kLeftParen,
  kRightParen,
  kLeftBrace,
  kRightBrace,
  kLeftBracket,
  kRightBracket,
  kComma,
  kEql,
  kColon,
  // Operators.
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kPow,
  kEqlc,
  kNeq,
  kLte,
  kLss,
  kGte,
  kGtr,
  kTrimUpper,
  kTrimLower,
  kEqlRegex,
  kNeqRegex,
  kAt,
  kLand,
  kLor,
  kLunless,
  kAtan2,
  // Aggregators.
  kAvg,
  kBottomk,
  kCount,
  kCountValues,
  kGroup,
  kMax,
  kMin,
  kQuantile,
  kStddev,
  kStdvar,
  kSum,
  kTopk,
  kLimitk,
  kLimitRatio,
  // Keywords.
  kBool,
  kBy,
  kGroupLeft,
  kGroupRight,
  kFill,
  kFillLeft,
  kFillRight,
  kIgnoring,
  kOffset,
  kSmoothed,
  kAnchored,
  kOn,
  kWithout,
  // Preprocessors / duration keywords.
  kStart,
  kEnd,
  kStep,
  kRange,
  kMaxOf,
  kMinOf,
};

bool IsOperatorTok(Tok t);
bool IsAggregatorTok(Tok t);
bool IsKeywordTok(Tok t);
// Tokens the grammar accepts as a metric name (rule metric_identifier).
bool IsMetricIdentifierTok(Tok t);

struct Token {
  Tok type = Tok::kEOF;
  int pos = 0;           // byte offset of the first character
  std::string_view val;  // text as written (error message for kError)
  int end() const { return pos + static_cast<int>(val.size()); }
};

// Prometheus's Item.desc(), used in "unexpected ..." messages:
// `<op:+>`, `<by>`, `<aggr:sum>`, `identifier "foo"`, `"("`,
// `number "1"`, `end of input`.
std::string DescribeToken(const Token& t);

class Lexer {
 public:
  // `input` must outlive the lexer and its tokens.
  explicit Lexer(std::string_view input) : in_(input) {}

  // Returns the next token; comments are skipped.
  Token Next();

 private:
  enum class Mode { kStatements, kDurationExpr, kDone };

  int32_t PeekRune() const;
  int32_t NextRune();
  void Backup() { pos_ -= width_; }
  bool Accept(std::string_view valid);
  bool Is(std::string_view valid) const;
  void AcceptRun(std::string_view valid);
  Token Emit(Tok t);
  Token Error(std::string msg);

  bool LexStatements(Token* out);
  bool LexInsideBraces(Token* out);
  bool LexDurationExpr(Token* out);
  Token LexNumberOrDuration();
  Token LexString(int32_t quote);
  Token LexRawString();
  // Consumes an escape after '\'; returns false (and sets *err) on error.
  bool LexEscape(int32_t quote, std::string* err);
  Token LexKeywordOrIdentifier();
  bool ScanNumber();
  bool AcceptRemainingDuration();
  bool ScanDurationKeyword(Token* out);
  void SkipComment();
  bool FollowedByLeftParen() const;

  std::string_view in_;
  int pos_ = 0;
  int start_ = 0;
  int width_ = 0;
  Mode mode_ = Mode::kStatements;
  int paren_depth_ = 0;
  bool brace_open_ = false;
  bool bracket_open_ = false;
  bool got_colon_ = false;
  bool got_duration_ = false;
  std::string error_;
};

}  // namespace vigil::promql::internal

#endif  // VIGIL_PROMQL_INTERNAL_LEXER_H_
