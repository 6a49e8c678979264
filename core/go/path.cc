#include "core/go/path.h"

#include <vector>

namespace vigil::go {

std::string CleanPath(std::string_view path) {
  if (path.empty()) return ".";
  const bool rooted = path[0] == '/';
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view part = path.substr(i, j - i);
    i = j + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
        continue;
      }
      if (rooted) continue;
    }
    parts.push_back(part);
  }
  std::string out = rooted ? "/" : "";
  for (size_t k = 0; k < parts.size(); ++k) {
    if (k) out.push_back('/');
    out.append(parts[k]);
  }
  return out.empty() ? "." : out;
}

}  // namespace vigil::go
