// /api/v1/status/{config,flags,buildinfo,runtimeinfo,tsdb,walreplay}.
#include <algorithm>
#include <limits>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/go/strconv.h"
#include "server/web/api/v1/api.h"
#include "server/web/api/v1/util.h"

namespace vigil::web::api {

void Api::StatusConfig(const net::HttpRequest&, net::HttpResponse* resp) const {
  const std::string yaml =
      opts_.status != nullptr ? opts_.status->ConfigYaml() : "";
  RespondData(resp, [&](JsonWriter& w) {
    w.StartObject();
    w.Key("yaml");
    w.String(yaml);
    w.EndObject();
  });
}

void Api::StatusFlags(const net::HttpRequest&, net::HttpResponse* resp) const {
  std::map<std::string, std::string> flags;  // Go marshals maps sorted
  if (opts_.status != nullptr) {
    for (auto& [k, v] : opts_.status->Flags()) flags[k] = v;
  }
  RespondData(resp, [&](JsonWriter& w) {
    w.StartObject();
    for (const auto& [k, v] : flags) {
      w.Key(k);
      w.String(v);
    }
    w.EndObject();
  });
}

void Api::StatusBuildInfo(const net::HttpRequest&,
                          net::HttpResponse* resp) const {
  BuildInfo b;
  if (opts_.status != nullptr) {
    b = opts_.status->Build();
  } else {
    // The Prometheus release whose API this answers as (clients such as
    // Grafana pick features by it).
    b.version = "2.42.0";
    b.go_version = "vigil";
  }
  RespondData(resp, [&](JsonWriter& w) {
    w.StartObject();
    w.Key("version");
    w.String(b.version);
    w.Key("revision");
    w.String(b.revision);
    w.Key("branch");
    w.String(b.branch);
    w.Key("buildUser");
    w.String(b.build_user);
    w.Key("buildDate");
    w.String(b.build_date);
    w.Key("goVersion");
    w.String(b.go_version);
    w.EndObject();
  });
}

void Api::StatusRuntimeInfo(const net::HttpRequest&,
                            net::HttpResponse* resp) const {
  RuntimeInfo r;
  if (opts_.status != nullptr) r = opts_.status->Runtime();
  RespondData(resp, [&](JsonWriter& w) {
    w.StartObject();
    w.Key("startTime");
    w.Time(r.start_time);
    w.Key("CWD");
    w.String(r.cwd);
    w.Key("reloadConfigSuccess");
    w.Bool(r.reload_config_success);
    w.Key("lastConfigTime");
    w.Time(r.last_config_time);
    w.Key("corruptionCount");
    w.Int(r.corruption_count);
    w.Key("goroutineCount");
    w.Int(r.goroutine_count);
    w.Key("GOMAXPROCS");
    w.Int(r.gomaxprocs);
    w.Key("GOMEMLIMIT");
    w.Int(r.gomemlimit);
    w.Key("GOGC");
    w.String(r.gogc);
    w.Key("GODEBUG");
    w.String(r.godebug);
    w.Key("storageRetention");
    w.String(r.storage_retention);
    w.EndObject();
  });
}

namespace {

using Stat = std::pair<std::string, uint64_t>;

// The `limit` largest, largest first (ties by name).
std::vector<Stat> Top(std::vector<Stat> v, size_t limit) {
  auto cmp = [](const Stat& a, const Stat& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  };
  if (v.size() > limit) {
    std::partial_sort(v.begin(), v.begin() + limit, v.end(), cmp);
    v.resize(limit);
  } else {
    std::sort(v.begin(), v.end(), cmp);
  }
  return v;
}

void WriteStats(JsonWriter& w, std::string_view key,
                const std::vector<Stat>& v) {
  w.Key(key);
  w.StartArray();
  for (const auto& [name, n] : v) {
    w.StartObject();
    w.Key("name");
    w.String(name);
    w.Key("value");
    w.Uint(n);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

void Api::StatusTsdb(const net::HttpRequest& req,
                     net::HttpResponse* resp) const {
  constexpr int64_t kMaxLimit = 10000;
  int64_t limit = 10;
  if (std::string_view s = FormValue(req, "limit"); !s.empty()) {
    auto n = go::ParseInt(s, 10);
    if (!n.ok() || *n < 1) {
      return RespondError(resp, ApiErrorType::kBadData,
                          "limit must be a positive number");
    }
    if (*n > kMaxLimit) {
      return RespondError(
          resp, ApiErrorType::kBadData,
          Cat("limit must not exceed ", std::to_string(kMaxLimit)));
    }
    limit = *n;
  }
  // The cardinality audit of Prometheus's head: the series in memory
  // (head GC moved idle ones out; storage/FORMAT.md, "The cold family").
  uint64_t num_series = 0;
  int64_t chunks = 0;
  int64_t min_time = std::numeric_limits<int64_t>::max();
  int64_t max_time = std::numeric_limits<int64_t>::min();
  absl::flat_hash_map<std::string, uint64_t> by_metric, by_pair;
  // label name -> (distinct values, their total length)
  absl::flat_hash_map<std::string, absl::flat_hash_map<std::string, bool>>
      values;
  if (opts_.db != nullptr) {
    const storage::DBStats st = opts_.db->Stats();
    opts_.db->ForEachHeadSeries([&](storage::SeriesRef, const Labels& l) {
      ++num_series;
      ++by_metric[std::string(l.MetricName())];
      for (const Label& p : l) {
        ++by_pair[Cat(p.name, "=", p.value)];
        values[p.name].try_emplace(p.value, true);
      }
    });
    if (num_series > 0 && (st.min_time != 0 || st.max_time != 0)) {
      min_time = st.min_time;
      max_time = st.max_time;
    }
    chunks = static_cast<int64_t>(st.head_chunks);
  }
  std::vector<Stat> metric_stats(by_metric.begin(), by_metric.end());
  std::vector<Stat> pair_stats(by_pair.begin(), by_pair.end());
  std::vector<Stat> value_counts, value_bytes;
  for (const auto& [name, vs] : values) {
    value_counts.emplace_back(name, vs.size());
    uint64_t bytes = 0;
    for (const auto& [v, unused] : vs) bytes += v.size();
    value_bytes.emplace_back(name, bytes);
  }
  const size_t n = static_cast<size_t>(limit);
  RespondData(resp, [&](JsonWriter& w) {
    w.StartObject();
    w.Key("headStats");
    w.StartObject();
    w.Key("numSeries");
    w.Uint(num_series);
    w.Key("numLabelPairs");
    w.Uint(by_pair.size());
    w.Key("chunkCount");
    w.Int(chunks);
    w.Key("minTime");
    w.Int(min_time);
    w.Key("maxTime");
    w.Int(max_time);
    w.EndObject();
    WriteStats(w, "seriesCountByMetricName", Top(metric_stats, n));
    WriteStats(w, "labelValueCountByLabelName", Top(value_counts, n));
    WriteStats(w, "memoryInBytesByLabelName", Top(value_bytes, n));
    WriteStats(w, "seriesCountByLabelValuePair", Top(pair_stats, n));
    w.EndObject();
  });
}

void Api::StatusWalReplay(const net::HttpRequest&,
                          net::HttpResponse* resp) const {
  // DB::Open replays the WAL before the API exists: always done.
  RespondData(resp, [](JsonWriter& w) {
    w.StartObject();
    w.Key("min");
    w.Int(0);
    w.Key("max");
    w.Int(0);
    w.Key("current");
    w.Int(0);
    w.EndObject();
  });
}

}  // namespace vigil::web::api
