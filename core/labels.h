// -----------------------------------------------------------------------------
// File: labels.h
// -----------------------------------------------------------------------------
//
// `Labels` is a set of (name, value) pairs sorted by name, with the metric
// name stored under "__name__", as in Prometheus. Immutable after
// construction; copy is a vector copy. Thread-compatible.
#ifndef VIGIL_CORE_LABELS_H_
#define VIGIL_CORE_LABELS_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vigil {

inline constexpr std::string_view kMetricName = "__name__";

struct Label {
  std::string name;
  std::string value;
  bool operator==(const Label&) const = default;
};

class Labels {
 public:
  Labels() = default;
  // Sorts by name. REQUIRES: names are distinct.
  Labels(
      std::initializer_list<std::pair<std::string_view, std::string_view>> l);
  // Takes arbitrary order; sorts. Empty values are kept (callers that want
  // Prometheus identity semantics use LabelsBuilder, which drops them).
  static Labels FromUnsorted(std::vector<Label> labels);
  // REQUIRES: `labels` already sorted by name, distinct names.
  static Labels FromSorted(std::vector<Label> labels);

  size_t size() const { return labels_.size(); }
  bool empty() const { return labels_.empty(); }
  const Label& operator[](size_t i) const { return labels_[i]; }
  auto begin() const { return labels_.begin(); }
  auto end() const { return labels_.end(); }

  // Value of `name`, or "" if absent (Prometheus: absent == empty).
  std::string_view Get(std::string_view name) const;
  bool Has(std::string_view name) const;
  std::string_view MetricName() const { return Get(kMetricName); }

  // 64-bit hash of the pairs, stable across processes (xxhash-style mix).
  uint64_t Hash() const;
  // Hash() of the labels a projection would keep, without building them:
  // with `keep`, the labels named in `sorted_names`; otherwise the others.
  // (`sum by (a, b)` is HashFor({"a", "b"}, true); `sum without (a)` also
  // drops the metric name: HashFor({"__name__", "a"}, false).)
  uint64_t HashFor(const std::vector<std::string>& sorted_names,
                   bool keep) const;

  // Prometheus's labels.String(): {__name__="up", job="x"} with values
  // quoted as Go's strconv.Quote does.
  std::string ToString() const;
  // Prometheus exposition style: up{job="x"}.
  std::string ToMetricString() const;

  // Byte-wise comparison as Prometheus's labels.Compare.
  friend int Compare(const Labels& a, const Labels& b);
  friend bool operator==(const Labels& a, const Labels& b) {
    return a.labels_ == b.labels_;
  }
  friend bool operator<(const Labels& a, const Labels& b) {
    return Compare(a, b) < 0;
  }
  const std::vector<Label>& pairs() const { return labels_; }
  // The pairs themselves, leaving this empty: edits of a label set that is
  // not needed any more move its strings instead of copying them.
  std::vector<Label> ReleasePairs() && { return std::move(labels_); }

 private:
  std::vector<Label> labels_;
};

// Builds a label set by edits; Set with an empty value deletes the label.
class LabelsBuilder {
 public:
  LabelsBuilder() = default;
  explicit LabelsBuilder(const Labels& base);
  LabelsBuilder& Set(std::string_view name, std::string_view value);
  LabelsBuilder& Del(std::string_view name);
  // Keeps only (or drops) the listed names.
  LabelsBuilder& Keep(const std::vector<std::string>& names);
  std::string_view Get(std::string_view name) const;
  Labels Build() const;

 private:
  std::vector<Label> labels_;  // unsorted, distinct names
};

// A stable 64-bit hash of bytes (the one Labels::Hash is built on), for
// keys that must not depend on the process (sharding, caches).
uint64_t HashString(std::string_view s, uint64_t seed = 0);

// Legacy Prometheus charsets.
bool IsValidMetricName(std::string_view s);  // [a-zA-Z_:][a-zA-Z0-9_:]*
bool IsValidLabelName(std::string_view s);   // [a-zA-Z_][a-zA-Z0-9_]*

struct LabelsHash {
  size_t operator()(const Labels& l) const { return l.Hash(); }
};

}  // namespace vigil

#endif  // VIGIL_CORE_LABELS_H_
