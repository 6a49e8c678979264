#include "promql/internal/lexer.h"

#include <cctype>
#include <string>

#include "core/go/strconv.h"
#include "fmt/format.h"
#include "promql/internal/text.h"

namespace vigil::promql::internal {
namespace {

struct Keyword {
  std::string_view word;
  Tok tok;
};

// Lower-case spellings; the lexer lower-cases words before the lookup.
constexpr Keyword kKeywords[] = {
    {"and", Tok::kLand},
    {"or", Tok::kLor},
    {"unless", Tok::kLunless},
    {"atan2", Tok::kAtan2},
    {"sum", Tok::kSum},
    {"avg", Tok::kAvg},
    {"count", Tok::kCount},
    {"min", Tok::kMin},
    {"max", Tok::kMax},
    {"group", Tok::kGroup},
    {"stddev", Tok::kStddev},
    {"stdvar", Tok::kStdvar},
    {"topk", Tok::kTopk},
    {"bottomk", Tok::kBottomk},
    {"count_values", Tok::kCountValues},
    {"quantile", Tok::kQuantile},
    {"limitk", Tok::kLimitk},
    {"limit_ratio", Tok::kLimitRatio},
    {"offset", Tok::kOffset},
    {"smoothed", Tok::kSmoothed},
    {"anchored", Tok::kAnchored},
    {"by", Tok::kBy},
    {"without", Tok::kWithout},
    {"on", Tok::kOn},
    {"ignoring", Tok::kIgnoring},
    {"group_left", Tok::kGroupLeft},
    {"group_right", Tok::kGroupRight},
    {"fill", Tok::kFill},
    {"fill_left", Tok::kFillLeft},
    {"fill_right", Tok::kFillRight},
    {"bool", Tok::kBool},
    {"start", Tok::kStart},
    {"end", Tok::kEnd},
    {"step", Tok::kStep},
    {"range", Tok::kRange},
    {"max_of", Tok::kMaxOf},
    {"min_of", Tok::kMinOf},
    {"inf", Tok::kNumber},
    {"nan", Tok::kNumber},
};

bool LookupKeyword(std::string_view word, Tok* out) {
  std::string lower(word);
  for (auto& c : lower)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& k : kKeywords) {
    if (k.word == lower) {
      *out = k.tok;
      return true;
    }
  }
  return false;
}

bool IsSpace(int32_t r) {
  return r == ' ' || r == '\t' || r == '\n' || r == '\r';
}
bool IsDigit(int32_t r) { return r >= '0' && r <= '9'; }
bool IsAlpha(int32_t r) {
  return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z');
}
bool IsAlphaNumeric(int32_t r) { return IsAlpha(r) || IsDigit(r); }
bool Contains(std::string_view valid, int32_t r) {
  return r >= 0 && r < 0x80 &&
         valid.find(static_cast<char>(r)) != std::string_view::npos;
}

}  // namespace

bool IsOperatorTok(Tok t) { return t >= Tok::kAdd && t <= Tok::kAtan2; }
bool IsAggregatorTok(Tok t) { return t >= Tok::kAvg && t <= Tok::kLimitRatio; }
bool IsKeywordTok(Tok t) { return t >= Tok::kBool && t <= Tok::kWithout; }

// Tokens accepted as a metric name (grammar rule metric_identifier).
bool IsMetricIdentifierTok(Tok t) {
  switch (t) {
    case Tok::kIdentifier:
    case Tok::kMetricIdentifier:
    case Tok::kLand:
    case Tok::kLor:
    case Tok::kLunless:
    case Tok::kBy:
    case Tok::kWithout:
    case Tok::kOffset:
    case Tok::kFill:
    case Tok::kFillLeft:
    case Tok::kFillRight:
    case Tok::kStart:
    case Tok::kEnd:
    case Tok::kStep:
    case Tok::kRange:
    case Tok::kAnchored:
    case Tok::kSmoothed:
    case Tok::kMaxOf:
    case Tok::kMinOf:
      return true;
    default:
      return IsAggregatorTok(t);
  }
}

int32_t Lexer::PeekRune() const {
  int w;
  return DecodeRune(in_, static_cast<size_t>(pos_), &w);
}

int32_t Lexer::NextRune() {
  int32_t r = DecodeRune(in_, static_cast<size_t>(pos_), &width_);
  pos_ += width_;
  return r;
}

bool Lexer::Accept(std::string_view valid) {
  if (Contains(valid, NextRune())) return true;
  Backup();
  return false;
}

bool Lexer::Is(std::string_view valid) const {
  return Contains(valid, PeekRune());
}

void Lexer::AcceptRun(std::string_view valid) {
  while (Contains(valid, NextRune())) {
  }
  Backup();
}

Token Lexer::Emit(Tok t) {
  Token tok{t, start_, in_.substr(start_, pos_ - start_)};
  start_ = pos_;
  return tok;
}

Token Lexer::Error(std::string msg) {
  error_ = std::move(msg);
  mode_ = Mode::kDone;
  return Token{Tok::kError, start_, error_};
}

Token Lexer::Next() {
  Token tok;
  for (;;) {
    if (mode_ == Mode::kDone) return Token{Tok::kEOF, pos_, {}};
    bool done;
    if (brace_open_) {
      done = LexInsideBraces(&tok);
    } else if (mode_ == Mode::kDurationExpr) {
      done = LexDurationExpr(&tok);
    } else {
      done = LexStatements(&tok);
    }
    if (done) return tok;
  }
}

void Lexer::SkipComment() {
  for (int32_t r = NextRune(); r != '\n' && r != '\r' && r != kEofRune;)
    r = NextRune();
  Backup();
  start_ = pos_;
}

bool Lexer::LexStatements(Token* out) {
  if (in_.substr(pos_).starts_with("#")) {
    SkipComment();
    return false;
  }
  int32_t r = NextRune();
  switch (r) {
    case kEofRune:
      if (paren_depth_ != 0) {
        *out = Error("unclosed left parenthesis");
      } else if (bracket_open_) {
        *out = Error("unclosed left bracket");
      } else {
        *out = Emit(Tok::kEOF);
        mode_ = Mode::kDone;
      }
      return true;
    case ',':
      *out = Emit(Tok::kComma);
      return true;
    case '*':
      *out = Emit(Tok::kMul);
      return true;
    case '/':
      *out = Emit(Tok::kDiv);
      return true;
    case '%':
      *out = Emit(Tok::kMod);
      return true;
    case '+':
      *out = Emit(Tok::kAdd);
      return true;
    case '-':
      *out = Emit(Tok::kSub);
      return true;
    case '^':
      *out = Emit(Tok::kPow);
      return true;
    case '@':
      *out = Emit(Tok::kAt);
      return true;
    case '=': {
      int32_t t = PeekRune();
      if (t == '=') {
        NextRune();
        *out = Emit(Tok::kEqlc);
      } else if (t == '~') {
        *out = Error(
            fmt::format("unexpected character after '=': {}", QuoteRune(t)));
      } else {
        *out = Emit(Tok::kEql);
      }
      return true;
    }
    case '!': {
      int32_t t = NextRune();
      *out = t == '=' ? Emit(Tok::kNeq)
                      : Error(fmt::format("unexpected character after '!': {}",
                                          QuoteRune(t)));
      return true;
    }
    case '<':
    case '>': {
      bool lt = r == '<';
      if (PeekRune() == '=') {
        NextRune();
        *out = Emit(lt ? Tok::kLte : Tok::kGte);
      } else if (PeekRune() == '/') {
        NextRune();
        *out = Emit(lt ? Tok::kTrimUpper : Tok::kTrimLower);
      } else {
        *out = Emit(lt ? Tok::kLss : Tok::kGtr);
      }
      return true;
    }
    case '"':
    case '\'':
      *out = LexString(r);
      return true;
    case '`':
      *out = LexRawString();
      return true;
    case '(':
      *out = Emit(Tok::kLeftParen);
      ++paren_depth_;
      return true;
    case ')':
      *out = Emit(Tok::kRightParen);
      if (--paren_depth_ < 0) *out = Error("unexpected right parenthesis ')'");
      return true;
    case '{':
      *out = Emit(Tok::kLeftBrace);
      brace_open_ = true;
      return true;
    case '[':
      if (bracket_open_) {
        *out = Error("unexpected left bracket '['");
        return true;
      }
      got_colon_ = false;
      *out = Emit(Tok::kLeftBracket);
      while (IsSpace(PeekRune())) NextRune();
      start_ = pos_;
      bracket_open_ = true;
      mode_ = Mode::kDurationExpr;
      return true;
    case ']':
      if (!bracket_open_) {
        *out = Error("unexpected right bracket ']'");
        return true;
      }
      *out = Emit(Tok::kRightBracket);
      bracket_open_ = false;
      return true;
    default:
      break;
  }
  if (IsSpace(r)) {
    while (IsSpace(PeekRune())) NextRune();
    start_ = pos_;
    return false;
  }
  if (IsDigit(r) || (r == '.' && IsDigit(PeekRune()))) {
    Backup();
    *out = LexNumberOrDuration();
    return true;
  }
  if (IsAlpha(r) || r == ':') {
    if (!bracket_open_) {
      Backup();
      *out = LexKeywordOrIdentifier();
      return true;
    }
    if (r == ':') {
      if (got_colon_) {
        *out = Error("unexpected colon ':'");
        return true;
      }
      *out = Emit(Tok::kColon);
      got_colon_ = true;
      return true;
    }
    int32_t lower = std::tolower(r);
    if ((lower == 's' || lower == 'r' || lower == 'm') &&
        ScanDurationKeyword(out)) {
      return true;
    }
    *out = Error(
        fmt::format("unexpected character: {}, expected ':'", QuoteRune(r)));
    return true;
  }
  *out = Error(fmt::format("unexpected character: {}", QuoteRune(r)));
  return true;
}

bool Lexer::ScanDurationKeyword(Token* out) {
  while (IsAlpha(NextRune())) {
  }
  Backup();
  Tok t;
  std::string_view word = in_.substr(start_, pos_ - start_);
  if (LookupKeyword(word, &t) && (t == Tok::kStep || t == Tok::kRange ||
                                  t == Tok::kMaxOf || t == Tok::kMinOf)) {
    *out = Emit(t);
    return true;
  }
  return false;
}

bool Lexer::LexInsideBraces(Token* out) {
  if (in_.substr(pos_).starts_with("#")) {
    SkipComment();
    return false;
  }
  int32_t r = NextRune();
  if (r == kEofRune) {
    *out = Error("unexpected end of input inside braces");
    return true;
  }
  if (IsSpace(r)) {
    while (IsSpace(PeekRune())) NextRune();
    start_ = pos_;
    return false;
  }
  if (IsAlpha(r)) {
    while (IsAlphaNumeric(NextRune())) {
    }
    Backup();
    *out = Emit(Tok::kIdentifier);
    return true;
  }
  switch (r) {
    case ',':
      *out = Emit(Tok::kComma);
      return true;
    case '"':
    case '\'':
      *out = LexString(r);
      return true;
    case '`':
      *out = LexRawString();
      return true;
    case '=':
      if (NextRune() == '~') {
        *out = Emit(Tok::kEqlRegex);
      } else {
        Backup();
        *out = Emit(Tok::kEql);
      }
      return true;
    case '!': {
      int32_t nr = NextRune();
      if (nr == '~') {
        *out = Emit(Tok::kNeqRegex);
      } else if (nr == '=') {
        *out = Emit(Tok::kNeq);
      } else {
        *out = Error(fmt::format(
            "unexpected character after '!' inside braces: {}", QuoteRune(nr)));
      }
      return true;
    }
    case '{':
      *out = Error("unexpected left brace '{'");
      return true;
    case '}':
      *out = Emit(Tok::kRightBrace);
      brace_open_ = false;
      return true;
    default:
      *out = Error(
          fmt::format("unexpected character inside braces: {}", QuoteRune(r)));
      return true;
  }
}

bool Lexer::LexDurationExpr(Token* out) {
  int32_t r = NextRune();
  switch (r) {
    case kEofRune:
      *out = Error("unexpected end of input in duration expression");
      return true;
    case ']':
      *out = Emit(Tok::kRightBracket);
      bracket_open_ = false;
      got_colon_ = false;
      mode_ = Mode::kStatements;
      return true;
    case ':':
      *out = Emit(Tok::kColon);
      if (!got_duration_) {
        *out = Error("unexpected colon before duration in duration expression");
      } else if (got_colon_) {
        *out = Error("unexpected repeated colon in duration expression");
      }
      got_colon_ = true;
      return true;
    case '(':
      *out = Emit(Tok::kLeftParen);
      ++paren_depth_;
      return true;
    case ')':
      *out = Emit(Tok::kRightParen);
      if (--paren_depth_ < 0) *out = Error("unexpected right parenthesis ')'");
      return true;
    case '+':
      *out = Emit(Tok::kAdd);
      return true;
    case '-':
      *out = Emit(Tok::kSub);
      return true;
    case '*':
      *out = Emit(Tok::kMul);
      return true;
    case '/':
      *out = Emit(Tok::kDiv);
      return true;
    case '%':
      *out = Emit(Tok::kMod);
      return true;
    case '^':
      *out = Emit(Tok::kPow);
      return true;
    case ',':
      *out = Emit(Tok::kComma);
      return true;
    default:
      break;
  }
  if (IsSpace(r)) {
    while (IsSpace(PeekRune())) NextRune();
    start_ = pos_;
    return false;
  }
  int32_t lower = r >= 0 && r < 0x80 ? std::tolower(r) : r;
  if (lower == 's' || lower == 'r' || lower == 'm') {
    if (ScanDurationKeyword(out)) return true;
    *out = Error(fmt::format("unexpected character in duration expression: {}",
                             QuoteRune(r)));
    return true;
  }
  if (IsDigit(r) || (r == '.' && IsDigit(PeekRune()))) {
    Backup();
    got_duration_ = true;
    mode_ = Mode::kStatements;
    *out = LexNumberOrDuration();
    return true;
  }
  *out = Error(fmt::format("unexpected character in duration expression: {}",
                           QuoteRune(r)));
  return true;
}

Token Lexer::LexNumberOrDuration() {
  if (ScanNumber()) return Emit(Tok::kNumber);
  if (AcceptRemainingDuration()) {
    Backup();
    return Emit(Tok::kDuration);
  }
  return Error(fmt::format("bad number or duration syntax: {}",
                           go::Quote(in_.substr(start_, pos_ - start_))));
}

bool Lexer::AcceptRemainingDuration() {
  if (!Accept("smhdwy")) return false;
  Accept("s");
  while (Accept("0123456789")) {
    while (Accept("0123456789")) {
    }
    if (!Accept("smhdw")) return false;
    Accept("s");
  }
  return !IsAlphaNumeric(NextRune());
}

// Mirrors lex.go's scanNumber: decimal or 0x hex, '.', exponent and '_'
// separators, with the same rejections (so error texts quote the same
// prefix of the input).
bool Lexer::ScanNumber() {
  int initial = pos_;
  std::string_view digits = "0123456789";
  if (Accept("0") && Accept("xX")) {
    Accept("_");
    digits = "0123456789abcdefABCDEF";
  }
  Accept(".");
  Accept(digits);
  bool dot = false;
  bool exponent = false;
  std::string all = std::string(digits) + "._eE";
  while (Is(all)) {
    if (Is(".") && dot) {
      Accept(".");
      return false;
    }
    if (Is("eE") && exponent) {
      Accept("eE");
      return false;
    }
    if (Accept(".")) {
      dot = true;
      if (Accept("_.")) return false;
      if (digits.size() > 10) return false;
      continue;
    }
    if (Accept("eE")) {
      exponent = true;
      Accept("+-");
      if (Accept("._eE") || PeekRune() == kEofRune) return false;
      continue;
    }
    if (Accept("_")) {
      if (Accept("._eE") || PeekRune() == kEofRune) return false;
      continue;
    }
    AcceptRun(digits);
  }
  if (pos_ == initial) return false;
  return !IsAlphaNumeric(PeekRune());
}

bool Lexer::FollowedByLeftParen() const {
  for (size_t p = static_cast<size_t>(pos_); p < in_.size(); ++p) {
    if (!IsSpace(static_cast<unsigned char>(in_[p]))) return in_[p] == '(';
  }
  return false;
}

Token Lexer::LexKeywordOrIdentifier() {
  for (int32_t r = NextRune(); IsAlphaNumeric(r) || r == ':'; r = NextRune()) {
  }
  Backup();
  std::string_view word = in_.substr(start_, pos_ - start_);
  Tok kw;
  if (LookupKeyword(word, &kw)) {
    if ((kw == Tok::kFill || kw == Tok::kFillLeft || kw == Tok::kFillRight) &&
        !FollowedByLeftParen()) {
      return Emit(Tok::kIdentifier);
    }
    return Emit(kw);
  }
  return Emit(word.find(':') == std::string_view::npos
                  ? Tok::kIdentifier
                  : Tok::kMetricIdentifier);
}

}  // namespace vigil::promql::internal
