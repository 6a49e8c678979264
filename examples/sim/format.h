// Number formatting of the exporters vigil-sim imitates. Each exporter
// prints floats its own way, and the pages must look like the real ones
// (fixtures/metrics/CATALOG.md, section 0).
#ifndef VIGIL_EXAMPLES_SIM_FORMAT_H_
#define VIGIL_EXAMPLES_SIM_FORMAT_H_

#include <string>
#include <string_view>

namespace vigil::sim {

// Python prometheus_client: repr() of the float ("0.0", "162.0",
// "0.28"), switched to an exponent once the integer part has more than six
// digits ("1.048576e+06", "1.7740114612876017e+09"), as the client does to
// look like Go.
void AppendPy(std::string* out, double v);

// Go client_golang: strconv.FormatFloat(v, 'g', -1, 64) ("0", "61440",
// "2.1164032e+08").
void AppendGo(std::string* out, double v);

// dcgm-exporter: integer fields as integers, float fields with six
// decimals ("40.979000").
void AppendDcgmInt(std::string* out, double v);
void AppendDcgmFloat(std::string* out, double v);

// Appends `name`, `labels` (already "{...}" or empty) and a space.
inline void AppendSeries(std::string* out, std::string_view name,
                         std::string_view labels) {
  out->append(name);
  out->append(labels);
  out->push_back(' ');
}

}  // namespace vigil::sim

#endif  // VIGIL_EXAMPLES_SIM_FORMAT_H_
