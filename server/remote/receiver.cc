#include "server/remote/receiver.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "fmt/format.h"
#include "server/net/http.h"
#include "server/remote/codec.h"

namespace vigil::remote {
namespace {

constexpr std::string_view kProtoMediaType = "application/x-protobuf";

// Go's http.Error: the message and a newline, as text.
void Error(net::HttpResponse* r, int status, std::string_view msg) {
  r->status = status;
  r->headers.push_back({"Content-Type", "text/plain; charset=utf-8"});
  r->headers.push_back({"X-Content-Type-Options", "nosniff"});
  r->body = std::string(msg) + "\n";
}

std::string Msg(const absl::Status& st) { return std::string(st.message()); }

// The message a Content-Type names: "application/x-protobuf" with an
// optional proto=<message> parameter (none: 1.0).
absl::StatusOr<ProtoMessage> MessageOf(std::string_view content_type) {
  std::string_view rest = net::TrimOws(content_type);
  size_t semi = rest.find(';');
  std::string_view media = net::TrimOws(rest.substr(0, semi));
  if (absl::AsciiStrToLower(std::string(media)) != kProtoMediaType) {
    return absl::InvalidArgumentError(fmt::format(
        "expected {} as the first (media) part, got {} content-type",
        kProtoMediaType, content_type));
  }
  while (semi != std::string_view::npos) {
    rest.remove_prefix(semi + 1);
    semi = rest.find(';');
    std::string_view param = net::TrimOws(rest.substr(0, semi));
    size_t eq = param.find('=');
    if (eq == std::string_view::npos) {
      return absl::InvalidArgumentError(fmt::format(
          "expected parameters to be key=value (RFC 9110), got {} in {} "
          "content-type",
          param, content_type));
    }
    if (absl::AsciiStrToLower(std::string(net::TrimOws(param.substr(0, eq)))) ==
        "proto") {
      std::string_view value = net::TrimOws(param.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      absl::StatusOr<ProtoMessage> m = ParseProtoMessage(value);
      if (!m.ok()) {
        return absl::InvalidArgumentError(fmt::format(
            "got {} content type; {}", content_type, Msg(m.status())));
      }
      return m;
    }
  }
  return ProtoMessage::kV1;
}

void SetWrittenHeaders(net::HttpResponse* r, uint64_t samples) {
  r->headers.push_back(
      {"X-Prometheus-Remote-Write-Samples-Written", std::to_string(samples)});
  r->headers.push_back({"X-Prometheus-Remote-Write-Histograms-Written", "0"});
  r->headers.push_back({"X-Prometheus-Remote-Write-Exemplars-Written", "0"});
}

}  // namespace

Receiver::Receiver(ReceiverOptions opts) : opts_(std::move(opts)) {
  if (opts_.clock == nullptr) opts_.clock = Clock::Real();
}

void Receiver::Serve(const net::HttpRequest& req,
                     net::HttpResponse* resp) const {
  auto log_error = [&](std::string_view msg, std::string_view err) {
    if (opts_.logger != nullptr) {
      opts_.logger->Error(
          msg, {{"err", std::string(err)}, {"remote_addr", req.remote_addr}});
    }
  };
  // Content negotiation.
  std::string_view content_type = req.Header("content-type").value_or("");
  absl::StatusOr<ProtoMessage> msg =
      content_type.empty() ? ProtoMessage::kV1 : MessageOf(content_type);
  if (!msg.ok()) {
    log_error("Error decoding remote write request", Msg(msg.status()));
    return Error(resp, 415, Msg(msg.status()));
  }
  std::string_view enc =
      net::TrimOws(req.Header("content-encoding").value_or(""));
  if (!enc.empty() && absl::AsciiStrToLower(std::string(enc)) != "snappy") {
    std::string err = fmt::format(
        "{} encoding (compression) is not accepted by this server; only "
        "snappy is acceptable",
        enc);
    log_error("Error decoding remote write request", err);
    return Error(resp, 415, err);
  }
  const bool v2 = *msg == ProtoMessage::kV2;

  // Decode: all or nothing.
  absl::StatusOr<WireRequest> wr =
      DecodeWriteRequest(req.body, *msg, opts_.max_decoded_bytes);
  if (!wr.ok()) {
    log_error("Error decoding remote write request", Msg(wr.status()));
    if (v2) SetWrittenHeaders(resp, 0);
    return Error(
        resp,
        wr.status().code() == absl::StatusCode::kResourceExhausted ? 413 : 400,
        Msg(wr.status()));
  }
  size_t samples = 0, histograms = 0, exemplars = 0;
  for (const WireSeries& s : wr->series) {
    samples += s.samples.size();
    histograms += s.histograms;
    exemplars += s.exemplars;
  }
  if (wr->series.size() > opts_.max_series || samples > opts_.max_samples) {
    std::string err = fmt::format(
        "request has {} series and {} samples; this receiver takes at most {} "
        "series and {} samples per request",
        wr->series.size(), samples, opts_.max_series, opts_.max_samples);
    log_error("Error decoding remote write request", err);
    if (v2) SetWrittenHeaders(resp, 0);
    return Error(resp, 413, err);
  }

  // Append as one batch.
  std::unique_ptr<storage::Appender> app = opts_.appendable->NewAppender();
  const Timestamp max_t = opts_.clock->NowMs() + opts_.max_ahead_ms;
  // 2.0: what was refused; the rest is written.
  constexpr size_t kMaxLines = 20;
  std::vector<std::string> rejected;
  size_t refused = 0;
  uint64_t appended = 0;
  for (const WireSeries& s : wr->series) {
    storage::SeriesRef ref = 0;
    uint64_t series_appended = 0;
    for (const WireSample& smp : s.samples) {
      // The storage's errors are Prometheus's ("out of order sample",
      // "duplicate sample for timestamp", "out of bounds") and name the
      // series.
      std::string err;
      bool series_limit = false;  // the rest is still written, as in 2.0
      if (smp.timestamp > max_t) {
        err = fmt::format(
            "out of bounds: timestamp {} is too far in the future, series {}",
            smp.timestamp, s.labels.ToString());
      } else {
        absl::StatusOr<storage::SeriesRef> r =
            app->Append(ref, s.labels, smp.timestamp, smp.value);
        if (r.ok()) {
          ref = *r;
          ++series_appended;
          continue;
        }
        err = Msg(r.status());
        series_limit =
            r.status().code() == absl::StatusCode::kResourceExhausted;
      }
      if (!v2 && !series_limit) {
        app->Rollback();
        log_error("Error appending remote write request", err);
        return Error(resp, 400, err);
      }
      // Kept for the answer (the first few), and on with the next sample.
      ++refused;
      if (rejected.size() < kMaxLines) rejected.push_back(std::move(err));
    }
    appended += series_appended;
  }
  if (absl::Status st = app->Commit(); !st.ok()) {
    log_error("Error committing remote write request", Msg(st));
    if (v2) SetWrittenHeaders(resp, 0);
    return Error(resp, 500, Msg(st));
  }
  if (histograms > 0) {
    ++refused;
    rejected.push_back(fmt::format(
        "native histograms are not supported by this receiver: {} histogram "
        "samples dropped",
        histograms));
  }
  // 2.0 forbids a 2xx when anything sent was not written; 1.0 has no
  // exemplars in its specification, and Prometheus's 1.0 receiver does not
  // fail a request over them.
  if (v2 && exemplars > 0) {
    ++refused;
    rejected.push_back(fmt::format(
        "exemplars are not supported by this receiver: {} exemplars dropped",
        exemplars));
  }
  if (v2) SetWrittenHeaders(resp, appended);
  if (!rejected.empty()) {
    // One line per refused sample, as Prometheus joins them; a flood of
    // them is cut short.
    std::string err;
    for (const std::string& e : rejected) {
      if (!err.empty()) err += "\n";
      err += e;
    }
    if (refused > rejected.size()) {
      err += fmt::format("\n(and {} more)", refused - rejected.size());
    }
    if (opts_.logger != nullptr) {
      opts_.logger->Warn("Remote write request partly refused",
                         {{"err", err},
                          {"written", std::to_string(appended)},
                          {"remote_addr", req.remote_addr}});
    }
    return Error(resp, 400, err);
  }
  resp->status = 204;
}

}  // namespace vigil::remote
