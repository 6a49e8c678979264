// --backfill: the history of the same model as an OpenMetrics file for
// `vigil tsdb import openmetrics`. Every page is rendered at each step and
// its samples get the target labels a scrape through --sd-file would add,
// so the live pages continue the same series. OpenMetrics wants each
// family's lines together and each series' samples in time order: a host
// is simulated over the whole window, its samples are grouped per series,
// appended to one spool file per family, and the spools are joined at the
// end. `_created` gauges are left out (OpenMetrics reserves the suffix).
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "examples/sim/app.h"
#include "fmt/format.h"

namespace vigil::sim {

namespace {

struct Family {
  std::string help_type;  // "# HELP ...\n# TYPE ...\n"
  std::FILE* spool = nullptr;
};

struct SeriesBuf {
  std::string family;
  std::string text;  // series text with target labels
  std::string samples;
};

// name{a="b"} + target labels -> name{a="b",job="...",...}.
std::string WithLabels(std::string_view series, const std::string& extra) {
  size_t brace = series.find('{');
  if (brace == std::string_view::npos) {
    return std::string(series) + "{" + extra + "}";
  }
  std::string s(series.substr(0, series.size() - 1));  // drop '}'
  return s + (series[series.size() - 2] == '{' ? "" : ",") + extra + "}";
}

}  // namespace

absl::Status App::Backfill() {
  namespace fs = std::filesystem;
  fs::path spool_dir = c_.backfill_file + ".spool";
  std::error_code ec;
  fs::create_directories(spool_dir, ec);
  std::map<std::string, Family> families;
  std::vector<std::string> order;
  const int64_t end = c_.start + c_.backfill;
  uint64_t samples = 0;
  for (size_t i = 1; i < targets_.size(); ++i) {
    const Target& t = targets_[i];
    if (t.kind == PageKind::kEngine &&
        c_.engines[size_t(t.host)] == EngineKind::kTrtllm) {
      continue;
    }
    std::string extra;
    for (const auto& [k, v] : TargetLabels(t)) {
      extra += (extra.empty() ? "" : ",") + k + "=\"" + v + "\"";
    }
    std::vector<SeriesBuf> series;
    std::map<std::string, size_t, std::less<>> index;
    // `up` (and the probe's series) as a scrape of the target would add.
    auto add_extra = [&](const ScrapeExtra& x, int64_t ts) {
      if (!families.count(x.family)) {
        Family f;
        f.help_type = "# HELP " + x.family + " " + x.help + "\n# TYPE " +
                      x.family + " gauge\n";
        std::string path =
            (spool_dir / std::to_string(families.size())).string();
        f.spool = std::fopen(path.c_str(), "w+");
        if (!f.spool) return false;
        families[x.family] = f;
        order.push_back(x.family);
      }
      auto it = index.find(x.series);
      if (it == index.end()) {
        it = index.emplace(x.series, series.size()).first;
        series.push_back({x.family, x.series, ""});
      }
      series[it->second].samples +=
          fmt::format("{} {}\n", x.value, std::to_string(ts));
      ++samples;
      return true;
    };
    for (int64_t ts = c_.start; ts <= end; ts += c_.backfill_step) {
      for (const ScrapeExtra& x : ScrapeExtras(t, ts)) {
        if (!add_extra(x, ts)) return absl::UnavailableError("create spool");
      }
      if (!PageAnswersAt(t, ts)) continue;
      std::string page = fleet_.Render(t.kind, t.host, ts);
      std::string_view rest(page), family, help;
      bool skip = false;
      while (!rest.empty()) {
        size_t nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
        if (line.rfind("# HELP ", 0) == 0) {
          help = line;
          continue;
        }
        if (line.rfind("# TYPE ", 0) == 0) {
          std::string_view rest_t = line.substr(7);
          family = rest_t.substr(0, rest_t.find(' '));
          skip = family.size() > 8 &&
                 family.substr(family.size() - 8) == "_created";
          if (!skip && !families.count(std::string(family))) {
            Family f;
            f.help_type = std::string(help) + "\n" + std::string(line) + "\n";
            std::string path =
                (spool_dir / std::to_string(families.size())).string();
            f.spool = std::fopen(path.c_str(), "w+");
            if (!f.spool) return absl::UnavailableError("create " + path);
            families[std::string(family)] = f;
            order.push_back(std::string(family));
          }
          continue;
        }
        if (line.empty() || line[0] == '#' || skip) continue;
        size_t sp = line.rfind(' ');
        std::string_view text = line.substr(0, sp);
        auto it = index.find(text);
        if (it == index.end()) {
          it = index.emplace(std::string(text), series.size()).first;
          series.push_back({std::string(family), WithLabels(text, extra), ""});
        }
        SeriesBuf& b = series[it->second];
        b.samples.append(line.substr(sp + 1));
        b.samples.push_back(' ');
        b.samples.append(std::to_string(ts));
        b.samples.push_back('\n');
        ++samples;
      }
    }
    for (const auto& b : series) {
      std::FILE* f = families[b.family].spool;
      size_t pos = 0;
      while (pos < b.samples.size()) {
        size_t nl = b.samples.find('\n', pos);
        std::fwrite(b.text.data(), 1, b.text.size(), f);
        std::fputc(' ', f);
        std::fwrite(b.samples.data() + pos, 1, nl + 1 - pos, f);
        pos = nl + 1;
      }
    }
  }
  std::FILE* out = std::fopen(c_.backfill_file.c_str(), "w");
  if (!out) return absl::UnavailableError("create " + c_.backfill_file);
  std::vector<char> buf(1 << 20);
  for (const auto& name : order) {
    Family& f = families[name];
    std::fwrite(f.help_type.data(), 1, f.help_type.size(), out);
    std::rewind(f.spool);
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), f.spool)) > 0) {
      std::fwrite(buf.data(), 1, n, out);
    }
    std::fclose(f.spool);
  }
  std::fputs("# EOF\n", out);
  bool ok = std::fclose(out) == 0;
  fs::remove_all(spool_dir, ec);
  if (!ok) return absl::UnavailableError("write " + c_.backfill_file);
  std::fprintf(stderr,
               "vigil-sim: wrote %llu samples (%lld s at %lld s) to %s\n",
               (unsigned long long)samples, (long long)c_.backfill,
               (long long)c_.backfill_step, c_.backfill_file.c_str());
  return absl::OkStatus();
}

}  // namespace vigil::sim
