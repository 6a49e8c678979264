// -----------------------------------------------------------------------------
// File: remote/codec_metadata.h
// -----------------------------------------------------------------------------
//
// The metric types of Remote-Write metadata: the enum numbers shared by
// 1.0's MetricMetadata.MetricType and 2.0's Metadata.MetricType (same
// numbering, 0 = unknown/unspecified) and Vigil's spelling of them.
#ifndef VIGIL_SERVER_REMOTE_CODEC_METADATA_H_
#define VIGIL_SERVER_REMOTE_CODEC_METADATA_H_

#include <string_view>

namespace vigil::remote {

// "counter" -> 1 ... "stateset" -> 7; "", "unknown" and anything else -> 0.
inline int MetricTypeNumber(std::string_view type) {
  constexpr std::string_view kNames[] = {
      "unknown",        "counter", "gauge", "histogram",
      "gaugehistogram", "summary", "info",  "stateset"};
  for (int i = 1; i < 8; ++i) {
    if (type == kNames[i]) return i;
  }
  return 0;
}

// 0..7 -> "unknown".."stateset"; a number no type has -> "unknown".
inline std::string_view MetricTypeName(int n) {
  constexpr std::string_view kNames[] = {
      "unknown",        "counter", "gauge", "histogram",
      "gaugehistogram", "summary", "info",  "stateset"};
  return n >= 0 && n < 8 ? kNames[n] : kNames[0];
}

}  // namespace vigil::remote

#endif  // VIGIL_SERVER_REMOTE_CODEC_METADATA_H_
