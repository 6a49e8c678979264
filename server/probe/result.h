// -----------------------------------------------------------------------------
// File: probe/result.h
// -----------------------------------------------------------------------------
//
// What one probe produced: blackbox_exporter's gauges (each with its HELP
// text), rendered in the Prometheus text format exactly as the exporter's
// registry writes them (families sorted by name, children by label
// values, Go's float formatting), plus the probe's log for `debug=true`.
// Not thread-safe: one probe fills one ProbeResult.
#ifndef VIGIL_SERVER_PROBE_RESULT_H_
#define VIGIL_SERVER_PROBE_RESULT_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vigil::probe {

class ProbeResult {
 public:
  using LabelPairs = std::vector<std::pair<std::string, std::string>>;

  // Registers gauge `name` (no children yet: a family without children is
  // not written, as a GaugeVec nobody set).
  void Declare(std::string_view name, std::string_view help);
  // Sets the child of `name` with `labels` (declaring `name` with `help`
  // first if needed).
  void Set(std::string_view name, std::string_view help, double v,
           const LabelPairs& labels = {});
  // The child's value; 0 if not set.
  double Get(std::string_view name, const LabelPairs& labels = {}) const;
  bool Has(std::string_view name) const;

  // logfmt-ish lines for debug=true.
  void Log(std::string_view level, std::string_view msg,
           const LabelPairs& kv = {});
  const std::string& log() const { return log_; }

  // The text format (version 0.0.4).
  std::string Render() const;

 private:
  struct Family {
    std::string help;
    std::map<LabelPairs, double> children;
  };
  std::map<std::string, Family, std::less<>> families_;
  std::string log_;
};

}  // namespace vigil::probe

#endif  // VIGIL_SERVER_PROBE_RESULT_H_
