// label_replace, label_join and the sort functions.
#include <algorithm>
#include <cmath>

#include "core/status_macros.h"
#include "fmt/format.h"
#include "promql/internal/eval.h"
#include "re2/re2.h"

namespace vigil::promql::internal {

namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_';
}

// Go's regexp.Expand: $1, ${1}, $name, ${name}, $$; the name after a bare
// `$` is the longest run of letters, digits and underscores.
std::string Expand(const RE2& re, std::string_view tmpl,
                   const std::vector<re2::StringPiece>& groups) {
  std::string out;
  const auto& names = re.NamedCapturingGroups();
  for (size_t i = 0; i < tmpl.size(); i++) {
    char c = tmpl[i];
    if (c != '$' || i + 1 >= tmpl.size()) {
      out += c;
      continue;
    }
    if (tmpl[i + 1] == '$') {
      out += '$';
      i++;
      continue;
    }
    std::string name;
    size_t j = i + 1;
    if (tmpl[j] == '{') {
      size_t close = tmpl.find('}', j);
      if (close == std::string_view::npos) {
        out += c;
        continue;
      }
      name = std::string(tmpl.substr(j + 1, close - j - 1));
      bool ok =
          !name.empty() && std::all_of(name.begin(), name.end(), IsNameChar);
      if (!ok) {
        out += c;
        continue;
      }
      j = close + 1;
    } else {
      while (j < tmpl.size() && IsNameChar(tmpl[j])) j++;
      name = std::string(tmpl.substr(i + 1, j - i - 1));
      if (name.empty()) {
        out += c;
        continue;
      }
    }
    i = j - 1;
    int idx = -1;
    if (std::all_of(name.begin(), name.end(),
                    [](char ch) { return ch >= '0' && ch <= '9'; })) {
      idx = name.size() > 9 ? -1 : std::stoi(name);
    } else if (auto it = names.find(name); it != names.end()) {
      idx = it->second;
    }
    if (idx >= 0 && static_cast<size_t>(idx) < groups.size() &&
        groups[idx].data() != nullptr) {
      out.append(groups[idx].data(), groups[idx].size());
    }
  }
  return out;
}

// facette/natsort's Compare(a, b): true if a sorts before b, comparing runs
// of digits numerically.
bool NatLess(const std::string& a, const std::string& b) {
  auto chunks = [](const std::string& s) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < s.size()) {
      bool digit = std::isdigit(static_cast<unsigned char>(s[i]));
      size_t j = i;
      while (j < s.size() &&
             (std::isdigit(static_cast<unsigned char>(s[j])) != 0) == digit)
        j++;
      out.push_back(s.substr(i, j - i));
      i = j;
    }
    return out;
  };
  auto ca = chunks(a), cb = chunks(b);
  for (size_t i = 0; i < ca.size() && i < cb.size(); i++) {
    if (ca[i] == cb[i]) continue;
    bool da = std::isdigit(static_cast<unsigned char>(ca[i][0]));
    bool db = std::isdigit(static_cast<unsigned char>(cb[i][0]));
    if (da && db) {
      std::string x =
          ca[i].substr(std::min(ca[i].find_first_not_of('0'), ca[i].size()));
      std::string y =
          cb[i].substr(std::min(cb[i].find_first_not_of('0'), cb[i].size()));
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      continue;
    }
    return ca[i] < cb[i];
  }
  return ca.size() < cb.size();
}

// Go's utf8.ValidString.
bool ValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80         ? 1
            : (c >> 5) == 6  ? 2
            : (c >> 4) == 14 ? 3
            : (c >> 3) == 30 ? 4
                             : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? c : c & (0x7f >> n);
    for (int k = 1; k < n; k++) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 2) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
        (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += n;
  }
  return true;
}

bool ValidLabelName(std::string_view s) { return !s.empty() && ValidUtf8(s); }

absl::StatusOr<std::string> StringArg(Evaluator* ev, const Expr& e) {
  VIGIL_ASSIGN_OR_RETURN(EvalValue v, ev->Eval(e));
  return v.str;
}

}  // namespace

absl::StatusOr<EvalValue> Evaluator::EvalLabelReplace(const Call& e) {
  VIGIL_ASSIGN_OR_RETURN(std::string dst, StringArg(this, *e.args[1]));
  VIGIL_ASSIGN_OR_RETURN(std::string repl, StringArg(this, *e.args[2]));
  VIGIL_ASSIGN_OR_RETURN(std::string src, StringArg(this, *e.args[3]));
  VIGIL_ASSIGN_OR_RETURN(std::string regex, StringArg(this, *e.args[4]));
  RE2::Options ro;
  ro.set_log_errors(false);
  RE2 re("^(?s:" + regex + ")$", ro);
  if (!re.ok()) {
    return absl::FailedPreconditionError(fmt::format(
        "invalid regular expression in label_replace(): {}", regex));
  }
  if (!ValidLabelName(dst)) {
    return absl::FailedPreconditionError(fmt::format(
        "invalid destination label name in label_replace(): {}", dst));
  }
  VIGIL_ASSIGN_OR_RETURN(EvalValue v, Eval(*e.args[0]));
  std::vector<re2::StringPiece> groups(re.NumberOfCapturingGroups() + 1);
  for (Series& s : v.mat) {
    std::string val(s.metric.Get(src));
    if (!re.Match(val, 0, val.size(), RE2::UNANCHORED, groups.data(),
                  static_cast<int>(groups.size()))) {
      continue;
    }
    std::string res = Expand(re, repl, groups);
    s.metric = LabelsBuilder(s.metric).Set(dst, res).Build();
    if (dst == kMetricName) s.drop_name = false;
  }
  VIGIL_ASSIGN_OR_RETURN(v.mat, MergeSameLabelset(std::move(v.mat)));
  return v;
}

absl::StatusOr<EvalValue> Evaluator::EvalLabelJoin(const Call& e) {
  VIGIL_ASSIGN_OR_RETURN(std::string dst, StringArg(this, *e.args[1]));
  VIGIL_ASSIGN_OR_RETURN(std::string sep, StringArg(this, *e.args[2]));
  std::vector<std::string> srcs;
  for (size_t i = 3; i < e.args.size(); i++) {
    VIGIL_ASSIGN_OR_RETURN(std::string src, StringArg(this, *e.args[i]));
    srcs.push_back(std::move(src));
    if (!ValidLabelName(srcs.back())) {
      return absl::FailedPreconditionError(fmt::format(
          "invalid source label name in label_join(): {}", srcs.back()));
    }
  }
  if (!ValidLabelName(dst)) {
    return absl::FailedPreconditionError(
        fmt::format("invalid destination label name in label_join(): {}", dst));
  }
  VIGIL_ASSIGN_OR_RETURN(EvalValue v, Eval(*e.args[0]));
  for (Series& s : v.mat) {
    std::string joined;
    for (size_t i = 0; i < srcs.size(); i++) {
      if (i > 0) joined += sep;
      joined += s.metric.Get(srcs[i]);
    }
    s.metric = LabelsBuilder(s.metric).Set(dst, joined).Build();
    if (dst == kMetricName) s.drop_name = false;
  }
  VIGIL_ASSIGN_OR_RETURN(v.mat, MergeSameLabelset(std::move(v.mat)));
  return v;
}

absl::StatusOr<EvalValue> Evaluator::SortInstant(
    std::string_view name, EvalValue v, const std::vector<std::string>& lbls) {
  std::vector<Series>& m = v.mat;
  if (name == "sort" || name == "sort_desc") {
    // Go: sort.Sort(sort.Reverse(heap)); NaN counts as "less" in the heap.
    bool asc = name == "sort";
    auto heap_less = [asc](const Series& a, const Series& b) {
      if (std::isnan(a.vs[0])) return true;
      return asc ? a.vs[0] > b.vs[0] : a.vs[0] < b.vs[0];
    };
    GoSort(&m,
           [&](const Series& a, const Series& b) { return heap_less(b, a); });
    return v;
  }
  bool desc = name == "sort_by_label_desc";
  std::stable_sort(m.begin(), m.end(), [&](const Series& a, const Series& b) {
    for (const std::string& l : lbls) {
      std::string x(a.metric.Get(l)), y(b.metric.Get(l));
      if (x == y) continue;
      return desc ? NatLess(y, x) : NatLess(x, y);
    }
    int c = Compare(a.metric, b.metric);
    return desc ? c > 0 : c < 0;
  });
  return v;
}

}  // namespace vigil::promql::internal
