#include "core/textparse/parser.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/status/status.h"
#include "core/textparse/scan.h"
#include "fmt/format.h"

namespace vigil::textparse {

using internal::IsBlank;
using internal::IsDigit;
using internal::IsLabelNameChar;
using internal::IsMetricNameChar;
using internal::IsNameStop;
using internal::QuoteForError;

Format FormatFromContentType(std::string_view content_type) {
  constexpr std::string_view kOM = "application/openmetrics-text";
  return content_type.substr(0, kOM.size()) == kOM ? Format::kOpenMetrics
                                                   : Format::kPrometheusText;
}

std::string_view MetricTypeName(MetricType t) {
  switch (t) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kGaugeHistogram:
      return "gaugehistogram";
    case MetricType::kSummary:
      return "summary";
    case MetricType::kInfo:
      return "info";
    case MetricType::kStateSet:
      return "stateset";
    case MetricType::kUnknown:
      break;
  }
  return "untyped";
}

Parser::Parser(std::string_view body, Format format, ParserOptions options)
    : body_(body),
      format_(format),
      om_(format == Format::kOpenMetrics),
      expfmt_(!om_ && options.dialect == Dialect::kExpfmt) {}

absl::Status Parser::Error(size_t pos, std::string_view msg) const {
  return absl::InvalidArgumentError(
      fmt::format("{}:{}: {}", line_, pos - line_start_ + 1, msg));
}

void Parser::SkipBlanks() {
  while (pos_ < line_end_ && IsBlank(body_[pos_])) ++pos_;
}

// The run of non-blank bytes at the cursor; advances past it.
std::string_view Parser::NextToken() {
  size_t start = pos_;
  while (pos_ < line_end_ && !IsBlank(body_[pos_])) ++pos_;
  return body_.substr(start, pos_ - start);
}

// The value token of a sample: up to a blank, or, in the text format's
// scrape dialect, also up to a '{' (Prometheus lexes `[^{ \t\n]+`). In
// OpenMetrics only a space ends it: a tab is part of the token.
std::string_view Parser::NextTokenUntil(bool stop_at_brace) {
  size_t start = pos_;
  if (om_) {
    while (pos_ < line_end_ && body_[pos_] != ' ') ++pos_;
  } else {
#if defined(__SSE2__)
    // Usually one 16-byte step: the value and the line end are near. It may
    // read past the line (not the body); bits past line_end_ are ignored.
    const __m128i space = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t'),
                  brace = _mm_set1_epi8(stop_at_brace ? '{' : ' ');
    const char* data = body_.data();
    while (pos_ < line_end_ && pos_ + 16 <= body_.size()) {
      const __m128i v =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + pos_));
      unsigned m = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(
          _mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, tab)),
          _mm_cmpeq_epi8(v, brace))));
      const size_t left = line_end_ - pos_;
      if (left < 16) m |= 1u << left;  // the line end stops it too
      if (m != 0) {
        pos_ += static_cast<size_t>(__builtin_ctz(m));
        return body_.substr(start, pos_ - start);
      }
      pos_ += 16;
    }
#endif
    while (pos_ < line_end_ && !IsBlank(body_[pos_]) &&
           !(stop_at_brace && body_[pos_] == '{')) {
      ++pos_;
    }
  }
  return body_.substr(start, pos_ - start);
}

// End of the run of metric-name bytes starting at `from`.
size_t Parser::MetricNameEnd(size_t from) const {
  const char* data = body_.data();
#if defined(__SSE2__)
  // 16 bytes at a time: [a-zA-Z] is (c | 0x20) in [a-z], [0-9:] is c in
  // ['0', ':'], plus '_'; unsigned x <= k as max(x, k) == k.
  const __m128i a = _mm_set1_epi8('a'), zero = _mm_set1_epi8('0'),
                under = _mm_set1_epi8('_'), case_bit = _mm_set1_epi8(0x20),
                k25 = _mm_set1_epi8(25), k10 = _mm_set1_epi8(10);
  while (from + 16 <= line_end_) {
    const __m128i v =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + from));
    const __m128i alpha = _mm_sub_epi8(_mm_or_si128(v, case_bit), a);
    const __m128i digit = _mm_sub_epi8(v, zero);
    const __m128i ok = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(_mm_max_epu8(alpha, k25), k25),
                     _mm_cmpeq_epi8(_mm_max_epu8(digit, k10), k10)),
        _mm_cmpeq_epi8(v, under));
    const unsigned bad = ~static_cast<unsigned>(_mm_movemask_epi8(ok)) & 0xFFFF;
    if (bad != 0) return from + static_cast<size_t>(__builtin_ctz(bad));
    from += 16;
  }
#endif
  while (from < line_end_ && IsMetricNameChar(data[from])) ++from;
  return from;
}

absl::StatusOr<Entry> Parser::Next() {
  known_ = nullptr;
  return NextEntry();
}

absl::StatusOr<Entry> Parser::Next(KnownSeries* known) {
  known_ = known;
  absl::StatusOr<Entry> e = NextEntry();
  known_ = nullptr;
  return e;
}

absl::Status Parser::ParseSkippedLabels() {
  if (!labels_skipped_) return absl::OkStatus();
  labels_skipped_ = false;
  const size_t pos = pos_;
  pos_ = labels_open_;
  labels_.clear();
  absl::Status s = ParseLabels(&labels_, false);
  pos_ = pos;
  return s;
}

// Offset just past the '}' closing the label set that opens at `open`, or
// npos if the line has none. For a label set ParseLabels accepts this is
// where it stops: outside quoted values a valid set has no '"' or '}', and
// inside one a backslash escapes the next byte, as ParseLabelValue reads it.
size_t Parser::LabelSetEnd(size_t open) const {
  const char* data = body_.data();
  size_t i = open + 1;
  bool in_value = false;
  // A backslash escapes the next byte inside a value (outside one the set
  // is invalid anyway, and so never a known text).
#if defined(__SSE2__)
  // 16 bytes at a time: one mask each of '"', '}' and '\\', walked bit by
  // bit (a label set has few of them) with the quote state.
  const __m128i quote = _mm_set1_epi8('"'), brace = _mm_set1_epi8('}'),
                escape = _mm_set1_epi8('\\');
  unsigned carry = 0;  // 1: the chunk's first byte is escaped
  while (i + 16 <= line_end_) {
    const __m128i v =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
    const unsigned mq =
        static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)));
    const unsigned mb =
        static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, brace)));
    const unsigned me =
        static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, escape)));
    unsigned bits = (mq | mb | me) & ~carry;
    carry = 0;
    while (bits != 0) {
      const unsigned k = static_cast<unsigned>(__builtin_ctz(bits));
      const unsigned bit = 1u << k;
      if ((mq & bit) != 0) {
        in_value = !in_value;
      } else if ((mb & bit) != 0) {
        if (!in_value) return i + k + 1;
      } else if (in_value) {
        if (k == 15) {
          carry = 1;
        } else {
          bits &= ~(bit << 1);
        }
      }
      bits &= bits - 1;
    }
    i += 16;
  }
  i += carry;
#endif
  for (; i < line_end_; ++i) {
    const char c = data[i];
    if (c == '"') {
      in_value = !in_value;
    } else if (c == '}') {
      if (!in_value) return i + 1;
    } else if (c == '\\' && in_value) {
      ++i;
    }
  }
  return std::string_view::npos;
}

absl::StatusOr<Entry> Parser::NextEntry() {
  if (!error_.ok()) return error_;
  if (done_) return Entry::kEOF;
  const char* data = body_.data();
  for (;;) {
    if (next_line_ >= body_.size()) {
      done_ = true;
      if (format_ == Format::kOpenMetrics) {
        // Point just past the last byte: the line after a final '\n'.
        if (body_.empty() || body_.back() == '\n') {
          ++line_;
          line_start_ = body_.size();
        }
        error_ = Error(body_.size(),
                       "unexpected end of input: an OpenMetrics exposition "
                       "must end with \"# EOF\"");
        return error_;
      }
      return Entry::kEOF;
    }
    line_start_ = next_line_;
    ++line_;
    const void* nl =
        std::memchr(data + line_start_, '\n', body_.size() - line_start_);
    line_end_ = nl ? static_cast<const char*>(nl) - data : body_.size();
    next_line_ = nl ? line_end_ + 1 : body_.size();
    pos_ = line_start_;
    if (!om_) {
      SkipBlanks();
      if (AtLineEnd()) continue;  // blank lines are allowed in 0.0.4
      // Prometheus's text lexer takes a NUL where a token may start a line
      // for the end of input; expfmt reports an invalid metric name.
      if (body_[pos_] == '\0' && !expfmt_) {
        done_ = true;
        return Entry::kEOF;
      }
    } else if (const void* nul = std::memchr(data + line_start_, '\0',
                                             line_end_ - line_start_)) {
      error_ = Error(static_cast<const char*>(nul) - data,
                     "invalid NUL byte (binary data in a text exposition?)");
      return error_;
    } else if (AtLineEnd()) {
      error_ = Error(pos_, "empty line is not allowed in OpenMetrics");
      return error_;
    }
    absl::StatusOr<Entry> e = ParseLine();
    if (!e.ok()) {
      error_ = e.status();
      return error_;
    }
    if (*e == Entry::kEOF) {
      done_ = true;
      if (next_line_ < body_.size()) {
        line_start_ = next_line_;
        ++line_;
        error_ = Error(line_start_, "unexpected content after \"# EOF\"");
        return error_;
      }
    }
    return e;
  }
}

absl::StatusOr<Entry> Parser::ParseLine() {
  scratch_.clear();
  if (body_[pos_] == '#') return ParseComment();
  return ParseSeries();
}

absl::StatusOr<Entry> Parser::ParseComment() {
  if (om_) return ParseCommentOpenMetrics();
  return expfmt_ ? ParseCommentExpfmt() : ParseCommentScrape();
}

absl::StatusOr<Entry> Parser::ParseSeries() {
  const size_t start = pos_;
  pos_ = MetricNameEnd(pos_);
  name_ = body_.substr(start, pos_ - start);
  if (name_.empty()) {
    return Error(start, fmt::format("expected metric name, got {}",
                                    QuoteForError(body_.substr(pos_, 1))));
  }
  // In the text format the name is the longest run of name bytes and the
  // value may follow at once (`s.9` is `s` = .9, in both Prometheus
  // parsers); OpenMetrics wants a '{' or a space after it.
  const bool name_ends_ok =
      !om_ || AtLineEnd() || body_[pos_] == ' ' || body_[pos_] == '{';
  // name_ is a run of [a-zA-Z0-9_:], so IsValidMetricName(name_) is just
  // "does not start with a digit".
  if (!name_ends_ok || IsDigit(name_[0])) {
    size_t end = pos_;
    while (end < line_end_ && !IsBlank(body_[end]) && body_[end] != '{') ++end;
    return Error(start,
                 fmt::format("invalid metric name {}",
                             QuoteForError(body_.substr(start, end - start))));
  }
  labels_.clear();
  labels_skipped_ = false;
  has_exemplar_ = false;
  exemplar_labels_.clear();
  timestamp_.reset();
  series_text_ = name_;
  const bool abutting = pos_ < line_end_ && !IsBlank(body_[pos_]);
  if (!om_) SkipBlanks();  // both text parsers allow `name {labels}`
  if (pos_ < line_end_ && body_[pos_] == '{') {
    const size_t open = pos_;
    const size_t end =
        known_ != nullptr ? LabelSetEnd(open) : std::string_view::npos;
    if (end != std::string_view::npos &&
        known_->IsKnown(body_.substr(start, end - start))) {
      labels_skipped_ = true;
      labels_open_ = open;
      pos_ = end;
    } else {
      if (absl::Status s = ParseLabels(&labels_, false); !s.ok()) return s;
    }
    series_text_ = body_.substr(start, pos_ - start);
  } else if (known_ != nullptr) {
    (void)known_->IsKnown(series_text_);  // nothing to skip: just the name
  }
  if (om_) return ParseOpenMetricsTail();
  return ParseValueAndTimestamp(abutting);
}

// Text format: blanks, the value, then optionally blanks and a timestamp.
// `abutting`: nothing separated the value from the metric name.
absl::StatusOr<Entry> Parser::ParseValueAndTimestamp(bool abutting) {
  SkipBlanks();
  const size_t value_pos = pos_;
  std::string_view tok = NextTokenUntil(/*stop_at_brace=*/!expfmt_);
  if (tok.empty()) {
    if (AtLineEnd()) {
      return Error(pos_, fmt::format("missing value after {}",
                                     QuoteForError(series_text_)));
    }
    return Error(pos_, fmt::format("unexpected {} after {}; want a value",
                                   QuoteForError(body_.substr(pos_, 1)),
                                   QuoteForError(series_text_)));
  }
  if (!internal::ParseFloat(tok, &value_)) {
    // `foo-bar 1`: both Prometheus parsers read metric `foo` and the value
    // "-bar"; naming the whole word is the clearer message.
    if (abutting && labels_.empty() && series_text_.size() == name_.size()) {
      const size_t start = name_.data() - body_.data();
      return Error(
          start, fmt::format("invalid metric name {}",
                             QuoteForError(body_.substr(start, pos_ - start))));
    }
    return Error(
        value_pos,
        fmt::format("invalid value {}: want a float, NaN, +Inf or -Inf",
                    QuoteForError(tok)));
  }
  if (AtLineEnd()) return Entry::kSeries;
  SkipBlanks();
  // Prometheus: blanks before the line end are fine; a timestamp is a run
  // of digits. expfmt: any blank after the value means a timestamp follows
  // (ParseInt, so a sign is allowed), and nothing may follow it.
  if (AtLineEnd() && !expfmt_) return Entry::kSeries;
  const size_t ts_pos = pos_;
  if (!expfmt_ && body_[pos_] == '#') {
    return Error(pos_,
                 "unexpected \"#\" after sample: exemplars are only "
                 "allowed in OpenMetrics");
  }
  tok = NextToken();
  if (!expfmt_ && (tok[0] == '+' || tok[0] == '-')) {
    return Error(ts_pos, fmt::format("invalid timestamp {}: want an unsigned "
                                     "integer in milliseconds since the epoch",
                                     QuoteForError(tok)));
  }
  if (absl::Status s = ParseTimestamp(tok, ts_pos, &timestamp_); !s.ok()) {
    return s;
  }
  if (!expfmt_) SkipBlanks();
  if (AtLineEnd()) return Entry::kSeries;
  const size_t blank_pos = pos_;
  SkipBlanks();
  if (AtLineEnd()) {  // expfmt only: "spurious string after timestamp"
    return Error(blank_pos, "unexpected blank after timestamp");
  }
  const size_t junk_pos = pos_;
  std::string_view junk = NextToken();
  return Error(junk_pos, fmt::format("unexpected {} after timestamp; want end "
                                     "of line",
                                     QuoteForError(junk)));
}

// OpenMetrics: exactly one space before the value, before the timestamp and
// before " # {exemplar}"; nothing else.
absl::StatusOr<Entry> Parser::ParseOpenMetricsTail() {
  if (AtLineEnd()) {
    return Error(pos_, fmt::format("missing value after {}",
                                   QuoteForError(series_text_)));
  }
  if (body_[pos_] != ' ') {
    return Error(pos_, fmt::format("unexpected {} after {}; want a space "
                                   "and a value",
                                   QuoteForError(body_.substr(pos_, 1)),
                                   QuoteForError(series_text_)));
  }
  ++pos_;
  const size_t value_pos = pos_;
  std::string_view tok = NextTokenUntil(false);
  if (!internal::ParseFloat(tok, &value_)) {
    return Error(
        value_pos,
        fmt::format("invalid value {}: want a float, NaN, +Inf or -Inf",
                    QuoteForError(tok)));
  }
  auto at_exemplar = [&] {
    return line_end_ - pos_ >= 4 && body_.substr(pos_, 4) == " # {";
  };
  if (AtLineEnd()) return Entry::kSeries;
  if (!at_exemplar()) {
    ++pos_;  // the space NextTokenUntil stopped at
    const size_t ts_pos = pos_;
    tok = NextTokenUntil(false);
    if (absl::Status s = ParseTimestamp(tok, ts_pos, &timestamp_); !s.ok()) {
      return s;
    }
    if (AtLineEnd()) return Entry::kSeries;
    if (!at_exemplar()) {
      return Error(
          pos_,
          fmt::format("unexpected {} after timestamp; want end "
                      "of line or an exemplar",
                      QuoteForError(body_.substr(pos_, line_end_ - pos_))));
    }
  }
  ++pos_;
  if (absl::Status s = ParseExemplar(); !s.ok()) return s;
  return Entry::kSeries;
}

absl::Status Parser::ParseTimestamp(std::string_view tok, size_t col,
                                    std::optional<vigil::Timestamp>* out) {
  int64_t ms = 0;
  bool ok = format_ == Format::kOpenMetrics
                ? internal::ParseSecondsAsMillis(tok, &ms)
                : internal::ParseInt64(tok, &ms);
  if (!ok) {
    return Error(
        col, fmt::format("invalid timestamp {}: want {}", QuoteForError(tok),
                         format_ == Format::kOpenMetrics
                             ? "seconds since the epoch (a finite float)"
                             : "an integer in milliseconds since the epoch"));
  }
  *out = ms;
  return absl::OkStatus();
}

// At the '#' of " # {labels} value [timestamp]" (the caller saw "# {").
// Like the rest of an OpenMetrics line, single spaces separate the parts.
absl::Status Parser::ParseExemplar() {
  pos_ += 2;
  if (absl::Status s = ParseLabels(&exemplar_labels_, true); !s.ok()) return s;
  if (AtLineEnd() || body_[pos_] != ' ') {
    return Error(pos_, "invalid exemplar: missing value after its labels");
  }
  ++pos_;
  const size_t value_pos = pos_;
  std::string_view tok = NextTokenUntil(false);
  if (!internal::ParseFloat(tok, &exemplar_value_)) {
    return Error(value_pos,
                 fmt::format("invalid exemplar value {}", QuoteForError(tok)));
  }
  exemplar_timestamp_.reset();
  if (!AtLineEnd()) {
    ++pos_;
    const size_t ts_pos = pos_;
    tok = NextTokenUntil(false);
    if (absl::Status s = ParseTimestamp(tok, ts_pos, &exemplar_timestamp_);
        !s.ok()) {
      return s;
    }
    if (!AtLineEnd()) {
      return Error(pos_, "unexpected text after exemplar timestamp");
    }
  }
  has_exemplar_ = true;
  return absl::OkStatus();
}

absl::Status Parser::ParseLabels(std::vector<LabelRef>* out, bool exemplar) {
  const size_t open = pos_;
  ++pos_;  // '{'
  auto unterminated = [&] {
    return Error(open, "unterminated label set: missing \"}\"");
  };
  // Blanks may surround every token in the text format, never in
  // OpenMetrics.
  auto skip = [&] {
    if (!om_) SkipBlanks();
  };
  for (;;) {
    skip();
    if (AtLineEnd()) return unterminated();
    if (body_[pos_] == '}') {
      ++pos_;
      break;
    }
    const size_t name_pos = pos_;
    while (pos_ < line_end_ && IsLabelNameChar(body_[pos_])) ++pos_;
    std::string_view name = body_.substr(name_pos, pos_ - name_pos);
    size_t end = pos_;
    while (end < line_end_ && !IsNameStop(body_[end])) ++end;
    // name is a run of [a-zA-Z0-9_], so IsValidLabelName(name) is just
    // "does not start with a digit".
    if (end > pos_ || (!name.empty() && IsDigit(name[0]))) {
      return Error(
          name_pos,
          fmt::format("invalid label name {}",
                      QuoteForError(body_.substr(name_pos, end - name_pos))));
    }
    if (name.empty()) {
      return Error(name_pos, fmt::format("expected label name, got {}",
                                         QuoteForError(body_.substr(pos_, 1))));
    }
    if (!exemplar && name == kMetricName) {
      return Error(name_pos,
                   "label name \"__name__\" is reserved for the "
                   "metric name");
    }
    skip();
    if (AtLineEnd()) return unterminated();
    if (body_[pos_] != '=') {
      return Error(pos_,
                   fmt::format("expected \"=\" after label name {}, got {}",
                               QuoteForError(name),
                               QuoteForError(body_.substr(pos_, 1))));
    }
    ++pos_;
    skip();
    if (AtLineEnd()) return unterminated();
    if (body_[pos_] != '"') {
      return Error(pos_,
                   fmt::format("expected quoted value for label {}, got {}",
                               QuoteForError(name),
                               QuoteForError(body_.substr(pos_, 1))));
    }
    LabelRef l;
    l.name = name;
    if (absl::Status s = ParseLabelValue(&l); !s.ok()) return s;
    out->push_back(l);
    skip();
    if (AtLineEnd()) return unterminated();
    if (body_[pos_] == ',') {
      ++pos_;
      continue;
    }
    if (body_[pos_] == '}') {
      ++pos_;
      break;
    }
    // Prometheus's scrape parser makes the comma between labels optional.
    if (!om_ && !expfmt_) continue;
    return Error(pos_, fmt::format("expected \",\" or \"}}\" after label {}, "
                                   "got {}",
                                   QuoteForError(name),
                                   QuoteForError(body_.substr(pos_, 1))));
  }
  return CheckDuplicates(*out);
}

namespace {

// Whether any byte of `w` is `c` (exact: no false positives or negatives).
inline uint64_t HasByte(uint64_t w, char c) {
  const uint64_t x = w ^ (0x0101010101010101ULL * static_cast<uint8_t>(c));
  return (x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL;
}

}  // namespace

absl::Status Parser::ParseLabelValue(LabelRef* l) {
  const size_t quote = pos_;
  const char* data = body_.data();
  size_t p = quote + 1;
  {
    // Fast path, the common value: ASCII up to the closing quote, no
    // backslash. One pass, 8 bytes at a time, instead of two memchr and a
    // UTF-8 check; anything else takes the general path below.
    size_t i = p;
    for (; i + 8 <= line_end_; i += 8) {
      uint64_t w;
      std::memcpy(&w, data + i, 8);
      if ((HasByte(w, '"') | HasByte(w, '\\') | (w & 0x8080808080808080ULL)) !=
          0) {
        break;
      }
    }
    while (i < line_end_ && data[i] != '"' && data[i] != '\\' &&
           static_cast<unsigned char>(data[i]) < 0x80) {
      ++i;
    }
    if (i < line_end_ && data[i] == '"') {
      l->value = body_.substr(p, i - p);
      pos_ = i + 1;
      return absl::OkStatus();
    }
  }
  const void* q = std::memchr(data + p, '"', line_end_ - p);
  size_t limit = q ? static_cast<const char*>(q) - data : line_end_;
  const void* bs = std::memchr(data + p, '\\', limit - p);
  if (bs == nullptr) {
    if (q == nullptr)
      return Error(quote,
                   "unterminated label value: missing "
                   "closing quote");
    l->value = body_.substr(p, limit - p);
    pos_ = limit + 1;
  } else {
    // Slow path: unescape into scratch_. Offsets, not views, are stored
    // because later appends may move the buffer.
    l->in_scratch = true;
    l->off = scratch_.size();
    for (;;) {
      size_t b = static_cast<const char*>(bs) - data;
      scratch_.append(data + p, b - p);
      if (b + 1 >= line_end_) {
        return Error(quote, "unterminated label value: missing closing quote");
      }
      char c = data[b + 1];
      if (c == '\\' || c == '"') {
        scratch_.push_back(c);
      } else if (c == 'n') {
        scratch_.push_back('\n');
      } else if (!expfmt_) {
        // Prometheus's lexers take any escaped byte and unescape only these
        // three; `\t` stays a backslash and a 't'.
        scratch_.append(data + b, 2);
      } else {
        return Error(b, fmt::format("invalid escape sequence {} in label value "
                                    "(only \\\\, \\\" and \\n are allowed)",
                                    QuoteForError(body_.substr(b, 2))));
      }
      p = b + 2;
      q = std::memchr(data + p, '"', line_end_ - p);
      limit = q ? static_cast<const char*>(q) - data : line_end_;
      bs = std::memchr(data + p, '\\', limit - p);
      if (bs == nullptr) {
        if (q == nullptr) {
          return Error(quote,
                       "unterminated label value: missing closing quote");
        }
        scratch_.append(data + p, limit - p);
        break;
      }
    }
    l->len = scratch_.size() - l->off;
    pos_ = limit + 1;
  }
  const size_t bad = internal::InvalidUtf8Offset(Resolve(*l).value);
  if (bad != std::string_view::npos) {
    return Error(quote + 1 + (l->in_scratch ? 0 : bad),
                 fmt::format("invalid UTF-8 in value of label {}",
                             QuoteForError(l->name)));
  }
  return absl::OkStatus();
}

absl::Status Parser::CheckDuplicates(const std::vector<LabelRef>& labels) {
  const size_t n = labels.size();
  if (n < 2) return absl::OkStatus();
  auto dup = [&](std::string_view name) {
    // Report at the second occurrence.
    const char* second = nullptr;
    for (const LabelRef& l : labels) {
      if (l.name == name) {
        if (second == nullptr) {
          second = l.name.data();
          continue;
        }
        second = l.name.data();
        break;
      }
    }
    return Error(second - body_.data(),
                 fmt::format("duplicate label name {} in {}",
                             QuoteForError(name), QuoteForError(name_)));
  };
  if (n <= 16) {
    for (size_t i = 1; i < n; ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (labels[i].name == labels[j].name) return dup(labels[i].name);
      }
    }
    return absl::OkStatus();
  }
  sorted_.clear();
  for (const LabelRef& l : labels) sorted_.push_back(l.name);
  std::sort(sorted_.begin(), sorted_.end());
  auto it = std::adjacent_find(sorted_.begin(), sorted_.end());
  if (it != sorted_.end()) return dup(*it);
  return absl::OkStatus();
}

vigil::Labels Parser::BuildLabels() const {
  assert(!labels_skipped_ && "ParseSkippedLabels() first");
  std::vector<vigil::Label> out;
  out.reserve(labels_.size() + 1);
  out.push_back({std::string(kMetricName), std::string(name_)});
  for (const LabelRef& r : labels_) {
    LabelView l = Resolve(r);
    if (l.value.empty()) continue;
    out.push_back({std::string(l.name), std::string(l.value)});
  }
  return vigil::Labels::FromUnsorted(std::move(out));
}

}  // namespace vigil::textparse
