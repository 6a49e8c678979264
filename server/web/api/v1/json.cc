#include "server/web/api/v1/json.h"

#include <rapidjson/writer.h>

#include <cmath>
#include <cstdio>

#include "core/go/json.h"
#include "core/go/strconv.h"
#include "core/go/time.h"
#include "core/go/utf8.h"

namespace vigil::web::api {
namespace {

// RapidJSON output stream appending to a std::string.
struct StringStream {
  using Ch = char;
  std::string* out;
  void Put(char c) { out->push_back(c); }
  void Flush() {}
};

}  // namespace

void AppendJsonEscaped(std::string* out, std::string_view s) {
  go::AppendJsonEscaped(out, s);
}

void AppendSampleValue(std::string* out, double v) {
  const double abs = std::fabs(v);
  const char fmt = (abs != 0 && (abs < 1e-6 || abs >= 1e21)) ? 'e' : 'f';
  out->append(go::FormatFloat(v, fmt, -1));
}

void AppendSampleTimestamp(std::string* out, int64_t ms) {
  uint64_t t = static_cast<uint64_t>(ms);
  if (ms < 0) {
    out->push_back('-');
    t = ~t + 1;
  }
  char buf[32];
  int n = std::snprintf(buf, sizeof buf, "%llu",
                        static_cast<unsigned long long>(t / 1000));
  out->append(buf, n);
  if (const unsigned frac = t % 1000; frac != 0) {
    n = std::snprintf(buf, sizeof buf, ".%03u", frac);
    out->append(buf, n);
  }
}

void AppendGoJsonFloat(std::string* out, double v) {
  if (!std::isfinite(v)) {  // encoding/json refuses these; keep valid JSON
    out->append("null");
    return;
  }
  const double abs = std::fabs(v);
  const bool exp = abs != 0 && (abs < 1e-6 || abs >= 1e21);
  std::string s = go::FormatFloat(v, exp ? 'e' : 'f', -1);
  if (exp) {  // Go writes e-07 as e-7
    const size_t n = s.size();
    if (n >= 4 && s[n - 4] == 'e' && s[n - 3] == '-' && s[n - 2] == '0') {
      s[n - 2] = s[n - 1];
      s.pop_back();
    }
  }
  out->append(s);
}

void AppendGoTime(std::string* out, int64_t ms) {
  if (ms == kMinTimestamp) {
    out->append("0001-01-01T00:00:00Z");
    return;
  }
  int64_t sec = ms / 1000;
  int64_t rem = ms % 1000;
  if (rem < 0) {
    rem += 1000;
    --sec;
  }
  out->append(go::TimeFormat(sec, static_cast<int32_t>(rem * 1000000),
                             "2006-01-02T15:04:05.999999999Z07:00"));
}

struct JsonWriter::Impl {
  std::string buf;
  StringStream stream{&buf};
  rapidjson::Writer<StringStream> writer{stream};
  std::string scratch;
};

JsonWriter::JsonWriter(const net::BodySink* sink, size_t flush_bytes)
    : impl_(std::make_unique<Impl>()), sink_(sink), flush_bytes_(flush_bytes) {}
JsonWriter::~JsonWriter() = default;

void JsonWriter::StartObject() { impl_->writer.StartObject(); }
void JsonWriter::EndObject() { impl_->writer.EndObject(); }
void JsonWriter::StartArray() { impl_->writer.StartArray(); }
void JsonWriter::EndArray() { impl_->writer.EndArray(); }
void JsonWriter::Bool(bool b) { impl_->writer.Bool(b); }
void JsonWriter::Null() { impl_->writer.Null(); }
void JsonWriter::Int(int64_t v) { impl_->writer.Int64(v); }
void JsonWriter::Uint(uint64_t v) { impl_->writer.Uint64(v); }

void JsonWriter::Raw(std::string_view json, bool is_string) {
  impl_->writer.RawValue(
      json.data(), json.size(),
      is_string ? rapidjson::kStringType : rapidjson::kNumberType);
}

void JsonWriter::Key(std::string_view k) { String(k); }

void JsonWriter::String(std::string_view s) {
  std::string& t = impl_->scratch;
  t.assign(1, '"');
  AppendJsonEscaped(&t, s);
  t.push_back('"');
  Raw(t, true);
}

void JsonWriter::Float(double v) {
  std::string& t = impl_->scratch;
  t.clear();
  AppendGoJsonFloat(&t, v);
  Raw(t, false);
}

void JsonWriter::SampleValue(double v) {
  std::string& t = impl_->scratch;
  t.assign(1, '"');
  AppendSampleValue(&t, v);
  t.push_back('"');
  Raw(t, true);
}

void JsonWriter::SampleTimestamp(int64_t ms) {
  std::string& t = impl_->scratch;
  t.clear();
  AppendSampleTimestamp(&t, ms);
  Raw(t, false);
}

void JsonWriter::Time(int64_t ms) {
  std::string& t = impl_->scratch;
  t.assign(1, '"');
  AppendGoTime(&t, ms);
  t.push_back('"');
  Raw(t, true);
}

void JsonWriter::LabelSet(const Labels& l) {
  StartObject();
  for (const Label& p : l) {
    Key(p.name);
    String(p.value);
  }
  EndObject();
}

void JsonWriter::StringArray(const std::vector<std::string>& v) {
  StartArray();
  for (const std::string& s : v) String(s);
  EndArray();
}

void JsonWriter::Value(const promql::Value& v, size_t limit) {
  using promql::ValueType;
  switch (v.type) {
    case ValueType::kScalar:
      StartArray();
      SampleTimestamp(v.scalar.t);
      SampleValue(v.scalar.v);
      EndArray();
      return;
    case ValueType::kString:
      StartArray();
      SampleTimestamp(v.string.t);
      String(v.string.v);
      EndArray();
      return;
    case ValueType::kVector: {
      size_t n = v.vector.size();
      if (limit > 0 && limit < n) n = limit;
      StartArray();
      for (size_t i = 0; i < n; ++i) {
        const promql::Sample& s = v.vector[i];
        StartObject();
        Key("metric");
        LabelSet(s.metric);
        Key("value");
        StartArray();
        SampleTimestamp(s.t);
        SampleValue(s.v);
        EndArray();
        EndObject();
        if (!MaybeFlush()) return;
      }
      EndArray();
      return;
    }
    case ValueType::kMatrix: {
      size_t n = v.matrix.size();
      if (limit > 0 && limit < n) n = limit;
      StartArray();
      for (size_t i = 0; i < n; ++i) {
        const promql::Series& s = v.matrix[i];
        StartObject();
        Key("metric");
        LabelSet(s.metric);
        Key("values");
        StartArray();
        for (size_t j = 0; j < s.size(); ++j) {
          StartArray();
          SampleTimestamp(s.ts[j]);
          SampleValue(s.vs[j]);
          EndArray();
          if ((j & 1023) == 1023 && !MaybeFlush()) return;
        }
        EndArray();
        EndObject();
        if (!MaybeFlush()) return;
      }
      EndArray();
      return;
    }
    case ValueType::kNone:
      Null();
      return;
  }
}

bool JsonWriter::MaybeFlush() {
  if (sink_ == nullptr || impl_->buf.size() < flush_bytes_) return sink_ok_;
  return Flush();
}

bool JsonWriter::Flush() {
  if (sink_ == nullptr || !sink_ok_) return sink_ok_;
  if (!impl_->buf.empty()) {
    sink_ok_ = (*sink_)(impl_->buf);
    impl_->buf.clear();
  }
  return sink_ok_;
}

std::string JsonWriter::Take() {
  std::string out;
  out.swap(impl_->buf);
  return out;
}

void WriteSuccess(JsonWriter& w, const DataFn& data,
                  const std::vector<std::string>& warnings,
                  const std::vector<std::string>& infos) {
  w.StartObject();
  w.Key("status");
  w.String("success");
  if (data) {
    w.Key("data");
    data(w);
  }
  if (!warnings.empty()) {
    w.Key("warnings");
    w.StringArray(warnings);
  }
  if (!infos.empty()) {
    w.Key("infos");
    w.StringArray(infos);
  }
  w.EndObject();
}

void WriteError(JsonWriter& w, std::string_view error_type,
                std::string_view error) {
  w.StartObject();
  w.Key("status");
  w.String("error");
  w.Key("errorType");
  w.String(error_type);
  w.Key("error");
  w.String(error);
  w.EndObject();
}

}  // namespace vigil::web::api
