// Relabelling as Prometheus's model/relabel: validation, the per-action
// rewrite and Go's regexp.Expand.
#include "core/relabel.h"

#include <locale.h>
#include <re2/re2.h>
#include <wctype.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "absl/strings/ascii.h"
#include "core/go/strconv.h"
#include "core/go/utf8.h"
#include "fmt/format.h"

namespace vigil {
namespace {

// ---- MD5 (RFC 1321), only for hashmod: Prometheus hashes with md5 ---------

struct Md5 {
  uint32_t a = 0x67452301, b = 0xefcdab89, c = 0x98badcfe, d = 0x10325476;

  static uint32_t Rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

  void Block(const unsigned char* p) {
    static constexpr uint32_t kK[64] = {
        0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a,
        0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
        0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
        0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
        0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8,
        0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
        0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
        0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
        0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
        0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
        0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
    static constexpr int kS[16] = {7, 12, 17, 22, 5, 9,  14, 20,
                                   4, 11, 16, 23, 6, 10, 15, 21};
    uint32_t m[16];
    for (int i = 0; i < 16; ++i) {
      m[i] = uint32_t(p[4 * i]) | uint32_t(p[4 * i + 1]) << 8 |
             uint32_t(p[4 * i + 2]) << 16 | uint32_t(p[4 * i + 3]) << 24;
    }
    uint32_t A = a, B = b, C = c, D = d;
    for (int i = 0; i < 64; ++i) {
      uint32_t f;
      int g;
      if (i < 16) {
        f = (B & C) | (~B & D), g = i;
      } else if (i < 32) {
        f = (D & B) | (~D & C), g = (5 * i + 1) % 16;
      } else if (i < 48) {
        f = B ^ C ^ D, g = (3 * i + 5) % 16;
      } else {
        f = C ^ (B | ~D), g = (7 * i) % 16;
      }
      const uint32_t t = D;
      D = C;
      C = B;
      B = B + Rotl(A + f + kK[i] + m[g], kS[(i / 16) * 4 + i % 4]);
      A = t;
    }
    a += A, b += B, c += C, d += D;
  }

  std::array<unsigned char, 16> Sum(std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    size_t n = s.size();
    for (; n >= 64; n -= 64, p += 64) Block(p);
    unsigned char tail[128] = {};
    std::memcpy(tail, p, n);
    tail[n] = 0x80;
    const size_t len = n < 56 ? 64 : 128;
    const uint64_t bits = uint64_t(s.size()) * 8;
    for (int i = 0; i < 8; ++i) tail[len - 8 + i] = (bits >> (8 * i)) & 0xff;
    Block(tail);
    if (len == 128) Block(tail + 64);
    std::array<unsigned char, 16> out;
    const uint32_t w[4] = {a, b, c, d};
    for (int i = 0; i < 16; ++i) out[i] = (w[i / 4] >> (8 * (i % 4))) & 0xff;
    return out;
  }
};

// ---- Go's regexp error texts ----------------------------------------------

std::string GoRegexpErrorCode(const RE2& re) {
  switch (re.error_code()) {
    case RE2::ErrorBadEscape:
      return "invalid escape sequence";
    case RE2::ErrorBadCharClass:
      return "invalid character class";
    case RE2::ErrorBadCharRange:
      return "invalid character class range";
    case RE2::ErrorMissingBracket:
      return "missing closing ]";
    case RE2::ErrorMissingParen:
      return "missing closing )";
    case RE2::ErrorUnexpectedParen:
      return "unexpected )";
    case RE2::ErrorTrailingBackslash:
      return "trailing backslash at end of expression";
    case RE2::ErrorRepeatArgument:
      return "missing argument to repetition operator";
    case RE2::ErrorRepeatSize:
      return "invalid repeat count";
    case RE2::ErrorRepeatOp:
      return "invalid nested repetition operator";
    case RE2::ErrorBadPerlOp:
      return "invalid or unsupported Perl syntax";
    case RE2::ErrorBadUTF8:
      return "invalid UTF-8";
    case RE2::ErrorBadNamedCapture:
      return "invalid named capture";
    case RE2::ErrorPatternTooLarge:
      return "expression too large";
    default:
      return re.error();
  }
}

std::shared_ptr<const RE2> CompileAnchored(std::string_view source) {
  RE2::Options opts;
  opts.set_log_errors(false);
  return std::make_shared<RE2>(fmt::format("^(?s:{})$", source), opts);
}

// A regex that is a plain literal, or an alternation of them.
std::shared_ptr<const std::vector<std::string>> LiteralsOf(
    std::string_view source) {
  constexpr std::string_view kMeta = "\\.+*?()[]{}^$";
  for (char c : source) {
    if (kMeta.find(c) != std::string_view::npos) return nullptr;
  }
  auto lits = std::make_shared<std::vector<std::string>>();
  size_t start = 0;
  while (true) {
    const size_t bar = source.find('|', start);
    lits->emplace_back(source.substr(start, bar - start));
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return lits;
}

// The legacy charset plus $var / ${var} references (relabelTargetLegacy).
bool IsValidTargetTemplate(std::string_view s) {
  static const RE2* const kRe =
      new RE2(R"(^(?:(?:[a-zA-Z_]|\$(?:\{\w+\}|\w+))+\w*)+$)");
  return RE2::FullMatch(s, *kRe);
}

// Go's strings.ToLower / ToUpper: ASCII fast path, else per rune (invalid
// bytes become U+FFFD, as strings.Map does).
std::string ChangeCase(std::string_view s, bool upper) {
  bool ascii = true;
  for (char c : s) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) {
    std::string out(s);
    return upper ? absl::AsciiStrToUpper(out) : absl::AsciiStrToLower(out);
  }
  static const locale_t kLocale =
      newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    uint32_t r;
    i += go::DecodeRune(s, i, &r);
    if (kLocale != static_cast<locale_t>(0)) {
      r = upper ? towupper_l(r, kLocale) : towlower_l(r, kLocale);
    }
    go::AppendRune(&out, r);
  }
  return out;
}

// Go's labels.Builder: base labels, then sets in insertion order, then
// deletions. Range() order (base first, then additions) matters for
// labelmap collisions, so it is kept rather than sorting eagerly.
class Builder {
 public:
  explicit Builder(const Labels& base) : base_(base) {}

  std::string_view Get(std::string_view n) const {
    for (const Label& a : add_) {
      if (a.name == n) return a.value;
    }
    if (std::find(del_.begin(), del_.end(), n) != del_.end()) return "";
    return base_.Get(n);
  }
  void Del(std::string_view n) {
    add_.erase(std::remove_if(add_.begin(), add_.end(),
                              [&](const Label& l) { return l.name == n; }),
               add_.end());
    if (std::find(del_.begin(), del_.end(), n) == del_.end())
      del_.emplace_back(n);
  }
  void Set(std::string_view n, std::string_view v) {
    if (v.empty()) return Del(n);
    for (Label& a : add_) {
      if (a.name == n) {
        a.value = std::string(v);
        return;
      }
    }
    add_.push_back({std::string(n), std::string(v)});
  }
  // The current labels in Go's Range order (a snapshot).
  std::vector<Label> Snapshot() const {
    std::vector<Label> out;
    for (const Label& l : base_) {
      if (std::find(del_.begin(), del_.end(), l.name) != del_.end()) continue;
      bool added = false;
      for (const Label& a : add_) added = added || a.name == l.name;
      if (!added) out.push_back(l);
    }
    out.insert(out.end(), add_.begin(), add_.end());
    return out;
  }
  bool changed() const { return !add_.empty() || !del_.empty(); }
  Labels Build() const { return Labels::FromUnsorted(Snapshot()); }

 private:
  const Labels& base_;
  std::vector<Label> add_;
  std::vector<std::string> del_;
};

// Submatches of a full match of `re` on `val`, or false.
bool Submatches(const RE2& re, std::string_view val,
                std::vector<std::string_view>* groups) {
  const int n = re.NumberOfCapturingGroups() + 1;
  std::vector<re2::StringPiece> sp(n);
  if (!re.Match(re2::StringPiece(val.data(), val.size()), 0, val.size(),
                RE2::UNANCHORED, sp.data(), n)) {
    return false;
  }
  groups->clear();
  for (const auto& p : sp) {
    groups->push_back(p.data() == nullptr
                          ? std::string_view()
                          : std::string_view(p.data(), p.size()));
  }
  return true;
}

bool RelabelOne(const RelabelConfig& cfg, Builder& lb) {
  std::string val;
  for (size_t i = 0; i < cfg.source_labels.size(); ++i) {
    if (i > 0) val += cfg.separator;
    val += lb.Get(cfg.source_labels[i]);
  }
  switch (cfg.action) {
    case RelabelAction::kDrop:
      return !cfg.regex.Matches(val);
    case RelabelAction::kKeep:
      return cfg.regex.Matches(val);
    case RelabelAction::kDropEqual:
      return lb.Get(cfg.target_label) != val;
    case RelabelAction::kKeepEqual:
      return lb.Get(cfg.target_label) == val;
    case RelabelAction::kReplace: {
      // Prometheus's fast path: set (or delete) a constant.
      if (val.empty() && cfg.regex.is_default() &&
          cfg.target_label.find('$') == std::string::npos &&
          cfg.replacement.find('$') == std::string::npos) {
        lb.Set(cfg.target_label, cfg.replacement);
        break;
      }
      std::vector<std::string_view> groups;
      if (!Submatches(cfg.regex.re(), val, &groups)) break;
      std::string target;
      ExpandTemplate(cfg.regex.re(), cfg.target_label, groups, &target);
      if (!IsValidLabelName(target)) break;
      std::string res;
      ExpandTemplate(cfg.regex.re(), cfg.replacement, groups, &res);
      if (res.empty()) {
        lb.Del(target);
      } else {
        lb.Set(target, res);
      }
      break;
    }
    case RelabelAction::kLowercase:
      lb.Set(cfg.target_label, ChangeCase(val, false));
      break;
    case RelabelAction::kUppercase:
      lb.Set(cfg.target_label, ChangeCase(val, true));
      break;
    case RelabelAction::kHashMod: {
      const auto sum = Md5().Sum(val);
      uint64_t h = 0;
      for (int i = 8; i < 16; ++i) h = h << 8 | sum[i];
      lb.Set(cfg.target_label, std::to_string(h % cfg.modulus));
      break;
    }
    case RelabelAction::kLabelMap: {
      std::vector<std::string_view> groups;
      for (const Label& l : lb.Snapshot()) {
        if (!Submatches(cfg.regex.re(), l.name, &groups)) continue;
        std::string res;
        ExpandTemplate(cfg.regex.re(), cfg.replacement, groups, &res);
        lb.Set(res, l.value);
      }
      break;
    }
    case RelabelAction::kLabelDrop:
    case RelabelAction::kLabelKeep: {
      const bool drop = cfg.action == RelabelAction::kLabelDrop;
      for (const Label& l : lb.Snapshot()) {
        if (cfg.regex.Matches(l.name) == drop) lb.Del(l.name);
      }
      break;
    }
  }
  return true;
}

constexpr std::string_view kActionNames[] = {
    "replace",  "keep",      "drop",      "keepequal", "dropequal", "hashmod",
    "labelmap", "labeldrop", "labelkeep", "lowercase", "uppercase"};

}  // namespace

std::string_view RelabelActionName(RelabelAction a) {
  return kActionNames[static_cast<int>(a)];
}

absl::StatusOr<RelabelAction> ParseRelabelAction(std::string_view s) {
  const std::string lower = absl::AsciiStrToLower(std::string(s));
  for (size_t i = 0; i < std::size(kActionNames); ++i) {
    if (lower == kActionNames[i]) return static_cast<RelabelAction>(i);
  }
  return absl::InvalidArgumentError("unknown relabel action " + go::Quote(s));
}

RelabelRegex RelabelRegex::Default() {
  static const RelabelRegex* const kDefault = [] {
    auto* r = new RelabelRegex(*Compile("(.*)"));
    r->is_default_ = true;
    return r;
  }();
  return *kDefault;
}

absl::StatusOr<RelabelRegex> RelabelRegex::Compile(std::string_view source) {
  RelabelRegex r{Uninitialized{}};
  r.re_ = CompileAnchored(source);
  if (!r.re_->ok()) {
    return absl::InvalidArgumentError(
        fmt::format("error parsing regexp: {}: `{}`", GoRegexpErrorCode(*r.re_),
                    r.re_->error_arg()));
  }
  r.source_ = std::string(source);
  r.is_default_ = false;
  r.literals_ = LiteralsOf(source);
  return r;
}

bool RelabelRegex::Matches(std::string_view s) const {
  if (literals_) {
    for (const std::string& l : *literals_) {
      if (l == s) return true;
    }
    return false;
  }
  return RE2::FullMatch(re2::StringPiece(s.data(), s.size()), *re_);
}

absl::Status ValidateRelabelConfig(const RelabelConfig& c) {
  using A = RelabelAction;
  const A a = c.action;
  const std::string name(RelabelActionName(a));
  auto err = [](std::string s) { return absl::InvalidArgumentError(s); };
  auto bad_target = [&] {
    return err(fmt::format("{} is invalid 'target_label' for {} action",
                           go::Quote(c.target_label), name));
  };
  if (a == A::kHashMod && c.modulus == 0) {
    return err("relabel configuration for hashmod requires non-zero modulus");
  }
  const bool needs_target = a == A::kReplace || a == A::kHashMod ||
                            a == A::kLowercase || a == A::kUppercase ||
                            a == A::kKeepEqual || a == A::kDropEqual;
  if (needs_target && c.target_label.empty()) {
    return err(fmt::format(
        "relabel configuration for {} action requires 'target_label' value",
        name));
  }
  const bool templated = c.target_label.find('$') != std::string::npos;
  if (a == A::kReplace && !templated && !IsValidLabelName(c.target_label)) {
    return bad_target();
  }
  if (a == A::kReplace && templated && !IsValidTargetTemplate(c.target_label)) {
    return bad_target();
  }
  const bool case_or_equal = a == A::kLowercase || a == A::kUppercase ||
                             a == A::kKeepEqual || a == A::kDropEqual;
  if (case_or_equal && !IsValidLabelName(c.target_label)) return bad_target();
  if (case_or_equal && c.replacement != "$1") {
    return err(fmt::format("'replacement' can not be set for {} action", name));
  }
  if (a == A::kLabelMap && !IsValidTargetTemplate(c.replacement)) {
    return err(fmt::format("{} is invalid 'replacement' for {} action",
                           go::Quote(c.replacement), name));
  }
  if (a == A::kHashMod && !IsValidLabelName(c.target_label)) {
    return bad_target();
  }
  if ((a == A::kKeepEqual || a == A::kDropEqual) &&
      (!c.regex.is_default() || c.modulus != 0 || c.separator != ";" ||
       c.replacement != "$1")) {
    return err(fmt::format(
        "{} action requires only 'source_labels' and `target_label`, and no "
        "other fields",
        name));
  }
  if ((a == A::kLabelDrop || a == A::kLabelKeep) &&
      (c.source_labels_set || !c.target_label.empty() || c.modulus != 0 ||
       c.separator != ";" || c.replacement != "$1")) {
    return err(fmt::format(
        "{} action requires only 'regex', and no other fields", name));
  }
  return absl::OkStatus();
}

bool Process(const Labels& in, const std::vector<RelabelConfig>& cfgs,
             Labels* out) {
  Builder lb(in);
  for (const RelabelConfig& cfg : cfgs) {
    if (!RelabelOne(cfg, lb)) {
      *out = Labels();
      return false;
    }
  }
  *out = lb.changed() ? lb.Build() : in;
  return true;
}

namespace {

// Go's regexp extract(): a name after '$', braced or not; ok=false when
// malformed. num is -1 for a non-numeric (named) reference.
bool ExtractRef(std::string_view s, std::string_view* name, int* num,
                size_t* consumed) {
  if (s.empty()) return false;
  size_t i = 0;
  const bool brace = s[0] == '{';
  if (brace) i = 1;
  const size_t start = i;
  while (i < s.size()) {
    const unsigned char c = s[i];
    // Non-ASCII runes count as letters (Go: unicode.IsLetter/IsDigit).
    if (!(absl::ascii_isalnum(c) || c == '_' || c >= 0x80)) break;
    ++i;
  }
  if (i == start) return false;
  *name = s.substr(start, i - start);
  if (brace) {
    if (i >= s.size() || s[i] != '}') return false;
    ++i;
  }
  *num = 0;
  for (char c : *name) {
    if (c < '0' || c > '9' || *num >= 100000000) {
      *num = -1;
      break;
    }
    *num = *num * 10 + (c - '0');
  }
  if ((*name)[0] == '0' && name->size() > 1) *num = -1;
  *consumed = i;
  return true;
}

}  // namespace

void ExpandTemplate(const re2::RE2& re, std::string_view tmpl,
                    const std::vector<std::string_view>& groups,
                    std::string* dst) {
  while (!tmpl.empty()) {
    const size_t dollar = tmpl.find('$');
    if (dollar == std::string_view::npos) break;
    dst->append(tmpl.substr(0, dollar));
    tmpl.remove_prefix(dollar + 1);
    if (!tmpl.empty() && tmpl[0] == '$') {
      dst->push_back('$');
      tmpl.remove_prefix(1);
      continue;
    }
    std::string_view name;
    int num;
    size_t consumed;
    if (!ExtractRef(tmpl, &name, &num, &consumed)) {
      dst->push_back('$');  // malformed: the '$' is literal text
      continue;
    }
    tmpl.remove_prefix(consumed);
    if (num < 0) {
      const auto& names = re.NamedCapturingGroups();
      auto it = names.find(std::string(name));
      if (it != names.end()) num = it->second;
    }
    if (num >= 0 && static_cast<size_t>(num) < groups.size() &&
        groups[num].data() != nullptr) {
      dst->append(groups[num]);
    }
  }
  dst->append(tmpl);
}

}  // namespace vigil
