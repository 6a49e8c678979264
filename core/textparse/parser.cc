#include "core/textparse/parser.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "core/textparse/scan.h"
#include "fmt/format.h"

namespace vigil::textparse {

using internal::IsBlank;
using internal::IsLabelNameChar;
using internal::IsMetricNameChar;
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

Parser::Parser(std::string_view body, Format format)
    : body_(body), format_(format) {}

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

absl::StatusOr<Entry> Parser::Next() {
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
    if (const void* nul =
            std::memchr(data + line_start_, '\0', line_end_ - line_start_)) {
      error_ = Error(static_cast<const char*>(nul) - data,
                     "invalid NUL byte (binary data in a text exposition?)");
      return error_;
    }
    if (format_ == Format::kPrometheusText) {
      SkipBlanks();
      if (AtLineEnd()) continue;  // blank lines are allowed in 0.0.4
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
  const size_t hash = pos_;
  ++pos_;
  SkipBlanks();
  const size_t kw_pos = pos_;
  std::string_view kw = NextToken();
  const bool om = format_ == Format::kOpenMetrics;
  Entry kind;
  if (kw == "HELP") {
    kind = Entry::kHelp;
  } else if (kw == "TYPE") {
    kind = Entry::kType;
  } else if (om && kw == "UNIT") {
    kind = Entry::kUnit;
  } else if (om && kw == "EOF" && (SkipBlanks(), AtLineEnd())) {
    return Entry::kEOF;
  } else if (om) {
    return Error(kw_pos,
                 "invalid comment: OpenMetrics allows only \"# HELP\", "
                 "\"# TYPE\", \"# UNIT\" and \"# EOF\" lines");
  } else {
    text_ = body_.substr(hash, line_end_ - hash);
    return Entry::kComment;
  }
  if (!AtLineEnd() && !IsBlank(body_[pos_])) {
    return Error(kw_pos,
                 fmt::format("invalid comment keyword {}", QuoteForError(kw)));
  }
  SkipBlanks();
  const size_t name_pos = pos_;
  std::string_view name = NextToken();
  if (name.empty()) {
    return Error(name_pos,
                 fmt::format("missing metric name after \"# {}\"", kw));
  }
  if (!IsValidMetricName(name)) {
    return Error(name_pos,
                 fmt::format("invalid metric name {}", QuoteForError(name)));
  }
  name_ = name;
  // Text after the name: one blank separates it in OpenMetrics; 0.0.4
  // tolerates several.
  if (!AtLineEnd()) ++pos_;
  if (!om) SkipBlanks();
  std::string_view rest = body_.substr(pos_, line_end_ - pos_);
  switch (kind) {
    case Entry::kHelp:
      text_ = internal::UnescapeHelp(rest, om, &scratch_);
      return kind;
    case Entry::kType: {
      std::string_view t = NextToken();
      SkipBlanks();
      std::optional<MetricType> mt = internal::ParseMetricType(t, om);
      if (!mt.has_value()) {
        return Error(rest.data() - body_.data(),
                     fmt::format("invalid metric type {} for {}",
                                 QuoteForError(t), QuoteForError(name)));
      }
      if (!AtLineEnd()) {
        return Error(pos_, "unexpected text after metric type");
      }
      type_ = *mt;
      return kind;
    }
    default: {  // kUnit
      std::string_view unit = NextToken();
      SkipBlanks();
      if (!AtLineEnd()) return Error(pos_, "unexpected text after unit");
      if (!unit.empty() && !(name.size() > unit.size() &&
                             name.substr(name.size() - unit.size()) == unit &&
                             name[name.size() - unit.size() - 1] == '_')) {
        return Error(rest.data() - body_.data(),
                     fmt::format("unit {} is not a suffix of metric name {}",
                                 QuoteForError(unit), QuoteForError(name)));
      }
      text_ = unit;
      return kind;
    }
  }
}

absl::StatusOr<Entry> Parser::ParseSeries() {
  const size_t start = pos_;
  while (pos_ < line_end_ && IsMetricNameChar(body_[pos_])) ++pos_;
  name_ = body_.substr(start, pos_ - start);
  const bool name_ends_ok =
      AtLineEnd() || IsBlank(body_[pos_]) || body_[pos_] == '{';
  if (name_.empty()) {
    return Error(start, fmt::format("expected metric name, got {}",
                                    QuoteForError(body_.substr(pos_, 1))));
  }
  if (!name_ends_ok || !IsValidMetricName(name_)) {
    size_t end = pos_;
    while (end < line_end_ && !IsBlank(body_[end]) && body_[end] != '{') ++end;
    return Error(start,
                 fmt::format("invalid metric name {}",
                             QuoteForError(body_.substr(start, end - start))));
  }
  labels_.clear();
  has_exemplar_ = false;
  exemplar_labels_.clear();
  timestamp_.reset();
  if (pos_ < line_end_ && body_[pos_] == '{') {
    if (absl::Status s = ParseLabels(&labels_, false); !s.ok()) return s;
  }
  series_text_ = body_.substr(start, pos_ - start);
  if (AtLineEnd()) {
    return Error(pos_, fmt::format("missing value after {}",
                                   QuoteForError(series_text_)));
  }
  if (!IsBlank(body_[pos_])) {
    return Error(pos_, fmt::format("unexpected {} after {}; want a blank "
                                   "and a value",
                                   QuoteForError(body_.substr(pos_, 1)),
                                   QuoteForError(series_text_)));
  }
  SkipBlanks();
  const size_t value_pos = pos_;
  std::string_view tok = NextToken();
  if (tok.empty()) {
    return Error(value_pos, fmt::format("missing value after {}",
                                        QuoteForError(series_text_)));
  }
  if (!internal::ParseFloat(tok, &value_)) {
    return Error(
        value_pos,
        fmt::format("invalid value {}: want a float, NaN, +Inf or -Inf",
                    QuoteForError(tok)));
  }
  SkipBlanks();
  const bool om = format_ == Format::kOpenMetrics;
  if (!AtLineEnd() && body_[pos_] != '#') {
    const size_t ts_pos = pos_;
    tok = NextToken();
    if (absl::Status s = ParseTimestamp(tok, ts_pos, &timestamp_); !s.ok()) {
      return s;
    }
    SkipBlanks();
  }
  if (AtLineEnd()) return Entry::kSeries;
  if (body_[pos_] == '#') {
    if (!om) {
      return Error(pos_,
                   "unexpected \"#\" after sample: exemplars are only "
                   "allowed in OpenMetrics");
    }
    if (absl::Status s = ParseExemplar(); !s.ok()) return s;
    return Entry::kSeries;
  }
  const size_t junk_pos = pos_;
  std::string_view junk = NextToken();
  return Error(junk_pos, fmt::format("unexpected {} after timestamp; want end "
                                     "of line",
                                     QuoteForError(junk)));
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

absl::Status Parser::ParseExemplar() {
  const size_t hash = pos_;
  ++pos_;
  if (AtLineEnd() || !IsBlank(body_[pos_])) {
    return Error(hash, "invalid exemplar: want \" # {labels} value\"");
  }
  SkipBlanks();
  if (AtLineEnd() || body_[pos_] != '{') {
    return Error(pos_, "invalid exemplar: want \"{\" to open its labels");
  }
  if (absl::Status s = ParseLabels(&exemplar_labels_, true); !s.ok()) return s;
  if (AtLineEnd() || !IsBlank(body_[pos_])) {
    return Error(pos_, "invalid exemplar: missing value after its labels");
  }
  SkipBlanks();
  const size_t value_pos = pos_;
  std::string_view tok = NextToken();
  if (!internal::ParseFloat(tok, &exemplar_value_)) {
    return Error(value_pos,
                 fmt::format("invalid exemplar value {}", QuoteForError(tok)));
  }
  SkipBlanks();
  exemplar_timestamp_.reset();
  if (!AtLineEnd()) {
    const size_t ts_pos = pos_;
    tok = NextToken();
    if (absl::Status s = ParseTimestamp(tok, ts_pos, &exemplar_timestamp_);
        !s.ok()) {
      return s;
    }
    SkipBlanks();
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
  for (;;) {
    SkipBlanks();
    if (AtLineEnd()) return unterminated();
    if (body_[pos_] == '}') {
      ++pos_;
      break;
    }
    const size_t name_pos = pos_;
    while (pos_ < line_end_ && IsLabelNameChar(body_[pos_])) ++pos_;
    std::string_view name = body_.substr(name_pos, pos_ - name_pos);
    size_t end = pos_;
    while (end < line_end_ && !IsBlank(body_[end]) &&
           std::strchr("=\",{}", body_[end]) == nullptr) {
      ++end;
    }
    if (end > pos_ || (!name.empty() && !IsValidLabelName(name))) {
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
    SkipBlanks();
    if (AtLineEnd()) return unterminated();
    if (body_[pos_] != '=') {
      return Error(pos_,
                   fmt::format("expected \"=\" after label name {}, got {}",
                               QuoteForError(name),
                               QuoteForError(body_.substr(pos_, 1))));
    }
    ++pos_;
    SkipBlanks();
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
    SkipBlanks();
    if (AtLineEnd()) return unterminated();
    if (body_[pos_] == ',') {
      ++pos_;
      continue;
    }
    if (body_[pos_] == '}') {
      ++pos_;
      break;
    }
    return Error(pos_, fmt::format("expected \",\" or \"}}\" after label {}, "
                                   "got {}",
                                   QuoteForError(name),
                                   QuoteForError(body_.substr(pos_, 1))));
  }
  return CheckDuplicates(*out);
}

absl::Status Parser::ParseLabelValue(LabelRef* l) {
  const size_t quote = pos_;
  const char* data = body_.data();
  size_t p = quote + 1;
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
