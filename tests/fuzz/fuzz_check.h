// -----------------------------------------------------------------------------
// File: tests/fuzz/fuzz_check.h
// -----------------------------------------------------------------------------
//
// What the libFuzzer targets of tests/fuzz/ share: FUZZ_CHECK, an assertion
// that survives NDEBUG (the fuzz build is RelWithDebInfo) and prints what
// broke before aborting, so that libFuzzer records the input as a crash.
#ifndef VIGIL_TESTS_FUZZ_FUZZ_CHECK_H_
#define VIGIL_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace vigil::fuzz {

[[noreturn]] inline void CheckFailed(const char* file, int line,
                                     const char* cond, std::string_view what) {
  std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %.*s\n", file, line, cond,
               static_cast<int>(what.size()), what.data());
  std::abort();
}

}  // namespace vigil::fuzz

// Aborts with `what` (anything convertible to std::string_view) when `cond`
// is false.
#define FUZZ_CHECK(cond, what)                                       \
  do {                                                               \
    if (!(cond))                                                     \
      ::vigil::fuzz::CheckFailed(__FILE__, __LINE__, #cond, (what)); \
  } while (0)

#endif  // VIGIL_TESTS_FUZZ_FUZZ_CHECK_H_
