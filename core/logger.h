// -----------------------------------------------------------------------------
// File: logger.h
// -----------------------------------------------------------------------------
//
// A leveled logfmt logger, as Prometheus logs:
//   ts=2026-11-29T20:48:25.123Z level=info msg="Server is ready" addr=:9090
// Thread-safe: each line is written with one fwrite under a mutex.
#ifndef VIGIL_CORE_LOGGER_H_
#define VIGIL_CORE_LOGGER_H_

#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/sync.h"

namespace vigil {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// Parses "debug", "info", "warn", "error".
bool ParseLogLevel(std::string_view s, LogLevel* out);

class Logger {
 public:
  using KV = std::pair<std::string_view, std::string>;

  // Writes to `out` (not owned; must outlive the logger). Default: stderr.
  explicit Logger(std::FILE* out = stderr, LogLevel min = LogLevel::kInfo)
      : out_(out), min_(min) {}

  void set_level(LogLevel l) { min_ = l; }
  // One JSON object per line ({"ts":...,"level":...,"msg":...,...}) instead
  // of logfmt (--log.format=json). Default: false
  void set_json(bool on) { json_ = on; }
  bool Enabled(LogLevel l) const { return l >= min_; }

  void Log(LogLevel level, std::string_view msg,
           std::initializer_list<KV> kvs = {});
  void Debug(std::string_view msg, std::initializer_list<KV> kvs = {}) {
    Log(LogLevel::kDebug, msg, kvs);
  }
  void Info(std::string_view msg, std::initializer_list<KV> kvs = {}) {
    Log(LogLevel::kInfo, msg, kvs);
  }
  void Warn(std::string_view msg, std::initializer_list<KV> kvs = {}) {
    Log(LogLevel::kWarn, msg, kvs);
  }
  void Error(std::string_view msg, std::initializer_list<KV> kvs = {}) {
    Log(LogLevel::kError, msg, kvs);
  }

  // Formats one logfmt line (no trailing newline); exposed for tests.
  static std::string Format(int64_t ts_ms, LogLevel level, std::string_view msg,
                            std::initializer_list<KV> kvs);
  // The same as one JSON object.
  static std::string FormatJson(int64_t ts_ms, LogLevel level,
                                std::string_view msg,
                                std::initializer_list<KV> kvs);

  // The process-wide default logger (stderr, info). Never null.
  static Logger* Default();

 private:
  std::FILE* out_;
  LogLevel min_;
  bool json_ = false;
  vigil::Mutex mu_;
};

}  // namespace vigil

#endif  // VIGIL_CORE_LOGGER_H_
