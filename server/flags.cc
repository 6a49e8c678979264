#include "server/flags.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <string_view>

#include "core/time.h"
#include "fmt/format.h"

namespace vigil::server {
namespace {

enum class Kind { kString, kBool, kDuration, kSize, kInt, kEnum, kList };

struct FlagDef {
  std::string_view name;
  Kind kind;
  std::string_view help;
  std::vector<std::string_view> choices = {};  // kEnum
};

// In --help order, as Prometheus groups them.
const std::vector<FlagDef>& Defs() {
  static const std::vector<FlagDef> kDefs = {
      {"config.file", Kind::kString, "Configuration file path."},
      {"web.listen-address", Kind::kString,
       "Address to listen on for the API and telemetry (loopback unless "
       "opened, e.g. 0.0.0.0:9090)."},
      {"web.config.file", Kind::kString,
       "[EXPERIMENTAL] Path to configuration file that can enable TLS or "
       "authentication."},
      {"web.external-url", Kind::kString,
       "The URL under which Vigil is externally reachable; its path prefixes "
       "every endpoint unless --web.route-prefix is given."},
      {"web.route-prefix", Kind::kString,
       "Prefix for the internal routes of web endpoints. Defaults to the "
       "path of --web.external-url."},
      {"web.max-connections", Kind::kInt,
       "Maximum number of simultaneous connections; further ones wait to be "
       "accepted. 0 means no limit."},
      {"web.enable-lifecycle", Kind::kBool,
       "Enable shutdown and reload via HTTP request (/-/quit, /-/reload)."},
      {"web.enable-admin-api", Kind::kBool,
       "Enable API endpoints for admin control actions."},
      {"web.enable-remote-write-receiver", Kind::kBool,
       "Enable API endpoint accepting remote write requests (POST "
       "/api/v1/write, Remote-Write 1.0 and 2.0)."},
      {"storage.tsdb.path", Kind::kString, "Base path for metrics storage."},
      {"storage.tsdb.max-series", Kind::kInt,
       "[Vigil] Maximum number of series in the head; samples of new series "
       "beyond it are refused (counted in "
       "vigil_tsdb_head_series_refused_total), existing series keep "
       "ingesting. 0 means no limit."},
      {"storage.tsdb.head-idle", Kind::kDuration,
       "[Vigil] Head GC: a series without a sample for this long leaves "
       "memory (its data stays queryable; a new sample brings it back). "
       "0 keeps every series in memory until retention deletes its data."},
      {"storage.tsdb.retention.time", Kind::kDuration,
       "How long to retain samples in storage. Units: y, w, d, h, m, s, ms."},
      {"storage.tsdb.retention.size", Kind::kSize,
       "Maximum number of bytes for stored samples, with a unit: B, KB, MB, "
       "GB, TB, PB, EB (powers of 2)."},
      {"rules.alert.for-outage-tolerance", Kind::kDuration,
       "Max time to tolerate an outage for restoring \"for\" state of "
       "alerts."},
      {"rules.alert.for-grace-period", Kind::kDuration,
       "Minimum duration between alert and restored \"for\" state."},
      {"rules.alert.resend-delay", Kind::kDuration,
       "Minimum amount of time to wait before resending an alert to "
       "Alertmanager."},
      {"alertmanager.config.file", Kind::kString,
       "Route Vigil's alerts (and alerts POSTed to /api/v2/alerts) through "
       "the built-in Alertmanager configured by this alertmanager.yml. "
       "Default: off."},
      {"diagnose.thresholds.file", Kind::kString,
       "Thresholds of /api/v1/diagnose (docs/diagnose.md), read at start-up. "
       "Default: the built-in ones."},
      {"probe.config.file", Kind::kString,
       "Serve blackbox_exporter's /probe endpoint with the modules of this "
       "probes.yml (blackbox_exporter's format; http and tcp probers). "
       "Default: off (/probe is 404)."},
      {"alertmanager.notification-queue-capacity", Kind::kInt,
       "The capacity of the queue for pending Alertmanager notifications."},
      {"query.lookback-delta", Kind::kDuration,
       "The maximum lookback duration for retrieving metrics during "
       "expression evaluations and federation."},
      {"query.timeout", Kind::kDuration,
       "Maximum time a query may take before being aborted."},
      {"query.max-concurrency", Kind::kInt,
       "Maximum number of queries executed concurrently."},
      {"query.max-samples", Kind::kInt,
       "Maximum number of samples a single query can load into memory."},
      {"query.max-series", Kind::kInt,
       "[Vigil] Maximum number of series a single selector of a query can "
       "load into memory. 0 means no limit."},
      {"scrape.tolerate-invalid-lines", Kind::kBool,
       "Keep the valid samples of a page with invalid lines, counting the "
       "dropped ones in scrape_samples_invalid (Prometheus fails the whole "
       "scrape)."},
      {"enable-feature", Kind::kList,
       "Comma separated feature names to enable: "
       "promql-delayed-name-removal, promql-experimental-functions."},
      {"log.level",
       Kind::kEnum,
       "Only log messages with the given severity or above.",
       {"debug", "info", "warn", "error"}},
      {"log.format",
       Kind::kEnum,
       "Output format of log messages.",
       {"logfmt", "json"}},
  };
  return kDefs;
}

const FlagDef* Find(std::string_view name) {
  for (const FlagDef& d : Defs()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

absl::Status Bad(std::string msg) {
  return absl::InvalidArgumentError(std::move(msg));
}

// Prometheus's units.Base2Bytes: a number and a unit, powers of two.
absl::StatusOr<int64_t> ParseSize(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  std::string_view unit = s.substr(i);
  static constexpr std::pair<std::string_view, int> kUnits[] = {
      {"B", 0},   {"KB", 10}, {"MB", 20}, {"GB", 30},
      {"TB", 40}, {"PB", 50}, {"EB", 60}};
  int shift = -1;
  for (const auto& [u, sh] : kUnits) {
    if (u == unit) shift = sh;
  }
  if (i == 0 || shift < 0 || i > 18) {
    return Bad(fmt::format("units: unknown unit {} in {}", unit, s));
  }
  int64_t n = std::stoll(std::string(s.substr(0, i)));
  if (shift > 0 && n > (INT64_MAX >> shift)) {
    return Bad(fmt::format("units: {} overflows int64", s));
  }
  return n << shift;
}

absl::StatusOr<bool> ParseBool(std::string_view v) {
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  return Bad(fmt::format("unexpected {}", v));
}

absl::Status Set(ServerFlags* f, const FlagDef& d, std::string_view v) {
  const std::string_view n = d.name;
  std::string s(v);
  switch (d.kind) {
    case Kind::kDuration: {
      auto ms = ParseDuration(v);
      if (!ms.ok()) return Bad(std::string(ms.status().message()));
      if (n == "storage.tsdb.retention.time") f->retention_ms = *ms;
      if (n == "storage.tsdb.head-idle") f->head_idle_ms = *ms;
      if (n == "rules.alert.for-outage-tolerance")
        f->for_outage_tolerance_ms = *ms;
      if (n == "rules.alert.for-grace-period") f->for_grace_period_ms = *ms;
      if (n == "rules.alert.resend-delay") f->resend_delay_ms = *ms;
      if (n == "query.lookback-delta") f->query_lookback_delta_ms = *ms;
      if (n == "query.timeout") f->query_timeout_ms = *ms;
      return absl::OkStatus();
    }
    case Kind::kSize: {
      auto b = ParseSize(v);
      if (!b.ok()) return b.status();
      f->retention_bytes = *b;
      return absl::OkStatus();
    }
    case Kind::kInt: {
      int64_t x = 0;
      size_t used = 0;
      try {
        x = std::stoll(s, &used);
      } catch (...) {
        used = 0;
      }
      if (s.empty() || used != s.size() || x < 0) {
        return Bad(
            fmt::format("strconv.ParseInt: parsing \"{}\": invalid "
                        "syntax (--{})",
                        v, n));
      }
      if (n == "alertmanager.notification-queue-capacity")
        f->notification_queue_capacity = static_cast<int>(x);
      if (n == "query.max-concurrency")
        f->query_max_concurrency = static_cast<int>(x);
      if (n == "query.max-samples") f->query_max_samples = x;
      if (n == "query.max-series") f->query_max_series = x;
      if (n == "storage.tsdb.max-series") f->storage_max_series = x;
      if (n == "web.max-connections")
        f->web_max_connections =
            static_cast<int>(std::min<int64_t>(x, 1 << 30));
      return absl::OkStatus();
    }
    case Kind::kBool: {
      auto b = ParseBool(v);
      if (!b.ok()) return b.status();
      if (n == "web.enable-lifecycle") f->enable_lifecycle = *b;
      if (n == "web.enable-admin-api") f->enable_admin_api = *b;
      if (n == "web.enable-remote-write-receiver")
        f->enable_remote_write_receiver = *b;
      if (n == "scrape.tolerate-invalid-lines")
        f->scrape_tolerate_invalid_lines = *b;
      return absl::OkStatus();
    }
    case Kind::kEnum: {
      bool ok = false;
      for (auto c : d.choices) ok = ok || c == v;
      if (!ok) {
        return Bad(fmt::format("enum value must be one of {}, got '{}'",
                               fmt::join(d.choices, ","), v));
      }
      if (n == "log.level") f->log_level = s;
      if (n == "log.format") f->log_format = s;
      return absl::OkStatus();
    }
    case Kind::kList:
      for (size_t i = 0; i <= v.size();) {
        size_t j = v.find(',', i);
        if (j == std::string_view::npos) j = v.size();
        if (j > i) f->features.emplace_back(v.substr(i, j - i));
        i = j + 1;
      }
      return absl::OkStatus();
    case Kind::kString:
      if (n == "config.file") f->config_file = s;
      if (n == "alertmanager.config.file") f->alertmanager_config_file = s;
      if (n == "diagnose.thresholds.file") f->diagnose_thresholds_file = s;
      if (n == "probe.config.file") f->probe_config_file = s;
      if (n == "storage.tsdb.path") f->storage_path = s;
      if (n == "web.listen-address") f->listen_address = s;
      if (n == "web.external-url") f->external_url = s;
      if (n == "web.config.file") f->web_config_file = s;
      if (n == "web.route-prefix") f->route_prefix = s;
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ParsedFlags> ParseServerFlags(
    const std::vector<std::string>& args) {
  ParsedFlags out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      out.help = true;
      continue;
    }
    if (a == "--version") {
      out.version = true;
      continue;
    }
    if (a.size() < 3 || a.rfind("--", 0) != 0) {
      return Bad(fmt::format("unexpected {}", a));
    }
    std::string_view body = std::string_view(a).substr(2);
    std::optional<std::string> value;
    if (size_t eq = body.find('='); eq != std::string_view::npos) {
      value = std::string(body.substr(eq + 1));
      body = body.substr(0, eq);
    }
    const FlagDef* d = Find(body);
    bool negated = false;
    if (d == nullptr && body.rfind("no-", 0) == 0) {
      d = Find(body.substr(3));
      negated = d != nullptr && d->kind == Kind::kBool && !value;
      if (!negated) d = nullptr;
    }
    if (d == nullptr) {
      return Bad(fmt::format("unknown long flag '--{}'", body));
    }
    if (d->kind == Kind::kBool && !value) {
      value = negated ? "false" : "true";
    } else if (!value) {
      if (i + 1 >= args.size()) {
        return Bad(fmt::format("expected argument for flag '--{}'", body));
      }
      value = args[++i];
    }
    absl::Status st = Set(&out.flags, *d, *value);
    if (!st.ok()) return st;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> ServerFlags::AsStrings()
    const {
  auto dur = [](int64_t ms) { return FormatDurationMs(ms); };
  std::vector<std::pair<std::string, std::string>> v = {
      {"alertmanager.config.file", alertmanager_config_file},
      {"alertmanager.notification-queue-capacity",
       std::to_string(notification_queue_capacity)},
      {"config.file", config_file},
      {"diagnose.thresholds.file", diagnose_thresholds_file},
      {"enable-feature", fmt::format("{}", fmt::join(features, ","))},
      {"log.format", log_format},
      {"log.level", log_level},
      {"probe.config.file", probe_config_file},
      {"query.lookback-delta", dur(query_lookback_delta_ms)},
      {"query.max-concurrency", std::to_string(query_max_concurrency)},
      {"query.max-samples", std::to_string(query_max_samples)},
      {"query.max-series", std::to_string(query_max_series)},
      {"query.timeout", dur(query_timeout_ms)},
      {"rules.alert.for-grace-period", dur(for_grace_period_ms)},
      {"rules.alert.for-outage-tolerance", dur(for_outage_tolerance_ms)},
      {"rules.alert.resend-delay", dur(resend_delay_ms)},
      {"scrape.tolerate-invalid-lines",
       scrape_tolerate_invalid_lines ? "true" : "false"},
      {"storage.tsdb.head-idle", dur(head_idle_ms)},
      {"storage.tsdb.max-series", std::to_string(storage_max_series)},
      {"storage.tsdb.path", storage_path},
      {"storage.tsdb.retention.size",
       retention_bytes ? std::to_string(retention_bytes) + "B" : "0B"},
      {"storage.tsdb.retention.time", dur(retention_ms)},
      {"web.enable-admin-api", enable_admin_api ? "true" : "false"},
      {"web.enable-lifecycle", enable_lifecycle ? "true" : "false"},
      {"web.enable-remote-write-receiver",
       enable_remote_write_receiver ? "true" : "false"},
      {"web.config.file", web_config_file},
      {"web.external-url", external_url},
      {"web.listen-address", listen_address},
      {"web.max-connections", std::to_string(web_max_connections)},
      {"web.route-prefix", route_prefix.empty() ? "/" : route_prefix},
  };
  return v;
}

std::string FlagsHelp() {
  ServerFlags defaults;
  std::vector<std::pair<std::string, std::string>> values =
      defaults.AsStrings();
  auto def_of = [&](std::string_view name) -> std::string {
    for (const auto& [k, v] : values) {
      if (k == name) return v;
    }
    return "";
  };
  std::string out =
      "usage: vigil [<flags>]\n       vigil <command> [<args>]  (vigil help "
      "lists the commands)\n\nThe Vigil server: scrapes, stores, evaluates "
      "rules and answers the Prometheus HTTP API.\n\nFlags:\n"
      "  -h, --help  Show this help.\n      --version  Show the version.\n";
  for (const FlagDef& d : Defs()) {
    std::string shown;
    if (d.kind == Kind::kBool) {
      shown = fmt::format("--[no-]{}", d.name);
    } else {
      std::string v = def_of(d.name);
      if (d.name == "storage.tsdb.retention.size") v = "";
      shown = fmt::format("--{}=\"{}\"", d.name, v);
    }
    out += fmt::format("      {}\n          {}\n", shown, d.help);
  }
  return out;
}

}  // namespace vigil::server
