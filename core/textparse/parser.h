// -----------------------------------------------------------------------------
// File: parser.h
// -----------------------------------------------------------------------------
//
// A zero-copy pull parser for the Prometheus text exposition format 0.0.4 and
// OpenMetrics 1.0 text. It walks a body held by the caller and yields one
// entry per line: a sample (kSeries), a `# HELP`, `# TYPE` or `# UNIT`
// line, a plain comment, or the end of input (kEOF).
//
// Everything returned is a `std::string_view` into the body, except label
// values and HELP text that contain escape sequences: those are unescaped
// into a scratch buffer owned by the parser and reused from entry to entry.
// After warm-up (the first few lines grow its vectors) the parser does not
// allocate per sample.
//
// Example:
//
//   textparse::Parser p(body, textparse::Format::kPrometheusText);
//   for (;;) {
//     absl::StatusOr<textparse::Entry> e = p.Next();
//     if (!e.ok()) return e.status();   // "3:17: invalid label name \"1a\""
//     if (*e == textparse::Entry::kEOF) break;
//     if (*e != textparse::Entry::kSeries) continue;
//     auto it = cache.find(p.SeriesText());   // cheap key for a seen series
//     if (it == cache.end()) it = cache.emplace(p.SeriesText(),
//                                              p.BuildLabels()).first;
//     Append(it->second, p.Timestamp().value_or(now), p.Value());
//   }
//
// Thread-compatible: one Parser per thread; const methods may be called
// concurrently only while nobody calls Next().
#ifndef VIGIL_CORE_TEXTPARSE_PARSER_H_
#define VIGIL_CORE_TEXTPARSE_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/labels.h"
#include "core/time.h"

namespace vigil::textparse {

enum class Format {
  kPrometheusText,  // text/plain; version=0.0.4
  kOpenMetrics,     // application/openmetrics-text; version=1.0.0
};

// Whose verdicts the parser reproduces. The two Prometheus text-format parsers
// disagree on edge cases (`s.9`, `# TYPE x` alone, `s 1 -5`, `{a="\t"}`,
// blanks between labels without a comma...), and Vigil must match each where
// it is used.
enum class Dialect {
  // Prometheus's scrape-time parser (model/textparse), which decides `up`:
  // the scrape loop and `vigil tsdb import openmetrics`.
  kScrape,
  // prometheus/common's expfmt text parser, which `promtool check metrics`
  // uses: `vigil check metrics`. Text format 0.0.4 only.
  kExpfmt,
};

struct ParserOptions {
  // Default: Dialect::kScrape. OpenMetrics has only the scrape parser, so
  // kExpfmt there behaves as kScrape.
  Dialect dialect = Dialect::kScrape;
};

// Picks the format from an HTTP Content-Type header value: OpenMetrics for
// "application/openmetrics-text...", the Prometheus text format otherwise.
Format FormatFromContentType(std::string_view content_type);

// What the last successful Next() found.
enum class Entry {
  kSeries,   // a sample line: name, labels, value, optional timestamp
  kHelp,     // "# HELP name text"
  kType,     // "# TYPE name type"
  kUnit,     // "# UNIT name unit" (OpenMetrics only; a comment in 0.0.4)
  kComment,  // any other "#" line (Prometheus text format only)
  kEOF,      // end of input, or "# EOF" in OpenMetrics
};

enum class MetricType {
  kUnknown,  // "untyped" (0.0.4) / "unknown" (OpenMetrics), or no TYPE line
  kCounter,
  kGauge,
  kHistogram,
  kGaugeHistogram,  // OpenMetrics only
  kSummary,
  kInfo,      // OpenMetrics only
  kStateSet,  // OpenMetrics only
};

// "counter", "gauge", ... "untyped" for kUnknown.
std::string_view MetricTypeName(MetricType t);

// One label of the current entry. Both views stay valid until the next call
// to Next() (the value may point into the parser's scratch buffer).
struct LabelView {
  std::string_view name;
  std::string_view value;  // unescaped
};

// Series texts a caller has already seen parse successfully, with the same
// Format and Dialect, and whose labels it does not need again (a scrape
// loop's series cache). See Parser::Next(KnownSeries*).
class KnownSeries {
 public:
  virtual ~KnownSeries() = default;
  // Whether `series_text`, the SeriesText() of the sample line being parsed,
  // is one of them. Called once per sample line, before its labels are
  // parsed; the line may still fail afterwards (a bad value).
  virtual bool IsKnown(std::string_view series_text) = 0;
};

class Parser {
 public:
  // `body` must remain live and unchanged while the parser and any view it
  // returned are in use. Parsing is lazy: nothing happens until Next().
  Parser(std::string_view body, Format format, ParserOptions options = {});

  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  // Advances to the next entry and returns its kind. Blank lines are skipped
  // in the Prometheus text format (OpenMetrics forbids them).
  //
  // Returns kEOF at the end of the body, and again on every later call. In
  // OpenMetrics kEOF comes from the "# EOF" line, which must be last (a
  // single trailing newline is allowed).
  //
  // On malformed input returns InvalidArgument with a message of the form
  // "LINE:COL: what is wrong" (both 1-based, COL counts bytes), e.g.
  // `3:17: invalid label name "1a"`. Errors are sticky: every later call
  // returns the same status. A missing final newline is tolerated in the
  // text format (callers wanting promtool's verdict check it themselves).
  //
  // What is accepted follows the dialect's Prometheus parser exactly. In
  // the text format with kScrape, a NUL byte where a line would start ends
  // the body (kEOF) as it does in Prometheus's lexer; NUL bytes inside label
  // values and HELP text are kept. With kExpfmt, `# HELP name` and
  // `# TYPE name` without text are plain comments, as for expfmt.
  absl::StatusOr<Entry> Next();

  // Next() for a caller that keeps its series by their text: a sample line
  // whose series text `known` recognises has its labels skipped, neither
  // parsed nor checked. That is safe because the parser's verdict on the
  // bytes of a series text does not depend on what surrounds them: a text
  // that parsed once parses the same way again. Entries, values, verdicts
  // and error messages are those of Next(). After a skip, LabelsSkipped()
  // is true and the label accessors (NumLabels, Label, BuildLabels) REQUIRE
  // ParseSkippedLabels() first. `known` may be null (then this is Next()).
  absl::StatusOr<Entry> Next(KnownSeries* known);

  // 1-based line number of the current entry.
  int line() const { return line_; }
  // Offset just past the current entry's line. Lets a caller streaming a
  // huge mapped body release the pages before it, provided it copied
  // whatever views it keeps.
  size_t consumed() const { return next_line_; }
  Format format() const { return format_; }

  // --- kSeries, kHelp, kType, kUnit -----------------------------------------

  // For kSeries the sample's metric name ("http_requests_total"); for
  // kHelp/kType/kUnit the family name given on the line.
  std::string_view MetricName() const { return name_; }

  // --- kSeries --------------------------------------------------------------

  // The raw text of the series, `name{labels}` exactly as on the wire (or
  // just `name`), suitable as a hash-map key for a cache of already seen
  // series. Two lines with the same series but different label order or
  // spacing give different texts, so a miss must fall back to BuildLabels().
  std::string_view SeriesText() const { return series_text_; }

  // Whether Next(known) skipped the current sample's labels.
  bool LabelsSkipped() const { return labels_skipped_; }
  // Parses the labels Next(known) skipped (no-op otherwise). Fails only if
  // the text was not in fact one that parsed before.
  absl::Status ParseSkippedLabels();

  // Labels in wire order, without the metric name. REQUIRES: i < NumLabels().
  size_t NumLabels() const { return labels_.size(); }
  LabelView Label(size_t i) const { return Resolve(labels_[i]); }

  // The sample value; NaN, +Inf and -Inf are parsed ("Inf", "+inf" too).
  double Value() const { return value_; }

  // The sample's timestamp in milliseconds, if the line has one. OpenMetrics
  // timestamps are float seconds and are converted exactly for up to 3
  // fraction digits (digits beyond milliseconds are truncated).
  std::optional<vigil::Timestamp> Timestamp() const { return timestamp_; }

  // Exemplar (OpenMetrics only): ` # {labels} value [timestamp]` after the
  // sample. Accessors REQUIRE HasExemplar().
  bool HasExemplar() const { return has_exemplar_; }
  size_t NumExemplarLabels() const { return exemplar_labels_.size(); }
  LabelView ExemplarLabel(size_t i) const {
    return Resolve(exemplar_labels_[i]);
  }
  double ExemplarValue() const { return exemplar_value_; }
  std::optional<vigil::Timestamp> ExemplarTimestamp() const {
    return exemplar_timestamp_;
  }

  // The series' label set: `__name__` plus every label, sorted by name.
  // Labels with an empty value are dropped, because Prometheus treats an
  // empty value as an absent label in series identity ({a=""} == {}).
  // Allocates; call it only for series not found via SeriesText().
  vigil::Labels BuildLabels() const;

  // --- kHelp / kType / kUnit / kComment -------------------------------------

  // kHelp: the unescaped help text (may be empty).
  std::string_view Help() const { return text_; }
  // kType: the declared type.
  MetricType Type() const { return type_; }
  // kUnit: the unit (may be empty).
  std::string_view Unit() const { return text_; }
  // kComment: the whole line, including the leading '#'.
  std::string_view Comment() const { return text_; }

 private:
  // A label whose name or value lives in the body, or, when `in_scratch`,
  // whose value is scratch_[off, off+len).
  struct LabelRef {
    std::string_view name;
    std::string_view value;
    size_t off = 0;
    size_t len = 0;
    bool in_scratch = false;
  };

  LabelView Resolve(const LabelRef& l) const {
    if (!l.in_scratch) return {l.name, l.value};
    return {l.name, std::string_view(scratch_).substr(l.off, l.len)};
  }

  absl::StatusOr<Entry> NextEntry();
  absl::StatusOr<Entry> ParseLine();
  absl::StatusOr<Entry> ParseComment();
  absl::StatusOr<Entry> ParseCommentScrape();
  absl::StatusOr<Entry> ParseCommentExpfmt();
  absl::StatusOr<Entry> ParseCommentOpenMetrics();
  absl::StatusOr<Entry> ParseValueAndTimestamp(bool abutting);
  absl::StatusOr<Entry> ParseOpenMetricsTail();
  Entry AsComment(size_t hash);
  size_t MetricNameEnd(size_t from) const;
  absl::StatusOr<Entry> ParseSeries();
  absl::Status ParseLabels(std::vector<LabelRef>* out, bool exemplar);
  size_t LabelSetEnd(size_t open) const;
  absl::Status ParseLabelValue(LabelRef* l);
  absl::Status ParseExemplar();
  absl::Status CheckDuplicates(const std::vector<LabelRef>& labels);
  absl::Status ParseTimestamp(std::string_view tok, size_t col,
                              std::optional<vigil::Timestamp>* out);
  absl::Status Error(size_t pos, std::string_view msg) const;
  std::string_view NextToken();
  std::string_view NextTokenUntil(bool stop_at_brace);
  void SkipBlanks();
  bool AtLineEnd() const { return pos_ >= line_end_; }

  const std::string_view body_;
  const Format format_;
  const bool om_;          // format_ == kOpenMetrics
  const bool expfmt_;      // text format with Dialect::kExpfmt
  size_t next_line_ = 0;   // offset of the line after the current one
  size_t line_start_ = 0;  // offset of the current line
  size_t line_end_ = 0;    // offset of its '\n' (or body_.size())
  size_t pos_ = 0;         // cursor inside the current line
  int line_ = 0;
  bool done_ = false;
  absl::Status error_;

  std::string_view name_;
  std::string_view series_text_;
  std::string_view text_;
  MetricType type_ = MetricType::kUnknown;
  double value_ = 0;
  std::optional<vigil::Timestamp> timestamp_;
  std::vector<LabelRef> labels_;
  KnownSeries* known_ = nullptr;  // set during Next(known)
  bool labels_skipped_ = false;
  size_t labels_open_ = 0;  // offset of the skipped labels' '{'
  bool has_exemplar_ = false;
  std::vector<LabelRef> exemplar_labels_;
  double exemplar_value_ = 0;
  std::optional<vigil::Timestamp> exemplar_timestamp_;
  std::string scratch_;                   // unescaped values, reused
  std::vector<std::string_view> sorted_;  // duplicate check, reused
};

}  // namespace vigil::textparse

#endif  // VIGIL_CORE_TEXTPARSE_PARSER_H_
