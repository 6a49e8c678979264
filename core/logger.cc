#include "core/logger.h"

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/clock.h"

namespace vigil {

namespace {

const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

// logfmt: bare if it has no space, quote, '=' or control byte; else quoted.
void AppendValue(std::string* out, std::string_view v) {
  bool needs_quote = v.empty();
  for (unsigned char c : v) {
    if (c <= ' ' || c == '"' || c == '=' || c == '\\') {
      needs_quote = true;
      break;
    }
  }
  if (!needs_quote) {
    out->append(v);
    return;
  }
  out->push_back('"');
  for (unsigned char c : v) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\r':
        out->append("\\r");
        break;
      default:
        out->push_back(static_cast<char>(c));
    }
  }
  out->push_back('"');
}

}  // namespace

bool ParseLogLevel(std::string_view s, LogLevel* out) {
  if (s == "debug")
    *out = LogLevel::kDebug;
  else if (s == "info")
    *out = LogLevel::kInfo;
  else if (s == "warn")
    *out = LogLevel::kWarn;
  else if (s == "error")
    *out = LogLevel::kError;
  else
    return false;
  return true;
}

std::string Logger::Format(int64_t ts_ms, LogLevel level, std::string_view msg,
                           std::initializer_list<KV> kvs) {
  std::string line = "ts=";
  line += absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromUnixMillis(ts_ms),
                           absl::UTCTimeZone());
  line += " level=";
  line += LevelName(level);
  line += " msg=";
  AppendValue(&line, msg);
  for (const auto& [k, v] : kvs) {
    line.push_back(' ');
    line.append(k);
    line.push_back('=');
    AppendValue(&line, v);
  }
  return line;
}

std::string Logger::FormatJson(int64_t ts_ms, LogLevel level,
                               std::string_view msg,
                               std::initializer_list<KV> kvs) {
  auto str = [](std::string* out, std::string_view v) {
    out->push_back('"');
    for (unsigned char c : v) {
      if (c == '"' || c == '\\') {
        out->push_back('\\');
        out->push_back(static_cast<char>(c));
      } else if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out->append(buf);
      } else {
        out->push_back(static_cast<char>(c));
      }
    }
    out->push_back('"');
  };
  std::string line = "{\"ts\":";
  str(&line,
      absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromUnixMillis(ts_ms),
                       absl::UTCTimeZone()));
  line += ",\"level\":";
  str(&line, LevelName(level));
  line += ",\"msg\":";
  str(&line, msg);
  for (const auto& [k, v] : kvs) {
    line.push_back(',');
    str(&line, k);
    line.push_back(':');
    str(&line, v);
  }
  line.push_back('}');
  return line;
}

void Logger::Log(LogLevel level, std::string_view msg,
                 std::initializer_list<KV> kvs) {
  if (!Enabled(level)) return;
  const int64_t now = Clock::Real()->NowMs();
  std::string line =
      json_ ? FormatJson(now, level, msg, kvs) : Format(now, level, msg, kvs);
  line.push_back('\n');
  vigil::MutexLock lock(&mu_);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

Logger* Logger::Default() {
  static Logger* l = new Logger();
  return l;
}

}  // namespace vigil
