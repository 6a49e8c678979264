// -----------------------------------------------------------------------------
// File: go/path.h
// -----------------------------------------------------------------------------
//
// Go's path package, for the places where Prometheus resolves '/'-separated
// paths (rule files relative to a config, test files relative to a test).
#ifndef VIGIL_CORE_GO_PATH_H_
#define VIGIL_CORE_GO_PATH_H_

#include <string>
#include <string_view>

namespace vigil::go {

// path.Clean: "a/./b/../c" -> "a/c", "" -> ".", leading ".." kept for
// relative paths, dropped at the root, trailing slashes removed.
std::string CleanPath(std::string_view path);

}  // namespace vigil::go

#endif  // VIGIL_CORE_GO_PATH_H_
