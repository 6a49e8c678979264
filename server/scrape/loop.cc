#include "server/scrape/loop.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

#include "core/relabel.h"
#include "core/status_macros.h"
#include "core/textparse/parser.h"
#include "fmt/format.h"

namespace vigil::scrape {
namespace {

// Report series, in Prometheus's order; the last one is Vigil's own and is
// written only in tolerant mode.
constexpr std::string_view kReportNames[] = {
    "up",
    "scrape_duration_seconds",
    "scrape_samples_scraped",
    "scrape_samples_post_metric_relabeling",
    "scrape_series_added",
    "scrape_samples_invalid",
};
constexpr size_t kNumReport = std::size(kReportNames);

constexpr std::string_view kExportedLabelPrefix = "exported_";

// Abseil here has its own string_view; hash-map lookups need it.
absl::string_view AV(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

// Rewrites the "LINE:COL: " prefix of a parser error by `line_base` lines
// (the parser was restarted in the middle of the body).
std::string ShiftLine(std::string_view msg, int line_base) {
  size_t colon = msg.find(':');
  if (line_base == 0 || colon == std::string_view::npos) {
    return std::string(msg);
  }
  int line = std::atoi(std::string(msg.substr(0, colon)).c_str());
  return fmt::format("{}{}", line + line_base, msg.substr(colon));
}

std::string_view TypeName(textparse::MetricType t) {
  // Prometheus's textparse calls both "untyped" and missing "unknown".
  return t == textparse::MetricType::kUnknown ? "unknown"
                                              : textparse::MetricTypeName(t);
}

}  // namespace

// The text parser, restarted after each malformed line in tolerant mode.
class ScrapeLoop::PageParser {
 public:
  PageParser(std::string_view body, textparse::Format format, bool tolerant)
      : body_(body), format_(format), tolerant_(tolerant) {
    p_.emplace(body_, format_);
  }

  // Next entry; in tolerant mode malformed lines are counted in
  // `*invalid`, the first one's error kept in `*first_error`, and skipped.
  absl::StatusOr<textparse::Entry> Next(textparse::KnownSeries* known,
                                        uint64_t* invalid,
                                        std::string* first_error) {
    for (;;) {
      size_t before = p_->consumed();
      absl::StatusOr<textparse::Entry> e = p_->Next(known);
      if (e.ok()) last_ = *e;
      if (e.ok() || !tolerant_) return e;
      // An error without consuming a line is about the end of the input
      // (OpenMetrics without "# EOF"): nothing left to keep.
      if (p_->consumed() == before) return textparse::Entry::kEOF;
      ++*invalid;
      if (first_error->empty()) {
        *first_error = ShiftLine(std::string(e.status().message()), line_base_);
      }
      base_ += p_->consumed();
      line_base_ += p_->line();
      if (base_ >= body_.size()) return textparse::Entry::kEOF;
      p_.emplace(body_.substr(base_), format_);
    }
  }
  textparse::Parser& p() { return *p_; }
  textparse::Entry last() const { return last_; }
  textparse::Format format() const { return format_; }

 private:
  const std::string_view body_;
  const textparse::Format format_;
  const bool tolerant_;
  size_t base_ = 0;
  int line_base_ = 0;
  std::optional<textparse::Parser> p_;
  textparse::Entry last_ = textparse::Entry::kEOF;
};

class ScrapeLoop::Lookup : public textparse::KnownSeries {
 public:
  Lookup(ScrapeLoop* loop, textparse::Format format)
      : loop_(loop), format_bit_(FormatBit(format)) {}

  bool IsKnown(std::string_view text) override {
    Find(text);
    return pos != SeriesCache::kNotFound &&
           (loop_->cache_.at(pos).formats & format_bit_) != 0;
  }
  // Looks `text` up unless IsKnown just did.
  void FindOnce(std::string_view text) {
    if (!valid_ || text.data() != text_.data() || text.size() != text_.size()) {
      Find(text);
    }
  }
  // Forget the lookup: the cache is about to change, or a new line starts.
  void Reset() { valid_ = false; }
  uint8_t format_bit() const { return format_bit_; }

  SeriesCache::Key key;
  uint32_t pos = SeriesCache::kNotFound;  // in cache_

 private:
  void Find(std::string_view text) {
    text_ = text;
    valid_ = true;
    key = SeriesCache::KeyOf(text);
    pos = loop_->cache_.Find(key);
  }

  ScrapeLoop* const loop_;
  const uint8_t format_bit_;
  bool valid_ = false;
  std::string_view text_;
};

ScrapeLoop::ScrapeLoop(storage::Appendable* appendable, Labels target_labels,
                       std::string url, const ScrapePoolOptions& opts,
                       Logger* logger)
    : appendable_(appendable),
      target_labels_(std::move(target_labels)),
      url_(std::move(url)),
      logger_(logger),
      opts_(opts) {
  report_refs_.assign(kNumReport, 0);
  for (std::string_view name : kReportNames) {
    LabelsBuilder lb(target_labels_);
    lb.Set(kMetricName, name);
    report_labels_.push_back(lb.Build());
  }
}

ScrapeLoop::~ScrapeLoop() = default;

void ScrapeLoop::UpdateOptions(const ScrapePoolOptions& opts) {
  auto same_relabel = [](const std::vector<RelabelConfig>& a,
                         const std::vector<RelabelConfig>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].source_labels != b[i].source_labels ||
          a[i].separator != b[i].separator ||
          a[i].target_label != b[i].target_label ||
          a[i].regex.source() != b[i].regex.source() ||
          a[i].modulus != b[i].modulus ||
          a[i].replacement != b[i].replacement || a[i].action != b[i].action) {
        return false;
      }
    }
    return true;
  };
  bool reshape =
      opts.honor_labels != opts_.honor_labels ||
      opts.honor_timestamps != opts_.honor_timestamps ||
      opts.label_limit != opts_.label_limit ||
      opts.label_name_length_limit != opts_.label_name_length_limit ||
      opts.label_value_length_limit != opts_.label_value_length_limit ||
      !same_relabel(opts.metric_relabel_configs, opts_.metric_relabel_configs);
  opts_ = opts;
  if (reshape) {
    // prev_ holds storage refs, so staleness survives the flush.
    cache_.Clear();
  }
}

ScrapeReport ScrapeLoop::LastReport() const {
  vigil::MutexLock l(&mu_);
  return last_;
}

std::vector<MetricMetadata> ScrapeLoop::Metadata() const {
  std::vector<MetricMetadata> out;
  {
    vigil::MutexLock l(&mu_);
    out.reserve(metadata_.size());
    for (const auto& [name, e] : metadata_) out.push_back(e.md);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.metric < b.metric; });
  return out;
}

size_t ScrapeLoop::CacheSize() const { return cache_.NumSeries(); }

Labels ScrapeLoop::MutateSampleLabels(const Labels& scraped) const {
  LabelsBuilder lb(scraped);
  if (opts_.honor_labels) {
    for (const Label& l : target_labels_) {
      if (!scraped.Has(l.name)) lb.Set(l.name, l.value);
    }
  } else {
    std::vector<Label> conflicts;
    for (const Label& l : target_labels_) {
      std::string_view v = scraped.Get(l.name);
      if (!v.empty()) conflicts.push_back({l.name, std::string(v)});
      lb.Set(l.name, l.value);
    }
    // Prometheus's resolveConflictingExposedLabels: shortest names first,
    // each prefixed with "exported_" until it is free.
    std::stable_sort(conflicts.begin(), conflicts.end(),
                     [](const Label& a, const Label& b) {
                       return a.name.size() < b.name.size();
                     });
    for (size_t i = 0; i < conflicts.size(); ++i) {
      std::string name = conflicts[i].name;
      for (;;) {
        name = std::string(kExportedLabelPrefix) + name;
        bool taken = scraped.Has(name) || target_labels_.Has(name);
        for (size_t j = 0; j < i && !taken; ++j) {
          taken = conflicts[j].name == name;
        }
        if (!taken) break;
      }
      conflicts[i].name = std::move(name);
    }
    for (const Label& c : conflicts) lb.Set(c.name, c.value);
  }
  Labels res = lb.Build();
  if (opts_.metric_relabel_configs.empty()) return res;
  Labels out;
  if (!vigil::Process(res, opts_.metric_relabel_configs, &out)) return Labels();
  return out;
}

absl::Status ScrapeLoop::VerifyLabelLimits(const Labels& lset) const {
  std::string_view met = lset.MetricName();
  auto cut = [](std::string_view s) { return s.substr(0, 50); };
  if (opts_.label_limit > 0 && lset.size() > opts_.label_limit) {
    return absl::ResourceExhaustedError(fmt::format(
        "label_limit exceeded (metric: {}, number of labels: {}, limit: {})",
        cut(met), lset.size(), opts_.label_limit));
  }
  for (const Label& l : lset) {
    if (opts_.label_name_length_limit > 0 &&
        l.name.size() > opts_.label_name_length_limit) {
      return absl::ResourceExhaustedError(fmt::format(
          "label_name_length_limit exceeded (metric: {}, label "
          "name: {}, length: {}, limit: {})",
          cut(met), cut(l.name), l.name.size(), opts_.label_name_length_limit));
    }
    if (opts_.label_value_length_limit > 0 &&
        l.value.size() > opts_.label_value_length_limit) {
      return absl::ResourceExhaustedError(fmt::format(
          "label_value_length_limit exceeded (metric: {}, label name: {}, "
          "value: \"{}\", length: {}, limit: {})",
          cut(met), cut(l.name), cut(l.value), l.value.size(),
          opts_.label_value_length_limit));
    }
  }
  return absl::OkStatus();
}

void ScrapeLoop::NoteMetadata(PageParser* pp) {
  textparse::Parser& p = pp->p();
  vigil::MutexLock l(&mu_);
  auto it = metadata_.find(AV(p.MetricName()));
  if (it == metadata_.end()) {
    it = metadata_.emplace(std::string(p.MetricName()), MetaEntry{}).first;
    it->second.md.metric = it->first;
    it->second.md.type = "unknown";
  }
  it->second.last_iter = iter_;
  MetricMetadata& md = it->second.md;
  // Assign only on change: a steady page allocates nothing here.
  auto set = [](std::string* dst, std::string_view v) {
    if (*dst != v) dst->assign(v.data(), v.size());
  };
  switch (pp->last()) {
    case textparse::Entry::kType:
      set(&md.type, TypeName(p.Type()));
      break;
    case textparse::Entry::kHelp:
      set(&md.help, p.Help());
      break;
    case textparse::Entry::kUnit:
      set(&md.unit, p.Unit());
      break;
    default:
      break;
  }
}

absl::StatusOr<Labels> ScrapeLoop::SeriesLabels(PageParser* pp) const {
  Labels lset = MutateSampleLabels(pp->p().BuildLabels());
  if (lset.empty()) return lset;
  if (!lset.Has(kMetricName)) {
    return absl::InvalidArgumentError("missing metric name (__name__ label)");
  }
  if (absl::Status s = VerifyLabelLimits(lset); !s.ok()) return s;
  return lset;
}

absl::Status ScrapeLoop::AppendSeries(storage::Appender* app, PageParser* pp,
                                      Lookup* lookup, Timestamp start,
                                      ScrapeReport* rep, bool* limit_hit) {
  textparse::Parser& p = pp->p();
  ++rep->samples_scraped;
  Timestamp t = start;
  std::optional<Timestamp> ts =
      opts_.honor_timestamps ? p.Timestamp() : std::nullopt;
  if (ts) t = *ts;
  std::string_view text = p.SeriesText();

  // A cached series is appended by ref alone: the cache keeps no label set
  // (the head has it), which is most of what a cached series would cost.
  // The parser has usually looked the text up already (Lookup::IsKnown).
  lookup->FindOnce(text);
  const SeriesCache::Key key = lookup->key;
  const uint32_t pos = lookup->pos;
  const uint8_t fbit = lookup->format_bit();
  const auto iter = static_cast<SeriesCache::Iter>(iter_);
  lookup->Reset();
  Labels lset;
  SeriesCache::Entry* ce = nullptr;
  if (pos != SeriesCache::kNotFound) {
    SeriesCache::Entry& e = cache_.at(pos);
    e.formats |= fbit;  // the line parsed: its labels may be skipped next
    if (e.dropped) {
      e.last_iter = iter;
      return absl::OkStatus();
    }
    ce = &e;
  } else {
    VIGIL_ASSIGN_OR_RETURN(lset, SeriesLabels(pp));
    if (lset.empty()) {
      cache_.Add(
          {.key = key, .last_iter = iter, .formats = fbit, .dropped = true});
      return absl::OkStatus();
    }
  }
  // Counted like Prometheus's "samples post metric relabeling": every
  // sample that survived relabelling, even beyond sample_limit.
  ++rep->samples_post_relabel;
  if (opts_.sample_limit > 0 &&
      rep->samples_post_relabel > opts_.sample_limit) {
    *limit_hit = true;  // keep counting; the scrape fails at the end
    return absl::OkStatus();
  }
  absl::StatusOr<storage::SeriesRef> ref =
      app->Append(ce ? ce->ref : 0, lset, t, p.Value());
  if (ce && !ref.ok() && ref.status().code() == absl::StatusCode::kNotFound) {
    // The storage forgot the series (deleted): resolve it by labels again.
    VIGIL_RETURN_IF_ERROR(p.ParseSkippedLabels());
    VIGIL_ASSIGN_OR_RETURN(lset, SeriesLabels(pp));
    ref = app->Append(0, lset, t, p.Value());
  }
  if (!ref.ok()) {
    switch (ref.status().code()) {
      case absl::StatusCode::kFailedPrecondition:
        ++rep->out_of_order;
        return absl::OkStatus();
      case absl::StatusCode::kAlreadyExists:
        ++rep->duplicate;
        return absl::OkStatus();
      case absl::StatusCode::kResourceExhausted:
        if (rep->series_refused++ == 0) {
          rep->refused_error = std::string(ref.status().message());
        }
        return absl::OkStatus();
      default:
        return ref.status();
    }
  }
  if (*ref > SeriesCache::kMaxRef) {
    return absl::InternalError(
        fmt::format("storage returned series ref {} beyond 32 bits, which "
                    "the scrape cache cannot keep",
                    *ref));
  }
  if (!ts || opts_.track_timestamps_staleness) cur_->push_back(*ref);
  if (ce) {
    ce->ref = static_cast<SeriesCache::Ref>(*ref);
    ce->last_iter = iter;
    return absl::OkStatus();
  }
  cache_.Add({.key = key,
              .ref = static_cast<SeriesCache::Ref>(*ref),
              .last_iter = iter,
              .formats = fbit});
  if (!*limit_hit) ++rep->series_added;
  return absl::OkStatus();
}

absl::Status ScrapeLoop::AppendPage(storage::Appender* app,
                                    std::string_view body,
                                    std::string_view content_type,
                                    Timestamp start, ScrapeReport* rep) {
  PageParser pp(body, textparse::FormatFromContentType(content_type),
                opts_.tolerate_invalid_lines);
  bool limit_hit = false;
  Lookup lookup(this, pp.format());
  for (;;) {
    lookup.Reset();
    absl::StatusOr<textparse::Entry> e =
        pp.Next(&lookup, &rep->samples_invalid, &rep->invalid_error);
    if (!e.ok()) return e.status();
    switch (*e) {
      case textparse::Entry::kEOF:
        if (limit_hit) {
          rep->sample_limit_exceeded = true;
          return absl::ResourceExhaustedError("sample limit exceeded");
        }
        return absl::OkStatus();
      case textparse::Entry::kSeries:
        if (absl::Status s =
                AppendSeries(app, &pp, &lookup, start, rep, &limit_hit);
            !s.ok()) {
          return s;
        }
        break;
      case textparse::Entry::kType:
      case textparse::Entry::kHelp:
      case textparse::Entry::kUnit:
        NoteMetadata(&pp);
        break;
      case textparse::Entry::kComment:
        break;
    }
  }
}

void ScrapeLoop::MarkStale(storage::Appender* app, const RefSet& series,
                           const std::vector<storage::SeriesRef>* except,
                           Timestamp t) {
  series.ForEachExcept(except, [&](storage::SeriesRef ref) {
    // Out of order / duplicate: the series came back (another loop of the
    // same target) or already has a sample here; unknown: deleted. Either
    // way there is nothing to mark.
    (void)app->Append(ref, Labels(), t, StaleNaN());
  });
}

void ScrapeLoop::SortSeen() {
  if (!std::is_sorted(cur_->begin(), cur_->end())) {
    std::sort(cur_->begin(), cur_->end());
  }
  cur_->erase(std::unique(cur_->begin(), cur_->end()), cur_->end());
}

void ScrapeLoop::AppendReport(storage::Appender* app, const ScrapeReport& rep,
                              Timestamp t, bool stale) {
  const double values[kNumReport] = {
      rep.up ? 1.0 : 0.0,
      static_cast<double>(rep.duration_ms) / 1000.0,
      static_cast<double>(rep.samples_scraped),
      static_cast<double>(rep.samples_post_relabel),
      static_cast<double>(rep.series_added),
      static_cast<double>(rep.samples_invalid),
  };
  size_t n = opts_.tolerate_invalid_lines ? kNumReport : kNumReport - 1;
  for (size_t i = 0; i < n; ++i) {
    absl::StatusOr<storage::SeriesRef> ref = app->Append(
        report_refs_[i], report_labels_[i], t, stale ? StaleNaN() : values[i]);
    if (ref.ok()) report_refs_[i] = *ref;
  }
}

void ScrapeLoop::CleanCache(uint64_t samples) {
  // Series churn and alternative spellings of a series grow the cache; drop
  // what this scrape did not see, now and then (Prometheus's iterDone).
  if (iter_ % 10 != 0 && cache_.size() <= 2 * samples) return;
  cache_.KeepOnly(static_cast<SeriesCache::Iter>(iter_));
  vigil::MutexLock l(&mu_);
  for (auto it = metadata_.begin(); it != metadata_.end();) {
    if (iter_ - it->second.last_iter > 10) {
      metadata_.erase(it++);
    } else {
      ++it;
    }
  }
}

ScrapeReport ScrapeLoop::Process(std::string_view body,
                                 std::string_view content_type, Timestamp start,
                                 int64_t duration_ms,
                                 std::string_view fetch_error) {
  ++iter_;
  ScrapeReport rep;
  rep.start = start;
  rep.duration_ms = duration_ms;
  rep.error = std::string(fetch_error);
  std::unique_ptr<storage::Appender> app = appendable_->NewAppender();
  // Sized by the largest page this worker thread saw, not kept per target.
  static thread_local std::vector<storage::SeriesRef> seen;
  seen.clear();
  cur_ = &seen;
  cache_.BeginScrape();
  if (rep.error.empty()) {
    absl::Status s = AppendPage(app.get(), body, content_type, start, &rep);
    if (!s.ok()) rep.error = std::string(s.message());
  }
  if (!rep.error.empty()) {
    // Nothing of a failed page is kept; everything it had goes stale.
    app->Rollback();
    cache_.RollBack();
    MarkStale(app.get(), prev_, nullptr, start);
    prev_.Clear();
  } else {
    SortSeen();
    MarkStale(app.get(), prev_, cur_, start);
    prev_.Assign(*cur_);
    CleanCache(rep.samples_scraped);
  }
  cur_ = nullptr;
  rep.up = rep.error.empty();
  AppendReport(app.get(), rep, start, /*stale=*/false);
  if (absl::Status s = app->Commit(); !s.ok()) {
    // Refs handed out for this batch may not exist: start afresh.
    cache_.Clear();
    prev_.Clear();
    report_refs_.assign(kNumReport, 0);
    rep.up = false;
    rep.error = fmt::format("commit: {}", std::string(s.message()));
  }
  cache_.EndScrape();
  scraped_once_ = true;
  if (logger_ != nullptr) {
    if (!rep.up) {
      logger_->Debug("Scrape failed", {{"target", url_}, {"err", rep.error}});
    }
    if (rep.samples_invalid > 0 && rep.invalid_error != last_invalid_error_) {
      logger_->Warn("Dropped invalid lines of a scrape",
                    {{"target", url_},
                     {"invalid_lines", std::to_string(rep.samples_invalid)},
                     {"first_err", rep.invalid_error}});
    }
    if (rep.series_refused > 0) {
      logger_->Warn("Series limit reached; new series of the scrape refused",
                    {{"target", url_},
                     {"refused", std::to_string(rep.series_refused)},
                     {"first_err", rep.refused_error}});
    }
    if (rep.out_of_order > 0 || rep.duplicate > 0) {
      logger_->Warn("Error on ingesting samples",
                    {{"target", url_},
                     {"out_of_order", std::to_string(rep.out_of_order)},
                     {"duplicate", std::to_string(rep.duplicate)}});
    }
  }
  last_invalid_error_ = rep.invalid_error;
  vigil::MutexLock l(&mu_);
  last_ = rep;
  return rep;
}

void ScrapeLoop::Stop(bool stale, Timestamp t) {
  if (!stale || !scraped_once_) return;
  std::unique_ptr<storage::Appender> app = appendable_->NewAppender();
  MarkStale(app.get(), prev_, nullptr, t);
  AppendReport(app.get(), ScrapeReport{}, t, /*stale=*/true);
  if (absl::Status s = app->Commit(); !s.ok() && logger_ != nullptr) {
    logger_->Warn("Writing stale markers failed",
                  {{"target", url_}, {"err", std::string(s.message())}});
  }
  prev_.Clear();
}

}  // namespace vigil::scrape
