// Parser of the PromQL test-script language (FORMAT.md §1-5).
#include "promql/promqltest/script.h"

#include <strings.h>

#include <cfloat>
#include <cmath>
#include <cstdlib>

#include "core/status_macros.h"
#include "core/time.h"
#include "fmt/format.h"
#include "promql/parser.h"

namespace vigil::promql::promqltest {

namespace {

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::vector<std::string_view> Fields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) i++;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') j++;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// PromQL number syntax minus hex, with digit separators.
bool ParseNumber(std::string_view s, double* out) {
  std::string t;
  for (char c : s) {
    if (c != '_') t += c;
  }
  if (t.empty()) return false;
  std::string_view body = t;
  double sign = 1;
  if (body[0] == '+' || body[0] == '-') {
    sign = body[0] == '-' ? -1 : 1;
    body.remove_prefix(1);
  }
  if (body.size() == 3 && strncasecmp(body.data(), "inf", 3) == 0)
    return *out = sign * INFINITY, true;
  if (body.size() == 3 && strncasecmp(body.data(), "nan", 3) == 0)
    return *out = NAN, true;
  for (char c : body) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' ||
          c == 'E' || c == '+' || c == '-')) {
      return false;
    }
  }
  char* end = nullptr;
  *out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

// Splits the value list into items, keeping `{{ ... }}` together.
std::vector<std::string> ValueItems(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (size_t i = 0; i < s.size(); i++) {
    if (s.compare(i, 2, "{{") == 0) {
      depth++;
      cur += "{{";
      i++;
      continue;
    }
    if (s.compare(i, 2, "}}") == 0 && depth > 0) {
      depth--;
      cur += "}}";
      i++;
      continue;
    }
    if ((s[i] == ' ' || s[i] == '\t') && depth == 0) {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
      continue;
    }
    cur += s[i];
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

absl::Status ParseItem(const std::string& item, std::vector<Slot>* out) {
  auto bad = [&] {
    return absl::InvalidArgumentError("bad value item " + item);
  };
  if (item.find("{{") != std::string::npos) {
    size_t k = 0;
    size_t last = item.rfind("}}");
    if (last + 2 < item.size()) {
      if (item[last + 2] != 'x') return bad();
      k = std::strtoull(item.c_str() + last + 3, nullptr, 10);
    }
    for (size_t i = 0; i <= k; i++) out->push_back({Slot::kHistogram, 0});
    return absl::OkStatus();
  }
  if (item == "_") return out->push_back({Slot::kGap, 0}), absl::OkStatus();
  if (item == "stale")
    return out->push_back({Slot::kStale, 0}), absl::OkStatus();
  size_t x = item.find('x');
  if (x == std::string::npos) {
    double v;
    if (!ParseNumber(item, &v)) return bad();
    out->push_back({Slot::kFloat, v});
    return absl::OkStatus();
  }
  std::string lhs = item.substr(0, x), times = item.substr(x + 1);
  if (times.empty() ||
      times.find_first_not_of("0123456789") != std::string::npos)
    return bad();
  uint64_t k = std::strtoull(times.c_str(), nullptr, 10);
  if (lhs == "_") {
    for (uint64_t i = 0; i < k; i++) out->push_back({Slot::kGap, 0});
    return absl::OkStatus();
  }
  if (lhs == "stale") {
    for (uint64_t i = 0; i <= k; i++) out->push_back({Slot::kStale, 0});
    return absl::OkStatus();
  }
  double a, b = 0;
  size_t op = std::string::npos;
  for (size_t i = 1; i < lhs.size(); i++) {
    if ((lhs[i] == '+' || lhs[i] == '-') && lhs[i - 1] != 'e' &&
        lhs[i - 1] != 'E') {
      op = i;
      break;
    }
  }
  if (op == std::string::npos) {
    if (!ParseNumber(lhs, &a)) return bad();
  } else {
    if (!ParseNumber(lhs.substr(0, op), &a) ||
        !ParseNumber(lhs.substr(op + 1), &b))
      return bad();
    if (lhs[op] == '-') b = -b;
  }
  double v = a;
  for (uint64_t i = 0; i <= k; i++) {
    out->push_back({Slot::kFloat, v});
    v += b;
  }
  return absl::OkStatus();
}

// Splits "<series> <values>" at the end of the series text.
size_t SeriesEnd(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && s[i] != '{' && s[i] != ' ' && s[i] != '\t') i++;
  if (i < s.size() && s[i] == '{') {
    char quote = 0;
    for (; i < s.size(); i++) {
      char c = s[i];
      if (quote) {
        if (c == '\\' && quote != '`') {
          i++;
        } else if (c == quote) {
          quote = 0;
        }
      } else if (c == '"' || c == '\'' || c == '`') {
        quote = c;
      } else if (c == '}') {
        return i + 1;
      }
    }
  }
  return i;
}

absl::StatusOr<Labels> ParseSeriesLabels(std::string_view s) {
  VIGIL_ASSIGN_OR_RETURN(auto matchers, ParseMetricSelector(s));
  std::vector<Label> l;
  for (const Matcher& m : matchers) {
    if (m.type() != MatchType::kEqual)
      return absl::InvalidArgumentError("non-equality matcher");
    if (m.value().empty()) continue;
    bool dup = false;
    for (auto& x : l) dup |= x.name == m.name();
    if (!dup) l.push_back({m.name(), m.value()});
  }
  return Labels::FromUnsorted(std::move(l));
}

absl::StatusOr<SeriesLine> ParseSeriesLine(std::string_view line) {
  size_t end = SeriesEnd(line);
  SeriesLine sl;
  std::string_view series = line.substr(0, end);
  std::string_view rest = line.substr(end);
  if (series.size() > 3 && series.substr(series.size() - 3) == "@st") {
    sl.start_timestamps = true;
    return sl;
  }
  if (rest.substr(0, 3) == "@st") {
    sl.start_timestamps = true;
    return sl;
  }
  VIGIL_ASSIGN_OR_RETURN(sl.labels, ParseSeriesLabels(series));
  for (const std::string& item : ValueItems(Trim(rest))) {
    VIGIL_RETURN_IF_ERROR(ParseItem(item, &sl.slots));
  }
  return sl;
}

absl::StatusOr<int64_t> Dur(std::string_view s) { return ParseDuration(s); }

absl::Status ParseEvalHeader(std::string_view line, EvalCmd* ev) {
  auto f = Fields(line);
  std::string first(f[0]);
  for (char& c : first) c = static_cast<char>(std::tolower(c));
  if (first == "eval_fail") ev->fail = true;
  if (first == "eval_ordered") ev->ordered = true;
  if (first == "eval_warn") ev->warn.push_back({});
  if (first == "eval_info") ev->info.push_back({});
  if (f.size() < 3) return absl::InvalidArgumentError("bad eval line");
  size_t consumed;
  if (f[1] == "instant") {
    if (f[2] != "at") return absl::InvalidArgumentError("expected 'at'");
    VIGIL_ASSIGN_OR_RETURN(ev->at, Dur(f[3]));
    consumed = 4;
  } else if (f[1] == "range") {
    if (f.size() < 8 || f[2] != "from" || f[4] != "to" || f[6] != "step") {
      return absl::InvalidArgumentError("bad range eval");
    }
    ev->range = true;
    VIGIL_ASSIGN_OR_RETURN(ev->start, Dur(f[3]));
    VIGIL_ASSIGN_OR_RETURN(ev->end, Dur(f[5]));
    VIGIL_ASSIGN_OR_RETURN(ev->step, Dur(f[7]));
    consumed = 8;
  } else {
    return absl::InvalidArgumentError("expected instant or range");
  }
  if (f.size() <= consumed)
    return absl::InvalidArgumentError("missing expression");
  ev->expr = std::string(Trim(line.substr(f[consumed].data() - line.data())));
  return absl::OkStatus();
}

absl::Status ParseExpectLine(std::string_view line, EvalCmd* ev) {
  std::string_view rest = Trim(line.substr(6));
  if (rest.substr(0, 12) == "range vector") {
    auto f = Fields(rest);
    if (f.size() != 8)
      return absl::InvalidArgumentError("bad expect range vector");
    ev->range_vector = true;
    VIGIL_ASSIGN_OR_RETURN(ev->rv_start, Dur(f[3]));
    VIGIL_ASSIGN_OR_RETURN(ev->rv_end, Dur(f[5]));
    VIGIL_ASSIGN_OR_RETURN(ev->rv_step, Dur(f[7]));
    return absl::OkStatus();
  }
  if (rest.substr(0, 6) == "string") {
    VIGIL_ASSIGN_OR_RETURN(auto e, ParseExpr(Trim(rest.substr(6))));
    if (e->kind != NodeKind::kStringLiteral)
      return absl::InvalidArgumentError("bad expect string");
    ev->str = e->As<StringLiteral>().value;
    return absl::OkStatus();
  }
  size_t sp = rest.find_first_of(" \t");
  std::string kind(rest.substr(0, sp));
  std::string_view tail =
      sp == std::string_view::npos ? "" : Trim(rest.substr(sp));
  AnnoExpect a;
  if (tail.substr(0, 4) == "msg:") {
    a = {AnnoExpect::kMsg, std::string(Trim(tail.substr(4)))};
  } else if (tail.substr(0, 6) == "regex:") {
    a = {AnnoExpect::kRegex, std::string(Trim(tail.substr(6)))};
  } else if (!tail.empty()) {
    return absl::InvalidArgumentError("bad expect line");
  }
  if (kind == "fail") {
    ev->fail = true;
    ev->fail_expect = a;
  } else if (kind == "warn") {
    ev->warn.push_back(a);
  } else if (kind == "info") {
    ev->info.push_back(a);
  } else if (kind == "no_warn") {
    ev->no_warn = true;
  } else if (kind == "no_info") {
    ev->no_info = true;
  } else if (kind == "ordered") {
    ev->ordered = true;
  } else {
    return absl::InvalidArgumentError("unknown expect kind " + kind);
  }
  return absl::OkStatus();
}

}  // namespace

bool AlmostEqual(double e, double a) {
  if (IsStaleNaN(e) || IsStaleNaN(a)) return IsStaleNaN(e) && IsStaleNaN(a);
  if (std::isnan(e) && std::isnan(a)) return true;
  if (a == e) return true;
  constexpr double kMinNormal = 2.2250738585072014e-308, kEps = 1e-6;
  double sum = std::fabs(a) + std::fabs(e), diff = std::fabs(a - e);
  if (a == 0 || e == 0 || sum < kMinNormal) return diff < kEps * kMinNormal;
  return diff / std::min(sum, DBL_MAX) < kEps;
}

absl::StatusOr<std::vector<Command>> ParseScript(std::string_view text,
                                                 const std::string& name) {
  std::vector<std::string> lines;
  size_t p = 0;
  while (p <= text.size()) {
    size_t nl = text.find('\n', p);
    if (nl == std::string_view::npos) nl = text.size();
    std::string l(Trim(text.substr(p, nl - p)));
    if (!l.empty() && l[0] == '#') l.clear();
    lines.push_back(std::move(l));
    p = nl + 1;
  }
  std::vector<Command> cmds;
  auto err = [&](size_t i, const absl::Status& s) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: {}", name, i + 1, std::string(s.message())));
  };
  for (size_t i = 0; i < lines.size(); i++) {
    const std::string& l = lines[i];
    if (l.empty()) continue;
    auto f = Fields(l);
    std::string first(f[0]);
    for (char& c : first) c = static_cast<char>(std::tolower(c));
    if (first == "clear") {
      cmds.push_back({Command::kClear, {}, {}});
      continue;
    }
    if (first.rfind("load", 0) == 0) {
      Command c{Command::kLoad, {}, {}};
      c.load.nhcb = first == "load_with_nhcb";
      if (f.size() != 2)
        return err(i, absl::InvalidArgumentError("bad load line"));
      auto step = Dur(f[1]);
      if (!step.ok()) return err(i, step.status());
      c.load.step = *step;
      bool st_next = false;
      while (i + 1 < lines.size() && !lines[i + 1].empty()) {
        i++;
        auto sl = ParseSeriesLine(lines[i]);
        if (!sl.ok()) return err(i, sl.status());
        if (sl->start_timestamps && sl->slots.empty() && sl->labels.empty()) {
          st_next = true;
          continue;
        }
        sl->start_timestamps = st_next;
        st_next = false;
        c.load.series.push_back(std::move(*sl));
      }
      cmds.push_back(std::move(c));
      continue;
    }
    if (first.rfind("eval", 0) == 0) {
      Command c{Command::kEval, {}, {}};
      c.eval.line = static_cast<int>(i + 1);
      if (auto s = ParseEvalHeader(l, &c.eval); !s.ok()) return err(i, s);
      while (i + 1 < lines.size() && !lines[i + 1].empty()) {
        i++;
        const std::string& b = lines[i];
        auto bf = Fields(b);
        if (bf[0] == "expect") {
          if (auto s = ParseExpectLine(b, &c.eval); !s.ok()) return err(i, s);
          continue;
        }
        if (bf[0] == "expected_fail_message" ||
            bf[0] == "expected_fail_regexp") {
          c.eval.fail_expect = {
              bf[0] == "expected_fail_message" ? AnnoExpect::kMsg
                                               : AnnoExpect::kRegex,
              std::string(Trim(std::string_view(b).substr(bf[0].size())))};
          break;
        }
        double num;
        if (bf.size() == 1 && ParseNumber(bf[0], &num)) {
          if (bf[0].find_first_of("xX") == std::string_view::npos) {
            c.eval.scalar = num;
            break;
          }
        }
        if (b.find("{{") != std::string::npos) c.eval.expects_histogram = true;
        auto sl = ParseSeriesLine(b);
        if (!sl.ok()) return err(i, sl.status());
        c.eval.expected.push_back(std::move(*sl));
      }
      cmds.push_back(std::move(c));
      continue;
    }
    return err(i, absl::InvalidArgumentError("unknown command " + first));
  }
  return cmds;
}

}  // namespace vigil::promql::promqltest
