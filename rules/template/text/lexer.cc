#include "rules/template/text/lexer.h"

#include <algorithm>

#include "core/go/strconv.h"
#include "core/go/utf8.h"
#include "fmt/format.h"
#include "rules/template/text/unicode.h"

namespace vigil::rules::tmpl {

namespace {

constexpr std::string_view kLeftDelim = "{{";
constexpr std::string_view kLeftComment = "/*";
constexpr std::string_view kRightComment = "*/";
constexpr std::string_view kSpaceChars = " \t\r\n";
constexpr size_t kTrimMarkerLen = 2;  // '-' plus one space

bool HasLeftTrimMarker(std::string_view s) {
  return s.size() >= 2 && s[0] == '-' && IsTemplateSpace(s[1]);
}
bool HasRightTrimMarker(std::string_view s) {
  return s.size() >= 2 && IsTemplateSpace(s[0]) && s[1] == '-';
}

size_t RightTrimLength(std::string_view s) {
  size_t n = s.find_last_not_of(kSpaceChars);
  return n == std::string_view::npos ? s.size() : s.size() - n - 1;
}
size_t LeftTrimLength(std::string_view s) {
  size_t n = s.find_first_not_of(kSpaceChars);
  return n == std::string_view::npos ? s.size() : n;
}

int CountNewlines(std::string_view s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

std::string Item::String() const {
  if (type == ItemType::kEOF) return "EOF";
  if (type == ItemType::kError) return error;
  if (type > ItemType::kKeyword) return fmt::format("<{}>", val);
  if (val.size() > 10) {
    return go::Quote(TruncateRunes(val, 10)) + "...";
  }
  return go::Quote(val);
}

Lexer::Lexer(std::string_view input) : input_(input) {}

int Lexer::NextRune() {
  if (pos_ >= input_.size()) {
    width_ = 0;
    return kEofRune;
  }
  uint32_t r;
  size_t w = go::DecodeRune(input_, pos_, &r);
  width_ = w;
  pos_ += w;
  if (r == '\n') ++line_;
  return static_cast<int>(r);
}

int Lexer::Peek() {
  int r = NextRune();
  Backup();
  return r;
}

void Lexer::Backup() {
  pos_ -= width_;
  if (width_ == 1 && input_[pos_] == '\n') --line_;
}

Item Lexer::Emit(ItemType t) {
  Item item;
  item.type = t;
  item.pos = start_;
  item.val = input_.substr(start_, pos_ - start_);
  item.line = start_line_;
  start_ = pos_;
  start_line_ = line_;
  return item;
}

Item Lexer::Errorf(std::string msg) {
  Item item;
  item.type = ItemType::kError;
  item.pos = start_;
  item.error = std::move(msg);
  item.line = start_line_;
  state_ = State::kDone;
  return item;
}

void Lexer::Ignore() {
  line_ += CountNewlines(input_.substr(start_, pos_ - start_));
  start_ = pos_;
  start_line_ = line_;
}

bool Lexer::Accept(std::string_view valid) {
  int r = NextRune();
  if (r >= 0 && r < 128 &&
      valid.find(static_cast<char>(r)) != std::string_view::npos) {
    return true;
  }
  Backup();
  return false;
}

void Lexer::AcceptRun(std::string_view valid) {
  while (Accept(valid)) {
  }
}

Item Lexer::Next() {
  Item out;
  while (true) {
    bool got = false;
    switch (state_) {
      case State::kText:
        got = LexText(&out);
        break;
      case State::kLeftDelim:
        got = LexLeftDelim(&out);
        break;
      case State::kComment:
        got = LexComment(&out);
        break;
      case State::kRightDelim:
        got = LexRightDelim(&out);
        break;
      case State::kInsideAction:
        got = LexInsideAction(&out);
        break;
      case State::kSpace:
        got = LexSpace(&out);
        break;
      case State::kDone: {
        Item eof;
        eof.type = ItemType::kEOF;
        eof.pos = pos_;
        eof.line = line_;
        return eof;
      }
    }
    if (got) return out;
  }
}

bool Lexer::LexText(Item* out) {
  width_ = 0;
  size_t x = input_.find(kLeftDelim, pos_);
  if (x != std::string_view::npos) {
    pos_ = x;
    size_t trim = 0;
    if (HasLeftTrimMarker(input_.substr(pos_ + kLeftDelim.size()))) {
      trim = RightTrimLength(input_.substr(start_, pos_ - start_));
    }
    pos_ -= trim;
    bool got = false;
    if (pos_ > start_) {
      line_ += CountNewlines(input_.substr(start_, pos_ - start_));
      *out = Emit(ItemType::kText);
      got = true;
    }
    pos_ += trim;
    Ignore();
    state_ = State::kLeftDelim;
    return got;
  }
  pos_ = input_.size();
  if (pos_ > start_) {
    line_ += CountNewlines(input_.substr(start_, pos_ - start_));
    *out = Emit(ItemType::kText);
    return true;  // EOF comes on the next call
  }
  *out = Emit(ItemType::kEOF);
  state_ = State::kDone;
  return true;
}

bool Lexer::AtRightDelim(bool* trim) {
  std::string_view rest = input_.substr(pos_);
  if (HasRightTrimMarker(rest) &&
      rest.substr(kTrimMarkerLen).starts_with(kDefaultRightDelim)) {
    *trim = true;
    return true;
  }
  *trim = false;
  return rest.starts_with(kDefaultRightDelim);
}

bool Lexer::LexLeftDelim(Item* out) {
  pos_ += kLeftDelim.size();
  bool trim = HasLeftTrimMarker(input_.substr(pos_));
  size_t after = trim ? kTrimMarkerLen : 0;
  if (input_.substr(pos_ + after).starts_with(kLeftComment)) {
    pos_ += after;
    Ignore();
    state_ = State::kComment;
    return false;
  }
  *out = Emit(ItemType::kLeftDelim);
  pos_ += after;
  Ignore();
  paren_depth_ = 0;
  state_ = State::kInsideAction;
  return true;
}

bool Lexer::LexComment(Item* out) {
  pos_ += kLeftComment.size();
  size_t i = input_.find(kRightComment, pos_);
  if (i == std::string_view::npos) {
    *out = Errorf("unclosed comment");
    return true;
  }
  pos_ = i + kRightComment.size();
  bool trim;
  if (!AtRightDelim(&trim)) {
    *out = Errorf("comment ends before closing delimiter");
    return true;
  }
  if (trim) pos_ += kTrimMarkerLen;
  pos_ += kDefaultRightDelim.size();
  if (trim) pos_ += LeftTrimLength(input_.substr(pos_));
  Ignore();
  state_ = State::kText;
  return false;
}

bool Lexer::LexRightDelim(Item* out) {
  bool trim = HasRightTrimMarker(input_.substr(pos_));
  if (trim) {
    pos_ += kTrimMarkerLen;
    Ignore();
  }
  pos_ += kDefaultRightDelim.size();
  *out = Emit(ItemType::kRightDelim);
  if (trim) {
    pos_ += LeftTrimLength(input_.substr(pos_));
    Ignore();
  }
  state_ = State::kText;
  return true;
}

bool Lexer::LexInsideAction(Item* out) {
  bool trim;
  if (AtRightDelim(&trim)) {
    if (paren_depth_ == 0) {
      state_ = State::kRightDelim;
      return false;
    }
    *out = Errorf("unclosed left paren");
    return true;
  }
  int r = NextRune();
  if (r == kEofRune) {
    *out = Errorf("unclosed action");
    return true;
  }
  if (IsTemplateSpace(r)) {
    Backup();  // the space may start " -}}"
    state_ = State::kSpace;
    return false;
  }
  if (LexPunctuation(r, out)) return true;
  if (r == '.' && pos_ < input_.size() &&
      (input_[pos_] < '0' || input_[pos_] > '9')) {
    return LexFieldOrVariable(ItemType::kField, out);
  }
  if (r == '.' || r == '+' || r == '-' || (r >= '0' && r <= '9')) {
    Backup();
    return LexNumber(out);
  }
  if (IsAlphaNumericRune(r)) {
    Backup();
    return LexIdentifier(out);
  }
  if (r < 0x7f && r >= 0x20) {
    *out = Emit(ItemType::kChar);
    return true;
  }
  *out = Errorf("unrecognized character in action: " + SharpU(r));
  return true;
}

// Single-rune tokens and the starts of quotes and variables; false if `r`
// is none of them.
bool Lexer::LexPunctuation(int r, Item* out) {
  switch (r) {
    case '=':
      *out = Emit(ItemType::kAssign);
      return true;
    case ':':
      if (NextRune() != '=') {
        *out = Errorf("expected :=");
        return true;
      }
      *out = Emit(ItemType::kDeclare);
      return true;
    case '|':
      *out = Emit(ItemType::kPipe);
      return true;
    case '"':
      return LexQuote(out, '"', ItemType::kString);
    case '`':
      return LexRawQuote(out);
    case '$':
      if (AtTerminator()) {
        *out = Emit(ItemType::kVariable);
        return true;
      }
      return LexFieldOrVariable(ItemType::kVariable, out);
    case '\'':
      return LexQuote(out, '\'', ItemType::kCharConstant);
    case '(':
      *out = Emit(ItemType::kLeftParen);
      ++paren_depth_;
      return true;
    case ')':
      if (--paren_depth_ < 0) {
        *out = Errorf("unexpected right paren");
      } else {
        *out = Emit(ItemType::kRightParen);
      }
      return true;
    default:
      return false;
  }
}

bool Lexer::LexSpace(Item* out) {
  int num_spaces = 0;
  while (IsTemplateSpace(Peek())) {
    NextRune();
    ++num_spaces;
  }
  std::string_view from = input_.substr(pos_ - 1);
  if (HasRightTrimMarker(from) &&
      from.substr(kTrimMarkerLen).starts_with(kDefaultRightDelim)) {
    Backup();  // before the space
    if (num_spaces == 1) {
      state_ = State::kRightDelim;
      return false;
    }
  }
  *out = Emit(ItemType::kSpace);
  state_ = State::kInsideAction;
  return true;
}

}  // namespace vigil::rules::tmpl
