#include "server/alerting/receivers/email_mime.h"

#include "fmt/format.h"

namespace vigil::alerting::receivers {
namespace {

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

absl::StatusOr<MailAddress> ParseOne(std::string_view part) {
  part = Trim(part);
  if (part.empty()) return absl::InvalidArgumentError("mail: no address");
  MailAddress a;
  size_t lt = part.rfind('<');
  std::string_view spec = part;
  if (lt != std::string_view::npos) {
    size_t gt = part.find('>', lt);
    if (gt == std::string_view::npos || !Trim(part.substr(gt + 1)).empty()) {
      return absl::InvalidArgumentError("mail: unclosed angle-addr");
    }
    spec = part.substr(lt + 1, gt - lt - 1);
    std::string_view name = Trim(part.substr(0, lt));
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') {
      name = name.substr(1, name.size() - 2);
    }
    a.name = std::string(name);
  }
  spec = Trim(spec);
  size_t at = spec.rfind('@');
  if (at == std::string_view::npos) {
    return absl::InvalidArgumentError("mail: missing @ in addr-spec");
  }
  if (at == 0) return absl::InvalidArgumentError("mail: no address");
  if (at + 1 == spec.size()) {
    return absl::InvalidArgumentError("mail: no domain in addr-spec");
  }
  if (spec.find_first_of(" \t<>,\"") != std::string_view::npos) {
    return absl::InvalidArgumentError(
        fmt::format("mail: invalid address \"{}\"", spec));
  }
  a.address = std::string(spec);
  return a;
}

}  // namespace

absl::StatusOr<std::vector<MailAddress>> ParseAddressList(std::string_view s) {
  std::vector<MailAddress> out;
  bool quoted = false, angle = false;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    char c = i < s.size() ? s[i] : ',';
    if (c == '"' && !angle) quoted = !quoted;
    if (c == '<' && !quoted) angle = true;
    if (c == '>' && !quoted) angle = false;
    if (i == s.size() || (c == ',' && !quoted && !angle)) {
      absl::StatusOr<MailAddress> a = ParseOne(s.substr(start, i - start));
      if (!a.ok()) return a.status();
      out.push_back(*std::move(a));
      start = i + 1;
    }
  }
  return out;
}

std::string QEncodeHeader(std::string_view s) {
  bool needs = false;
  for (unsigned char b : s)
    needs = needs || ((b < ' ' || b > '~') && b != '\t');
  if (!needs) return std::string(s);
  constexpr std::string_view kPrefix = "=?utf-8?q?", kSuffix = "?=";
  constexpr size_t kMaxContent = 75 - kPrefix.size() - kSuffix.size();
  std::string out(kPrefix), word;
  size_t i = 0;
  while (i < s.size()) {
    // One rune at a time, so a word never splits a UTF-8 sequence.
    size_t w = 1;
    unsigned char lead = static_cast<unsigned char>(s[i]);
    if (lead >= 0xF0) {
      w = 4;
    } else if (lead >= 0xE0) {
      w = 3;
    } else if (lead >= 0xC0) {
      w = 2;
    }
    if (i + w > s.size()) w = s.size() - i;
    std::string enc;
    for (size_t j = i; j < i + w; ++j) {
      unsigned char b = static_cast<unsigned char>(s[j]);
      if (b == ' ') {
        enc.push_back('_');
      } else if (b > ' ' && b <= '~' && b != '=' && b != '?' && b != '_') {
        enc.push_back(static_cast<char>(b));
      } else {
        enc += fmt::format("={:02X}", b);
      }
    }
    if (!word.empty() && word.size() + enc.size() > kMaxContent) {
      out += word;
      out += kSuffix;
      out += " ";
      out += kPrefix;
      word.clear();
    }
    word += enc;
    i += w;
  }
  out += word;
  out += kSuffix;
  return out;
}

std::string QuotedPrintable(std::string_view s) {
  constexpr size_t kMaxLine = 76;
  std::string out;
  size_t line_len = 0;
  auto emit = [&](std::string_view tok) {
    if (line_len + tok.size() > kMaxLine - 1) {
      out += "=\r\n";
      line_len = 0;
    }
    out += tok;
    line_len += tok.size();
  };
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    if (b == '\r' || b == '\n') {
      if (b == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
      out += "\r\n";
      line_len = 0;
      continue;
    }
    bool at_eol = i + 1 == s.size() || s[i + 1] == '\r' || s[i + 1] == '\n';
    if ((b >= '!' && b <= '~' && b != '=') ||
        ((b == ' ' || b == '\t') && !at_eol)) {
      char c = static_cast<char>(b);
      emit(std::string_view(&c, 1));
    } else {
      emit(fmt::format("={:02X}", b));
    }
  }
  return out;
}

std::string BuildMessage(const MailParts& p) {
  std::string out;
  for (const auto& [name, value] : p.headers) {
    out += name + ": " + QEncodeHeader(value) + "\r\n";
  }
  out += "Content-Type: multipart/alternative; boundary=" + p.boundary +
         "\r\nMIME-Version: 1.0\r\n\r\n";
  bool first = true;
  for (const auto& [type, body] :
       {std::pair<std::string_view, const std::string*>{"text/plain", &p.text},
        {"text/html", &p.html}}) {
    if (body->empty()) continue;
    out += first ? "--" : "\r\n--";
    first = false;
    out += p.boundary;
    out += "\r\nContent-Transfer-Encoding: quoted-printable\r\nContent-Type: ";
    out += type;
    out += "; charset=UTF-8\r\n\r\n";
    out += QuotedPrintable(*body);
  }
  out += "\r\n--" + p.boundary + "--\r\n";
  return out;
}

}  // namespace vigil::alerting::receivers
