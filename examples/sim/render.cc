#include "examples/sim/render.h"

#include <cmath>

#include "examples/sim/format.h"

namespace vigil::sim {

std::string HostName(int h) { return "gpu-node-" + std::to_string(h); }

namespace internal {

std::string Labels(const LabelPairs& pairs) {
  if (pairs.empty()) return "";
  std::string s = "{";
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (i) s.push_back(',');
    s.append(pairs[i].first);
    s.append("=\"");
    for (char ch : pairs[i].second) {
      if (ch == '\\' || ch == '"') {
        s.push_back('\\');
        s.push_back(ch);
      } else if (ch == '\n') {
        s.append("\\n");
      } else {
        s.push_back(ch);
      }
    }
    s.push_back('"');
  }
  s.push_back('}');
  return s;
}

void PageWriter::Family(std::string_view name, std::string_view type,
                        std::string_view help) {
  out_->append("# HELP ").append(name).append(" ").append(help);
  out_->append("\n# TYPE ").append(name).append(" ").append(type);
  out_->push_back('\n');
}

void PageWriter::Sample(std::string_view name, std::string_view labels,
                        double v) {
  AppendSeries(out_, name, labels);
  num_(out_, v);
  out_->push_back('\n');
}

void PageWriter::Histogram(std::string_view name, const LabelPairs& pairs,
                           const std::vector<double>& les, const Hist& h,
                           bool le_last, std::string_view order) {
  std::string base = Labels(pairs);
  std::string bucket = std::string(name) + "_bucket";
  std::string count = std::string(name) + "_count";
  std::string sum = std::string(name) + "_sum";
  for (char part : order) {
    if (part == 'c') {
      Sample(count, base, std::floor(h.cum.empty() ? 0 : h.cum.back()));
    } else if (part == 's') {
      Sample(sum, base, h.sum);
    } else {
      for (size_t i = 0; i <= les.size(); ++i) {
        std::string le;
        if (i == les.size()) {
          le = "+Inf";
        } else {
          num_(&le, les[i]);
        }
        LabelPairs with = pairs;
        auto at = with.end();
        if (!le_last) {
          at = with.begin();
          while (at != with.end() && at->first < "le") ++at;
        }
        with.insert(at, {"le", le});
        Sample(bucket, Labels(with),
               std::floor(i < h.cum.size() ? h.cum[i] : 0));
      }
    }
  }
}

}  // namespace internal

}  // namespace vigil::sim
