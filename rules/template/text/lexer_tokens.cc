// Lexer states for identifiers, fields, variables, quoted strings and
// numbers (Go's lexIdentifier, lexFieldOrVariable, lexQuote, lexNumber).
#include "core/go/strconv.h"
#include "rules/template/text/lexer.h"
#include "rules/template/text/unicode.h"

namespace vigil::rules::tmpl {

namespace {

ItemType Keyword(std::string_view w) {
  if (w == ".") return ItemType::kDot;
  if (w == "block") return ItemType::kBlock;
  if (w == "break") return ItemType::kBreak;
  if (w == "continue") return ItemType::kContinue;
  if (w == "define") return ItemType::kDefine;
  if (w == "else") return ItemType::kElse;
  if (w == "end") return ItemType::kEnd;
  if (w == "if") return ItemType::kIf;
  if (w == "range") return ItemType::kRange;
  if (w == "nil") return ItemType::kNil;
  if (w == "template") return ItemType::kTemplate;
  if (w == "with") return ItemType::kWith;
  return ItemType::kError;  // not a keyword
}

}  // namespace

bool Lexer::LexIdentifier(Item* out) {
  int r;
  while (IsAlphaNumericRune(r = NextRune())) {
  }
  Backup();
  std::string_view word = input_.substr(start_, pos_ - start_);
  if (!AtTerminator()) {
    *out = Errorf("bad character " + SharpU(r));
    return true;
  }
  ItemType kw = Keyword(word);
  if (kw != ItemType::kError) {
    *out = Emit(kw);
  } else if (word[0] == '.') {
    *out = Emit(ItemType::kField);
  } else if (word == "true" || word == "false") {
    *out = Emit(ItemType::kBool);
  } else {
    *out = Emit(ItemType::kIdentifier);
  }
  state_ = State::kInsideAction;
  return true;
}

// The '.' or '$' has been consumed.
bool Lexer::LexFieldOrVariable(ItemType typ, Item* out) {
  state_ = State::kInsideAction;
  if (AtTerminator()) {
    *out =
        Emit(typ == ItemType::kVariable ? ItemType::kVariable : ItemType::kDot);
    return true;
  }
  int r;
  while (IsAlphaNumericRune(r = NextRune())) {
  }
  Backup();
  if (!AtTerminator()) {
    *out = Errorf("bad character " + SharpU(r));
    return true;
  }
  *out = Emit(typ);
  return true;
}

bool Lexer::AtTerminator() {
  int r = Peek();
  if (IsTemplateSpace(r)) return true;
  switch (r) {
    case kEofRune:
    case '.':
    case ',':
    case '|':
    case ':':
    case ')':
    case '(':
      return true;
    default:
      return input_.substr(pos_).starts_with(kDefaultRightDelim);
  }
}

bool Lexer::LexQuote(Item* out, char quote, ItemType typ) {
  while (true) {
    int r = NextRune();
    if (r == '\\') {
      r = NextRune();
      if (r != kEofRune && r != '\n') continue;
    }
    if (r == kEofRune || r == '\n') {
      *out = Errorf(quote == '"' ? "unterminated quoted string"
                                 : "unterminated character constant");
      return true;
    }
    if (r == quote) break;
  }
  *out = Emit(typ);
  state_ = State::kInsideAction;
  return true;
}

bool Lexer::LexRawQuote(Item* out) {
  while (true) {
    int r = NextRune();
    if (r == kEofRune) {
      *out = Errorf("unterminated raw quoted string");
      return true;
    }
    if (r == '`') break;
  }
  *out = Emit(ItemType::kRawString);
  state_ = State::kInsideAction;
  return true;
}

bool Lexer::ScanNumber() {
  Accept("+-");
  std::string_view digits = "0123456789_";
  if (Accept("0")) {
    if (Accept("xX")) {
      digits = "0123456789abcdefABCDEF_";
    } else if (Accept("oO")) {
      digits = "01234567_";
    } else if (Accept("bB")) {
      digits = "01_";
    }
  }
  AcceptRun(digits);
  if (Accept(".")) AcceptRun(digits);
  if (digits.size() == 11 && Accept("eE")) {
    Accept("+-");
    AcceptRun("0123456789_");
  }
  if (digits.size() == 23 && Accept("pP")) {
    Accept("+-");
    AcceptRun("0123456789_");
  }
  Accept("i");
  if (IsAlphaNumericRune(Peek())) {
    NextRune();
    return false;
  }
  return true;
}

bool Lexer::LexNumber(Item* out) {
  state_ = State::kInsideAction;
  if (!ScanNumber()) {
    *out = Errorf("bad number syntax: " +
                  go::Quote(input_.substr(start_, pos_ - start_)));
    return true;
  }
  int sign = Peek();
  if (sign == '+' || sign == '-') {
    if (!ScanNumber() || input_[pos_ - 1] != 'i') {
      *out = Errorf("bad number syntax: " +
                    go::Quote(input_.substr(start_, pos_ - start_)));
      return true;
    }
    *out = Emit(ItemType::kComplex);
    return true;
  }
  *out = Emit(ItemType::kNumber);
  return true;
}

}  // namespace vigil::rules::tmpl
