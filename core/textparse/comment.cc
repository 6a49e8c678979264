// Comment lines ("# HELP", "# TYPE", "# UNIT", "# EOF" and the rest) of the
// three parsers Vigil reproduces. They differ byte by byte:
//
//   * Prometheus's text lexer (promlex.l) wants a blank after '#' and after
//     the keyword, else the line is a plain comment; the name is the longest
//     run of name bytes; exactly one byte after it is dropped and the rest of
//     the line, blanks included, is the text (so "# TYPE n untyped " fails).
//   * expfmt skips any blanks, ignores HELP/TYPE lines without text, needs a
//     blank after the name, and compares the type case-insensitively.
//   * OpenMetrics (openmetricslex.l) wants exactly one space between parts.
#include <algorithm>
#include <cstring>

#include "absl/status/status.h"
#include "core/textparse/parser.h"
#include "core/textparse/scan.h"
#include "fmt/format.h"

namespace vigil::textparse {

using internal::IsBlank;
using internal::QuoteForError;

Entry Parser::AsComment(size_t hash) {
  text_ = body_.substr(hash, line_end_ - hash);
  return Entry::kComment;
}

absl::StatusOr<Entry> Parser::ParseCommentScrape() {
  const size_t hash = pos_;
  ++pos_;
  if (AtLineEnd() || !IsBlank(body_[pos_])) {
    // Lexed as one comment token, which a NUL byte ends as end of input.
    if (std::memchr(body_.data() + pos_, '\0', line_end_ - pos_) != nullptr) {
      done_ = true;
      return Entry::kEOF;
    }
    return AsComment(hash);
  }
  SkipBlanks();
  std::string_view rest = body_.substr(pos_, line_end_ - pos_);
  Entry kind;
  if (rest.size() > 4 && IsBlank(rest[4]) && rest.substr(0, 4) == "HELP") {
    kind = Entry::kHelp;
  } else if (rest.size() > 4 && IsBlank(rest[4]) &&
             rest.substr(0, 4) == "TYPE") {
    kind = Entry::kType;
  } else {
    return AsComment(hash);
  }
  pos_ += 4;
  SkipBlanks();
  const size_t name_pos = pos_;
  pos_ = MetricNameEnd(pos_);
  name_ = body_.substr(name_pos, pos_ - name_pos);
  if (name_.empty() || (name_[0] >= '0' && name_[0] <= '9')) {
    return Error(name_pos, fmt::format("expected metric name after \"# {}\"",
                                       kind == Entry::kHelp ? "HELP" : "TYPE"));
  }
  if (!AtLineEnd()) ++pos_;  // whatever byte it is
  rest = body_.substr(pos_, line_end_ - pos_);
  if (kind == Entry::kHelp) {
    if (size_t bad = internal::InvalidUtf8Offset(rest);
        bad != std::string_view::npos) {
      return Error(pos_ + bad, "invalid UTF-8 in help text");
    }
    text_ = internal::UnescapeHelp(rest, false, &scratch_);
    return kind;
  }
  std::optional<MetricType> mt = internal::ParseMetricType(rest, false);
  if (!mt.has_value()) {
    return Error(pos_, fmt::format("invalid metric type {} for {}",
                                   QuoteForError(rest), QuoteForError(name_)));
  }
  type_ = *mt;
  return kind;
}

absl::StatusOr<Entry> Parser::ParseCommentExpfmt() {
  const size_t hash = pos_;
  ++pos_;
  SkipBlanks();
  std::string_view kw = NextToken();
  if (AtLineEnd() || (kw != "HELP" && kw != "TYPE")) return AsComment(hash);
  const Entry kind = kw == "HELP" ? Entry::kHelp : Entry::kType;
  SkipBlanks();
  const size_t name_pos = pos_;
  if (pos_ < line_end_ && !(body_[pos_] >= '0' && body_[pos_] <= '9')) {
    pos_ = MetricNameEnd(pos_);
  }
  name_ = body_.substr(name_pos, pos_ - name_pos);
  if (AtLineEnd()) return AsComment(hash);  // no text: not a syntax error
  if (!IsBlank(body_[pos_])) {
    size_t end = pos_;
    while (end < line_end_ && !IsBlank(body_[end])) ++end;
    return Error(
        name_pos,
        fmt::format("invalid metric name {} in comment",
                    QuoteForError(body_.substr(name_pos, end - name_pos))));
  }
  SkipBlanks();
  if (AtLineEnd()) return AsComment(hash);
  std::string_view rest = body_.substr(pos_, line_end_ - pos_);
  if (kind == Entry::kHelp) {
    size_t bad = 0;
    if (!internal::UnescapeHelpExpfmt(rest, &scratch_, &text_, &bad)) {
      return Error(pos_ + bad,
                   fmt::format("invalid escape sequence {} in help text "
                               "(only \\\\ and \\n are allowed)",
                               QuoteForError(rest.substr(bad, 2))));
    }
    return kind;
  }
  std::optional<MetricType> mt = internal::ParseMetricTypeExpfmt(rest);
  if (!mt.has_value()) {
    return Error(pos_, fmt::format("invalid metric type {} for {}",
                                   QuoteForError(rest), QuoteForError(name_)));
  }
  type_ = *mt;
  return kind;
}

absl::StatusOr<Entry> Parser::ParseCommentOpenMetrics() {
  const size_t hash = pos_;
  ++pos_;
  std::string_view rest = body_.substr(pos_, line_end_ - pos_);
  auto keyword = [&](std::string_view kw) {
    return rest.size() > kw.size() + 1 && rest[0] == ' ' &&
           rest.substr(1, kw.size()) == kw && rest[kw.size() + 1] == ' ';
  };
  Entry kind;
  if (rest == " EOF") {
    return Entry::kEOF;
  } else if (keyword("HELP")) {
    kind = Entry::kHelp;
  } else if (keyword("TYPE")) {
    kind = Entry::kType;
  } else if (keyword("UNIT")) {
    kind = Entry::kUnit;
  } else {
    return Error(std::min(hash + 2, line_end_),
                 "invalid comment: OpenMetrics allows only \"# HELP\", "
                 "\"# TYPE\", \"# UNIT\" and \"# EOF\" lines");
  }
  pos_ += 6;
  const size_t name_pos = pos_;
  pos_ = MetricNameEnd(pos_);
  std::string_view name = body_.substr(name_pos, pos_ - name_pos);
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) {
    return Error(name_pos, fmt::format("expected metric name after \"# {}\"",
                                       body_.substr(name_pos - 5, 4)));
  }
  name_ = name;
  if (AtLineEnd() || body_[pos_] != ' ') {
    return Error(pos_, fmt::format("expected a space and text after {}",
                                   QuoteForError(name)));
  }
  ++pos_;
  rest = body_.substr(pos_, line_end_ - pos_);
  switch (kind) {
    case Entry::kHelp:
      if (size_t bad = internal::InvalidUtf8Offset(rest);
          bad != std::string_view::npos) {
        return Error(pos_ + bad, "invalid UTF-8 in help text");
      }
      text_ = internal::UnescapeHelp(rest, true, &scratch_);
      return kind;
    case Entry::kType: {
      std::optional<MetricType> mt = internal::ParseMetricType(rest, true);
      if (!mt.has_value()) {
        return Error(pos_,
                     fmt::format("invalid metric type {} for {}",
                                 QuoteForError(rest), QuoteForError(name)));
      }
      type_ = *mt;
      return kind;
    }
    default: {  // kUnit
      std::string_view unit = rest;
      if (!unit.empty() && !(name.size() > unit.size() &&
                             name.substr(name.size() - unit.size()) == unit &&
                             name[name.size() - unit.size() - 1] == '_')) {
        return Error(pos_,
                     fmt::format("unit {} is not a suffix of metric name {}",
                                 QuoteForError(unit), QuoteForError(name)));
      }
      text_ = unit;
      return kind;
    }
  }
}

}  // namespace vigil::textparse
