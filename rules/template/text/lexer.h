// -----------------------------------------------------------------------------
// File: text/lexer.h
// -----------------------------------------------------------------------------
//
// Scanner for Go text/template syntax ("{{", "}}" delimiters, "{{- " / " -}}"
// trim markers, "{{/* */}}" comments). Token boundaries, line numbers and
// error texts follow Go's text/template/parse lexer, because parse errors
// are user-visible and must read exactly like Prometheus's.
#ifndef VIGIL_RULES_TEMPLATE_TEXT_LEXER_H_
#define VIGIL_RULES_TEMPLATE_TEXT_LEXER_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace vigil::rules::tmpl {

// The lexer's default right delimiter, and what it counts as space (Go's
// text/template isSpace: no vertical tab or form feed).
inline constexpr std::string_view kDefaultRightDelim = "}}";
inline bool IsTemplateSpace(int r) {
  return r == ' ' || r == '\t' || r == '\r' || r == '\n';
}

enum class ItemType {
  kError,         // value is the error text
  kBool,          // true / false
  kChar,          // printable ASCII character (comma etc.)
  kCharConstant,  // 'a'
  kComplex,       // 1+2i
  kAssign,        // =
  kDeclare,       // :=
  kEOF,
  kField,       // .Name
  kIdentifier,  // name not starting with '.'
  kLeftDelim,
  kLeftParen,
  kNumber,
  kPipe,
  kRawString,  // `...` including the quotes
  kRightDelim,
  kRightParen,
  kSpace,
  kString,  // "..." including the quotes
  kText,
  kVariable,  // $ or $name
  // Keywords; everything after kKeyword is one.
  kKeyword,
  kBlock,
  kBreak,
  kContinue,
  kDot,
  kDefine,
  kElse,
  kEnd,
  kIf,
  kNil,
  kRange,
  kTemplate,
  kWith,
};

struct Item {
  ItemType type = ItemType::kEOF;
  size_t pos = 0;        // byte offset of the item in the input
  std::string_view val;  // view into the input (empty for kError)
  int line = 1;          // line at the start of the item
  std::string error;     // owns the text of kError items

  // Go's item.String(): EOF, the error text, <keyword>, or the quoted value
  // (truncated to 10 runes with "..." when longer).
  std::string String() const;
};

// Pull scanner over `input`, which must outlive it. After an error item or
// EOF every further call returns EOF.
class Lexer {
 public:
  explicit Lexer(std::string_view input);
  Item Next();

 private:
  enum class State {
    kText,
    kLeftDelim,
    kComment,
    kRightDelim,
    kInsideAction,
    kSpace,
    kDone
  };
  static constexpr int kEofRune = -1;

  int NextRune();
  int Peek();
  void Backup();
  Item Emit(ItemType t);
  Item Errorf(std::string msg);
  void Ignore();
  bool Accept(std::string_view valid);
  void AcceptRun(std::string_view valid);
  bool AtTerminator();
  bool AtRightDelim(bool* trim);
  bool ScanNumber();

  bool LexText(Item* out);
  bool LexLeftDelim(Item* out);
  bool LexComment(Item* out);
  bool LexRightDelim(Item* out);
  bool LexInsideAction(Item* out);
  bool LexPunctuation(int r, Item* out);
  bool LexSpace(Item* out);
  bool LexIdentifier(Item* out);
  bool LexFieldOrVariable(ItemType typ, Item* out);
  bool LexQuote(Item* out, char quote, ItemType typ);
  bool LexRawQuote(Item* out);
  bool LexNumber(Item* out);

  std::string_view input_;
  State state_ = State::kText;
  size_t pos_ = 0;
  size_t start_ = 0;
  size_t width_ = 0;
  int paren_depth_ = 0;
  int line_ = 1;
  int start_line_ = 1;
};

}  // namespace vigil::rules::tmpl

#endif  // VIGIL_RULES_TEMPLATE_TEXT_LEXER_H_
