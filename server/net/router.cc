#include "server/net/router.h"

#include <algorithm>

#include "core/go/strconv.h"

namespace vigil::net {
namespace {

std::vector<std::string> SplitSegments(std::string_view path) {
  std::vector<std::string> out;
  size_t i = 0;
  if (!path.empty() && path[0] == '/') i = 1;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    out.emplace_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// Go's url.unescape in query mode: '+' is ' ', "%XX" a byte.
bool Unescape(std::string_view s, std::string* out, std::string* error) {
  out->clear();
  out->reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '+') {
      out->push_back(' ');
    } else if (c == '%') {
      int hi = i + 1 < s.size() ? go::HexDigitValue(s[i + 1]) : -1;
      int lo = i + 2 < s.size() ? go::HexDigitValue(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        std::string_view bad = s.substr(i, std::min<size_t>(3, s.size() - i));
        *error = "invalid URL escape \"" + std::string(bad) + "\"";
        return false;
      }
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out->push_back(c);
    }
  }
  return true;
}

}  // namespace

void Router::Add(std::string_view method, std::string_view pattern,
                 HttpHandler handler) {
  for (auto& r : routes_) {
    if (r.method == method && r.pattern == pattern) {
      r.handler = std::move(handler);
      return;
    }
  }
  Route r;
  r.method = std::string(method);
  r.pattern = std::string(pattern);
  r.segments = SplitSegments(pattern);
  for (const auto& s : r.segments) {
    if (!s.empty() && s[0] == ':') r.rank = std::max(r.rank, 1);
    if (!s.empty() && s[0] == '*') r.rank = 2;
  }
  r.handler = std::move(handler);
  // Keep the table ordered by rank, stable within a rank.
  auto at = std::upper_bound(
      routes_.begin(), routes_.end(), r.rank,
      [](int rank, const Route& other) { return rank < other.rank; });
  routes_.insert(at, std::move(r));
}

bool Router::MatchPath(const Route& r, std::string_view path,
                       std::vector<std::pair<std::string, std::string>>* out) {
  out->clear();
  if (path.empty() || path[0] != '/') return false;
  size_t pos = 1;  // start of the current segment in `path`
  for (size_t k = 0; k < r.segments.size(); ++k) {
    const std::string& seg = r.segments[k];
    if (!seg.empty() && seg[0] == '*') {
      // The rest of the path, from the '/' before this segment.
      out->emplace_back(seg.substr(1), std::string(path.substr(pos - 1)));
      return true;
    }
    if (pos > path.size()) return false;
    size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    std::string_view got = path.substr(pos, end - pos);
    bool last = k + 1 == r.segments.size();
    if (!seg.empty() && seg[0] == ':') {
      if (got.empty()) return false;
      out->emplace_back(seg.substr(1), std::string(got));
    } else if (got != seg) {
      return false;
    }
    if (last) return end == path.size();
    pos = end + 1;
  }
  return false;
}

Router::Match Router::Find(std::string_view method,
                           std::string_view path) const {
  Match m;
  std::vector<std::pair<std::string, std::string>> params;
  for (const auto& r : routes_) {
    if (!MatchPath(r, path, &params)) continue;
    if (r.method == method && m.outcome != Outcome::kFound) {
      m.outcome = Outcome::kFound;
      m.handler = &r.handler;
      m.pattern = r.pattern;
      m.path_params = params;
    }
    if (std::find(m.allowed.begin(), m.allowed.end(), r.method) ==
        m.allowed.end()) {
      m.allowed.push_back(r.method);
    }
  }
  if (m.outcome != Outcome::kFound && !m.allowed.empty()) {
    m.outcome = Outcome::kMethodNotAllowed;
  }
  if (!m.allowed.empty() && std::find(m.allowed.begin(), m.allowed.end(),
                                      "OPTIONS") == m.allowed.end()) {
    m.allowed.push_back("OPTIONS");
  }
  return m;
}

std::string ParseQuery(std::string_view text,
                       std::vector<std::pair<std::string, std::string>>* out) {
  std::string first_error;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find('&', i);
    if (j == std::string_view::npos) j = text.size();
    std::string_view pair = text.substr(i, j - i);
    i = j + 1;
    if (pair.empty()) continue;
    if (pair.find(';') != std::string_view::npos) {
      if (first_error.empty()) {
        first_error = "invalid semicolon separator in query";
      }
      continue;
    }
    size_t eq = pair.find('=');
    std::string_view k = pair.substr(0, eq);
    std::string_view v =
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    std::string key, value, error;
    if (!Unescape(k, &key, &error) || !Unescape(v, &value, &error)) {
      if (first_error.empty()) first_error = error;
      continue;
    }
    out->emplace_back(std::move(key), std::move(value));
  }
  return first_error;
}

}  // namespace vigil::net
