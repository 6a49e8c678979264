#include "core/labels.h"

#include <algorithm>
#include <cstring>

#include "core/go/strconv.h"

namespace vigil {

namespace {

bool ByName(const Label& a, const Label& b) { return a.name < b.name; }

// 64-bit mix (splitmix64 finaliser) over a running FNV-like state; stable
// across runs so it may be used for sharding decisions.
inline uint64_t Mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

inline uint64_t HashBytes(uint64_t h, std::string_view s) {
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = Mix(h ^ w) * 0x9e3779b97f4a7c15ULL;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  h = Mix(h ^ tail ^ (static_cast<uint64_t>(s.size()) << 56));
  return h;
}

}  // namespace

uint64_t HashString(std::string_view s, uint64_t seed) {
  return HashBytes(seed, s);
}

Labels::Labels(
    std::initializer_list<std::pair<std::string_view, std::string_view>> l) {
  labels_.reserve(l.size());
  for (const auto& [n, v] : l)
    labels_.push_back({std::string(n), std::string(v)});
  std::sort(labels_.begin(), labels_.end(), ByName);
}

Labels Labels::FromUnsorted(std::vector<Label> labels) {
  std::sort(labels.begin(), labels.end(), ByName);
  return FromSorted(std::move(labels));
}

Labels Labels::FromSorted(std::vector<Label> labels) {
  Labels l;
  l.labels_ = std::move(labels);
  return l;
}

std::string_view Labels::Get(std::string_view name) const {
  for (const auto& l : labels_) {
    if (l.name == name) return l.value;
  }
  return {};
}

bool Labels::Has(std::string_view name) const {
  for (const auto& l : labels_) {
    if (l.name == name) return true;
  }
  return false;
}

uint64_t Labels::Hash() const {
  uint64_t h = 0x243f6a8885a308d3ULL;
  for (const auto& l : labels_) {
    h = HashBytes(h, l.name);
    h = HashBytes(h ^ 0xff, l.value);
  }
  return h;
}

uint64_t Labels::HashFor(const std::vector<std::string>& sorted_names,
                         bool keep) const {
  uint64_t h = 0x243f6a8885a308d3ULL;
  for (const auto& l : labels_) {
    bool named =
        std::binary_search(sorted_names.begin(), sorted_names.end(), l.name);
    if (named != keep) continue;
    h = HashBytes(h, l.name);
    h = HashBytes(h ^ 0xff, l.value);
  }
  return h;
}

std::string Labels::ToString() const {
  std::string out = "{";
  for (size_t i = 0; i < labels_.size(); ++i) {
    if (i > 0) out += ", ";
    out += labels_[i].name;
    out += '=';
    go::AppendQuote(&out, labels_[i].value);
  }
  out += '}';
  return out;
}

std::string Labels::ToMetricString() const {
  std::string out(MetricName());
  bool any = false;
  for (const auto& l : labels_) {
    if (l.name == kMetricName) continue;
    out += any ? ", " : "{";
    any = true;
    out += l.name;
    out += '=';
    go::AppendQuote(&out, l.value);
  }
  if (any) out += '}';
  if (out.empty()) out = "{}";
  return out;
}

int Compare(const Labels& a, const Labels& b) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (int c = a[i].name.compare(b[i].name); c != 0) return c < 0 ? -1 : 1;
    if (int c = a[i].value.compare(b[i].value); c != 0) return c < 0 ? -1 : 1;
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

LabelsBuilder::LabelsBuilder(const Labels& base)
    : labels_(base.begin(), base.end()) {}

LabelsBuilder& LabelsBuilder::Set(std::string_view name,
                                  std::string_view value) {
  if (value.empty()) return Del(name);
  for (auto& l : labels_) {
    if (l.name == name) {
      l.value = std::string(value);
      return *this;
    }
  }
  labels_.push_back({std::string(name), std::string(value)});
  return *this;
}

LabelsBuilder& LabelsBuilder::Del(std::string_view name) {
  labels_.erase(std::remove_if(labels_.begin(), labels_.end(),
                               [&](const Label& l) { return l.name == name; }),
                labels_.end());
  return *this;
}

LabelsBuilder& LabelsBuilder::Keep(const std::vector<std::string>& names) {
  labels_.erase(std::remove_if(labels_.begin(), labels_.end(),
                               [&](const Label& l) {
                                 return std::find(names.begin(), names.end(),
                                                  l.name) == names.end();
                               }),
                labels_.end());
  return *this;
}

std::string_view LabelsBuilder::Get(std::string_view name) const {
  for (const auto& l : labels_) {
    if (l.name == name) return l.value;
  }
  return {};
}

Labels LabelsBuilder::Build() const {
  std::vector<Label> out;
  out.reserve(labels_.size());
  for (const auto& l : labels_) {
    if (!l.value.empty()) out.push_back(l);
  }
  return Labels::FromUnsorted(std::move(out));
}

namespace {
inline bool IsAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

bool IsValidMetricName(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (!(IsAlpha(c) || c == ':' || (i > 0 && IsDigit(c)))) return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (!(IsAlpha(c) || (i > 0 && IsDigit(c)))) return false;
  }
  return true;
}

}  // namespace vigil
