#include "server/scrape/target.h"

#include <utility>

#include "core/go/strconv.h"
#include "core/go/utf8.h"
#include "core/relabel.h"
#include "fmt/format.h"

namespace vigil::scrape {
namespace {

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

// Go's net.SplitHostPort, reduced to "does it split".
bool SplitsHostPort(std::string_view hp) {
  size_t i = hp.rfind(':');
  if (i == std::string_view::npos) return false;
  size_t j = 0, k = 0;
  if (!hp.empty() && hp[0] == '[') {
    size_t end = hp.find(']');
    if (end == std::string_view::npos) return false;
    if (end + 1 == hp.size()) return false;
    if (end + 1 != i) return false;
    j = 1;
    k = end + 1;
  } else if (hp.substr(0, i).find(':') != std::string_view::npos) {
    return false;  // too many colons
  }
  if (hp.substr(j).find('[') != std::string_view::npos) return false;
  if (hp.substr(k).find(']') != std::string_view::npos) return false;
  return true;
}

bool IsUnreserved(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
}

void AppendPercent(std::string* out, unsigned char c) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out->push_back('%');
  out->push_back(kHex[c >> 4]);
  out->push_back(kHex[c & 15]);
}

// Go's url.PathEscape as URL.EscapedPath applies it (encodePath mode).
std::string EscapePath(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (IsUnreserved(ch)) {
      out.push_back(ch);
      continue;
    }
    switch (ch) {
      case '$':
      case '&':
      case '+':
      case ',':
      case '/':
      case ':':
      case ';':
      case '=':
      case '@':
        out.push_back(ch);
        continue;
      default:
        AppendPercent(&out, c);
    }
  }
  return out;
}

uint64_t Fnv1a(uint64_t h, std::string_view s) {
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

absl::Status InvalidArg(std::string msg) {
  return absl::InvalidArgumentError(std::move(msg));
}

}  // namespace

std::string QueryEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    if (IsUnreserved(ch)) {
      out.push_back(ch);
    } else if (ch == ' ') {
      out.push_back('+');
    } else {
      AppendPercent(&out, static_cast<unsigned char>(ch));
    }
  }
  return out;
}

Target::Target(Labels labels, Labels discovered,
               std::map<std::string, std::vector<std::string>> params)
    : labels_(std::move(labels)), discovered_(std::move(discovered)) {
  std::vector<Label> pub;
  for (const Label& l : labels_) {
    if (!StartsWith(l.name, kReservedLabelPrefix)) pub.push_back(l);
    if (StartsWith(l.name, kParamLabelPrefix)) {
      auto& v = params[l.name.substr(kParamLabelPrefix.size())];
      if (v.empty()) {
        v.push_back(l.value);
      } else {
        v[0] = l.value;
      }
    }
  }
  public_labels_ = Labels::FromSorted(std::move(pub));
  if (labels_.empty()) return;

  url_ = std::string(labels_.Get(kSchemeLabel));
  url_ += "://";
  url_ += labels_.Get(kAddressLabel);
  std::string path = EscapePath(labels_.Get(kMetricsPathLabel));
  if (!path.empty() && path[0] != '/') url_ += '/';
  url_ += path;
  std::string query;
  for (const auto& [k, vs] : params) {  // std::map: sorted like Encode
    for (const std::string& v : vs) {
      if (!query.empty()) query += '&';
      query += QueryEscape(k);
      query += '=';
      query += QueryEscape(v);
    }
  }
  if (!query.empty()) url_ += "?" + query;

  hash_ =
      Fnv1a(14695981039346656037ULL, fmt::format("{:016d}", labels_.Hash()));
  hash_ = Fnv1a(hash_, url_);
  // Validated by PopulateLabels; a hand-built target falls back to 1m/10s.
  auto iv = ParseDuration(labels_.Get(kScrapeIntervalLabel));
  auto to = ParseDuration(labels_.Get(kScrapeTimeoutLabel));
  interval_ms_ = iv.ok() && *iv > 0 ? *iv : 60000;
  timeout_ms_ = to.ok() && *to > 0 ? *to : 10000;
}

int64_t Target::Offset(int64_t interval_ms, uint64_t jitter_seed,
                       Timestamp now) const {
  if (interval_ms <= 0) return 0;
  // Prometheus works in nanoseconds; milliseconds are enough here.
  int64_t base = interval_ms - (now % interval_ms + interval_ms) % interval_ms;
  auto offset = static_cast<int64_t>((hash_ ^ jitter_seed) %
                                     static_cast<uint64_t>(interval_ms));
  int64_t next = base + offset;
  if (next > interval_ms) next -= interval_ms;
  return next;
}

absl::StatusOr<PopulatedLabels> PopulateLabels(const Labels& lset,
                                               const ScrapePoolOptions& opts) {
  LabelsBuilder lb(lset);
  const std::pair<std::string_view, std::string> defaults[] = {
      {kJobLabel, opts.job_name},
      {kScrapeIntervalLabel, FormatDurationMs(opts.interval_ms)},
      {kScrapeTimeoutLabel, FormatDurationMs(opts.timeout_ms)},
      {kMetricsPathLabel, opts.metrics_path},
      {kSchemeLabel, opts.scheme},
  };
  for (const auto& [name, value] : defaults) {
    if (lset.Get(name).empty()) lb.Set(name, value);
  }
  for (const auto& [k, v] : opts.params) {
    if (!v.empty()) lb.Set(std::string(kParamLabelPrefix) + k, v[0]);
  }
  PopulatedLabels out;
  out.discovered = lb.Build();
  Labels relabelled;
  if (!Process(out.discovered, opts.relabel_configs, &relabelled) ||
      relabelled.empty()) {
    return out;  // dropped: labels empty, discovered kept
  }
  if (relabelled.Get(kAddressLabel).empty()) return InvalidArg("no address");

  LabelsBuilder rb(relabelled);
  std::string addr(relabelled.Get(kAddressLabel));
  std::string_view scheme = relabelled.Get(kSchemeLabel);
  // Add the scheme's default port only when that makes a valid host:port.
  if (!opts.no_default_port && !SplitsHostPort(addr) &&
      SplitsHostPort(addr + ":1234")) {
    if (scheme == "http" || scheme.empty()) {
      addr += ":80";
    } else if (scheme == "https") {
      addr += ":443";
    } else {
      return InvalidArg(fmt::format("invalid scheme: {}", go::Quote(scheme)));
    }
    rb.Set(kAddressLabel, addr);
  }
  if (addr.find('/') != std::string::npos) {
    return InvalidArg(
        fmt::format("{} is not a valid hostname", go::Quote(addr)));
  }
  std::string_view interval = relabelled.Get(kScrapeIntervalLabel);
  auto iv = ParseDuration(interval);
  if (!iv.ok()) {
    return InvalidArg(fmt::format("error parsing scrape interval: {}",
                                  std::string(iv.status().message())));
  }
  if (*iv == 0) return InvalidArg("scrape interval cannot be 0");
  std::string_view timeout = relabelled.Get(kScrapeTimeoutLabel);
  auto to = ParseDuration(timeout);
  if (!to.ok()) {
    return InvalidArg(fmt::format("error parsing scrape timeout: {}",
                                  std::string(to.status().message())));
  }
  if (*to == 0) return InvalidArg("scrape timeout cannot be 0");
  if (*to > *iv) {
    return InvalidArg(fmt::format(
        "scrape timeout cannot be greater than scrape interval ({} > {})",
        go::Quote(timeout), go::Quote(interval)));
  }
  for (const Label& l : relabelled) {
    if (StartsWith(l.name, kMetaLabelPrefix)) rb.Del(l.name);
  }
  if (relabelled.Get(kInstanceLabel).empty()) rb.Set(kInstanceLabel, addr);
  Labels res = rb.Build();
  for (const Label& l : res) {
    if (!go::ValidString(l.value)) {
      return InvalidArg(fmt::format("invalid label value for {}: {}",
                                    go::Quote(l.name), go::Quote(l.value)));
    }
  }
  out.labels = std::move(res);
  return out;
}

void TargetsFromGroup(const TargetGroup& group, const ScrapePoolOptions& opts,
                      std::vector<Target>* targets,
                      std::vector<absl::Status>* failures) {
  for (size_t i = 0; i < group.targets.size(); ++i) {
    LabelsBuilder lb(group.labels);
    for (const Label& l : group.targets[i]) lb.Set(l.name, l.value);
    auto r = PopulateLabels(lb.Build(), opts);
    if (!r.ok()) {
      failures->push_back(absl::InvalidArgumentError(
          fmt::format("instance {} in group {}: {}", i, group.source,
                      std::string(r.status().message()))));
      continue;
    }
    if (r->labels.empty() && r->discovered.empty()) continue;
    targets->emplace_back(std::move(r->labels), std::move(r->discovered),
                          opts.params);
  }
}

}  // namespace vigil::scrape
