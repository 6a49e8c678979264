// -----------------------------------------------------------------------------
// File: web/api/v1/json.h
// -----------------------------------------------------------------------------
//
// The Prometheus HTTP API's JSON codec: a streaming writer (RapidJSON's
// Writer keeps the structure; every string and number is formatted here the
// way Prometheus's jsoniter codec formats it) and the response envelopes.
//
//   - strings are escaped as Go's encoding/json does with HTML escaping on
//     (`<` -> \u003c, U+2028 -> \u2028, invalid UTF-8 -> \ufffd);
//   - sample values are strings: strconv.FormatFloat 'f' -1, or 'e' when
//     |v| < 1e-6 or |v| >= 1e21 ("1", "0.1", "1e-07", "NaN", "+Inf");
//   - sample timestamps are seconds with up to 3 decimals, trailing zeros
//     kept (1435781451.781, 1435781451.780, 1435781451);
//   - times (lastEvaluation, activeAt) are Go time.Time JSON: RFC 3339 with
//     nanoseconds, trailing zeros dropped ("2023-01-02T03:04:05.12Z");
//   - plain numbers (interval, evaluationTime) are Go float64 JSON.
//
// A JsonWriter built with a sink hands its buffer to the sink whenever
// MaybeFlush() finds it larger than the threshold, so a large matrix is
// never held in memory as one document.
//
// Thread-compatible.
#ifndef VIGIL_SERVER_WEB_API_V1_JSON_H_
#define VIGIL_SERVER_WEB_API_V1_JSON_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "promql/value.h"
#include "server/net/http.h"

namespace vigil::web::api {

// Go's encoding/json string escaping (with HTML escaping), without the
// surrounding quotes, appended to `out`.
void AppendJsonEscaped(std::string* out, std::string_view s);
// Prometheus's sample value string (without quotes).
void AppendSampleValue(std::string* out, double v);
// Prometheus's sample timestamp (ms -> "s.mmm").
void AppendSampleTimestamp(std::string* out, int64_t ms);
// Go's float64 JSON number (encoding/json): 'f' format unless the exponent
// is < -6 or >= 21; "60", "0.5", "1e-07".
void AppendGoJsonFloat(std::string* out, double v);
// Go's time.Time JSON value without quotes: RFC 3339 with trimmed
// nanoseconds; `ms` = kMinTimestamp gives Go's zero time
// "0001-01-01T00:00:00Z".
void AppendGoTime(std::string* out, int64_t ms);

class JsonWriter {
 public:
  // Without a sink everything stays in the buffer (see Take()). With one,
  // MaybeFlush() passes the buffer on once it holds `flush_bytes`.
  // `sink` must outlive the writer.
  explicit JsonWriter(const net::BodySink* sink = nullptr,
                      size_t flush_bytes = 64 * 1024);
  ~JsonWriter();
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  void StartObject();
  void EndObject();
  void StartArray();
  void EndArray();
  void Key(std::string_view k);
  void String(std::string_view s);
  void Bool(bool b);
  void Null();
  void Int(int64_t v);
  void Uint(uint64_t v);
  void Float(double v);              // Go float64 JSON
  void SampleValue(double v);        // "1.5"
  void SampleTimestamp(int64_t ms);  // 1.5
  void Time(int64_t ms);             // "2023-01-02T03:04:05.12Z"
  // {"name":"value",...} in the labels' (sorted) order.
  void LabelSet(const Labels& l);
  void StringArray(const std::vector<std::string>& v);

  // Writes a promql result: vector, matrix, scalar or string. `limit` > 0
  // keeps only the first `limit` series of a vector or matrix.
  void Value(const promql::Value& v, size_t limit = 0);

  // Passes the buffer to the sink when it is large enough. Returns false
  // once the sink has reported the client gone (stop producing).
  bool MaybeFlush();
  // Passes whatever is buffered to the sink (no-op without one).
  bool Flush();
  // The buffered output (everything, without a sink).
  std::string Take();

 private:
  void Raw(std::string_view json, bool is_string);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  const net::BodySink* sink_;
  size_t flush_bytes_;
  bool sink_ok_ = true;
};

// The envelopes. `data` writes exactly one JSON value (or nothing, then
// "data" is omitted as Prometheus's omitempty does for nil).
using DataFn = std::function<void(JsonWriter&)>;
void WriteSuccess(JsonWriter& w, const DataFn& data,
                  const std::vector<std::string>& warnings,
                  const std::vector<std::string>& infos);
void WriteError(JsonWriter& w, std::string_view error_type,
                std::string_view error);

}  // namespace vigil::web::api

#endif  // VIGIL_SERVER_WEB_API_V1_JSON_H_
