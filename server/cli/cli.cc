#include "server/cli/cli.h"

#include <algorithm>

namespace vigil::cli {

Args::Args(const std::vector<std::string>& argv,
           const std::vector<std::string>& value_flags,
           const std::vector<std::string>& bool_flags) {
  auto known = [](const std::vector<std::string>& v, const std::string& n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  bool flags_done = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (flags_done || a.size() < 2 || a[0] != '-') {
      positional_.push_back(a);
      continue;
    }
    if (a == "--") {
      flags_done = true;
      continue;
    }
    std::string body = a.substr(a[1] == '-' ? 2 : 1);
    std::string name = body, value;
    bool has_value = false;
    if (auto eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    if (known(bool_flags, name)) {
      flags_.push_back({name, has_value ? value : "true"});
    } else if (known(value_flags, name)) {
      if (!has_value) {
        if (i + 1 >= argv.size()) {
          error_ = "flag --" + name + " needs a value";
          return;
        }
        value = argv[++i];
      }
      flags_.push_back({name, value});
    } else {
      error_ = "unknown flag: --" + name;
      return;
    }
  }
}

std::optional<std::string> Args::Get(std::string_view name) const {
  std::optional<std::string> out;
  for (const auto& [n, v] : flags_) {
    if (n == name) out = v;
  }
  return out;
}

std::vector<std::string> Args::GetAll(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [n, v] : flags_) {
    if (n == name) out.push_back(v);
  }
  return out;
}

bool Args::Has(std::string_view name) const { return Get(name).has_value(); }

}  // namespace vigil::cli
