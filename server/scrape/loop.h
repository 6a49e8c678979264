// -----------------------------------------------------------------------------
// File: scrape/loop.h
// -----------------------------------------------------------------------------
//
// The per-target scrape logic of Prometheus's scrapeLoop, without sockets or
// timers: Process() takes one fetched page and turns it into one committed
// batch (samples, staleness markers, report series). The manager owns the
// timing and the fetching.
//
// Steady state: each series is found in a per-target cache by its raw text
// on the page (`name{labels}` as scraped), which maps to the final label set
// and its storage SeriesRef, so a scrape of an unchanged page builds no label
// strings and relabels nothing.
//
// Thread-safety: Process, Stop and UpdateOptions must not run concurrently
// (the manager serialises them per loop); LastReport and Metadata may be
// called from any thread at any time.
#ifndef VIGIL_SERVER_SCRAPE_LOOP_H_
#define VIGIL_SERVER_SCRAPE_LOOP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "core/labels.h"
#include "core/logger.h"
#include "core/sync.h"
#include "core/textparse/parser.h"
#include "core/time.h"
#include "server/scrape/options.h"
#include "server/scrape/ref_set.h"
#include "server/scrape/series_cache.h"
#include "storage/appender.h"

namespace vigil::scrape {

// Prometheus's Accept header for scrapes (2.42: OpenMetrics preferred, then
// text 0.0.4).
inline constexpr std::string_view kScrapeAcceptHeader =
    "application/openmetrics-text;version=1.0.0,application/"
    "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/"
    "*;q=0.1";

// What one scrape did; the values of the report series.
struct ScrapeReport {
  bool up = false;
  std::string error;  // empty when up
  Timestamp start = 0;
  int64_t duration_ms = 0;
  uint64_t samples_scraped = 0;       // sample lines on the page
  uint64_t samples_post_relabel = 0;  // left after metric_relabel_configs
  uint64_t series_added = 0;          // series not in the cache before
  uint64_t samples_invalid = 0;       // lines dropped (tolerant mode)
  std::string invalid_error;          // the first of them: "210:67: ..."
  // Samples storage refused without failing the scrape.
  uint64_t out_of_order = 0;
  uint64_t duplicate = 0;
  // Samples of new series the storage refused for its series limit
  // (--storage.tsdb.max-series), and the first refusal's message; the
  // scrape keeps its other samples and the target stays up, with this
  // message as its lastError.
  uint64_t series_refused = 0;
  std::string refused_error;
  // The scrape failed because it had more samples than sample_limit
  // (prometheus_target_scrapes_exceeded_sample_limit_total).
  bool sample_limit_exceeded = false;
};

// HELP / TYPE / UNIT of one metric family, as last seen on the page.
struct MetricMetadata {
  std::string metric;
  std::string type;  // "counter", "gauge", ..., "unknown"
  std::string help;
  std::string unit;
  bool operator==(const MetricMetadata&) const = default;
};

class ScrapeLoop {
 public:
  // `appendable` and `logger` (may be null) must outlive the loop.
  // `target_labels`: the target's labels without `__` ones (job, instance,
  // ...); `url` only names the target in logs.
  ScrapeLoop(storage::Appendable* appendable, Labels target_labels,
             std::string url, const ScrapePoolOptions& opts, Logger* logger);
  ~ScrapeLoop();
  ScrapeLoop(const ScrapeLoop&) = delete;
  ScrapeLoop& operator=(const ScrapeLoop&) = delete;

  // Processes one scrape that started at `start` and took `duration_ms`.
  // `fetch_error` non-empty: the fetch failed (timeout, refused, HTTP 500:
  // "server returned HTTP status 500 Internal Server Error"); `body` is then
  // ignored. Otherwise `body` is parsed as OpenMetrics or text 0.0.4 by
  // `content_type`.
  //
  // A parse error (unless tolerate_invalid_lines), sample_limit, a label
  // limit, a missing metric name or a storage error other than out-of-order /
  // duplicate / series limit (ScrapeReport::series_refused) fails the
  // scrape: nothing of the page is appended, `up` is 0,
  // and every series of the previous successful scrape gets a staleness
  // marker at `start`. On success, series of the previous scrape missing
  // from this one get one. The report series are written in both cases and
  // everything is committed as one batch. Returns the report (also kept for
  // LastReport).
  ScrapeReport Process(std::string_view body, std::string_view content_type,
                       Timestamp start, int64_t duration_ms,
                       std::string_view fetch_error);

  // The target went away. With `stale`, writes staleness markers at `t` for
  // every series of the last successful scrape and for the report series
  // (Prometheus's end-of-run staleness); out-of-order / duplicate refusals
  // (the target came back meanwhile) are ignored. Without, writes nothing
  // (shutdown: a restart resumes the series).
  void Stop(bool stale, Timestamp t);

  // New pool settings for the same target (a reload). If honor_labels,
  // honor_timestamps or metric_relabel_configs changed, the series cache is
  // rebuilt on the next scrape; staleness state is kept.
  void UpdateOptions(const ScrapePoolOptions& opts);

  ScrapeReport LastReport() const;
  // The families seen on the last successful scrapes, sorted by name.
  std::vector<MetricMetadata> Metadata() const;
  // Entries in the series cache (for tests and self-monitoring).
  size_t CacheSize() const;

 private:
  // Bit per textparse::Format in which a cached text parsed successfully:
  // only then may the parser skip its labels (the formats differ in what a
  // label set may look like).
  static uint64_t FormatBit(textparse::Format f) {
    return f == textparse::Format::kOpenMetrics ? 2 : 1;
  }
  // The cache lookup of the sample line being parsed, made once when the
  // parser asks whether it may skip the line's labels (Lookup::IsKnown) and
  // used again by AppendSeries.
  class Lookup;
  struct MetaEntry {
    MetricMetadata md;
    uint64_t last_iter = 0;
  };
  class PageParser;

  absl::Status AppendPage(storage::Appender* app, std::string_view body,
                          std::string_view content_type, Timestamp start,
                          ScrapeReport* rep);
  absl::Status AppendSeries(storage::Appender* app, PageParser* p,
                            Lookup* lookup, Timestamp start, ScrapeReport* rep,
                            bool* limit_hit);
  void NoteMetadata(PageParser* p);
  Labels MutateSampleLabels(const Labels& scraped) const;
  absl::Status VerifyLabelLimits(const Labels& lset) const;
  // The final labels of the parser's current series: empty if metric
  // relabelling dropped it; an error if a label limit is exceeded.
  absl::StatusOr<Labels> SeriesLabels(PageParser* p) const;
  // Stale markers for the refs of `series` not in `except` (sorted).
  void MarkStale(storage::Appender* app, const RefSet& series,
                 const std::vector<storage::SeriesRef>* except, Timestamp t);
  // Sorts and dedups *cur_ (usually sorted already: refs follow page order).
  void SortSeen();
  void AppendReport(storage::Appender* app, const ScrapeReport& rep,
                    Timestamp t, bool stale);
  void CleanCache(uint64_t samples);

  storage::Appendable* const appendable_;
  const Labels target_labels_;
  const std::string url_;
  Logger* const logger_;
  ScrapePoolOptions opts_;

  uint64_t iter_ = 0;
  // Raw series text -> storage ref, or dropped by metric relabelling.
  SeriesCache cache_;
  // Refs of the series seen in the current scrape (a per-thread scratch
  // vector while Process runs, null otherwise) and in the previous
  // successful one, for staleness markers.
  std::vector<storage::SeriesRef>* cur_ = nullptr;
  RefSet prev_;
  // Report series: labels and refs, by kReport* index.
  std::vector<Labels> report_labels_;
  std::vector<storage::SeriesRef> report_refs_;
  bool scraped_once_ = false;
  std::string last_invalid_error_;

  mutable vigil::Mutex mu_;
  absl::flat_hash_map<std::string, MetaEntry> metadata_ ABSL_GUARDED_BY(mu_);
  ScrapeReport last_ ABSL_GUARDED_BY(mu_);
};

}  // namespace vigil::scrape

#endif  // VIGIL_SERVER_SCRAPE_LOOP_H_
