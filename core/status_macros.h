// -----------------------------------------------------------------------------
// File: status_macros.h
// -----------------------------------------------------------------------------
//
// VIGIL_RETURN_IF_ERROR / VIGIL_ASSIGN_OR_RETURN: early-return helpers for
// absl::Status (the installed Abseil predates ABSL_RETURN_IF_ERROR), Annotate()
// to prefix context ("commit: write to WAL: disk full") and VIGIL_CHECK for
// broken invariants (prints "BUG: ..." and aborts).
#ifndef VIGIL_CORE_STATUS_MACROS_H_
#define VIGIL_CORE_STATUS_MACROS_H_

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"

namespace vigil {

// Returns `s` with "context: " prepended to its message; OK stays OK.
inline absl::Status Annotate(const absl::Status& s, std::string_view context) {
  if (s.ok()) return s;
  return absl::Status(s.code(),
                      fmt::format("{}: {}", context, std::string(s.message())));
}

namespace internal_status {
inline const absl::Status& AsStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& AsStatus(const absl::StatusOr<T>& s) {
  return s.status();
}
}  // namespace internal_status

}  // namespace vigil

#define VIGIL_STATUS_CONCAT_INNER_(a, b) a##b
#define VIGIL_STATUS_CONCAT_(a, b) VIGIL_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (a Status or StatusOr) and returns its status if not OK.
#define VIGIL_RETURN_IF_ERROR(expr)                                            \
  do {                                                                         \
    const auto& _vigil_st = (expr);                                            \
    if (!_vigil_st.ok()) return ::vigil::internal_status::AsStatus(_vigil_st); \
  } while (0)

// VIGIL_ASSIGN_OR_RETURN(auto x, Foo()); returns Foo()'s status on error.
#define VIGIL_ASSIGN_OR_RETURN(lhs, rexpr)                                  \
  VIGIL_ASSIGN_OR_RETURN_IMPL_(VIGIL_STATUS_CONCAT_(_vigil_sor_, __LINE__), \
                               lhs, rexpr)
#define VIGIL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                 \
  if (!tmp.ok()) return std::move(tmp).status();      \
  lhs = std::move(tmp).value()

// Aborts with "BUG: ..." when `cond` is false. For programmer errors only.
#define VIGIL_CHECK(cond)                                              \
  do {                                                                 \
    if (!(cond)) {                                                     \
      std::fprintf(stderr, "BUG: %s:%d: check failed: %s\n", __FILE__, \
                   __LINE__, #cond);                                   \
      std::abort();                                                    \
    }                                                                  \
  } while (0)

#endif  // VIGIL_CORE_STATUS_MACROS_H_
