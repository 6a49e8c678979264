// Whether this test binary (and so the vigil it starts, built alongside) is
// built with a sanitizer that brings its own allocator: ASan, TSAN, MSan.
// Memory figures then measure the sanitizer's shadow and quarantine rather
// than Vigil's heap, and everything runs several times slower, so tests
// that measure memory or repeat a drill many times scale themselves down.
#ifndef VIGIL_TESTS_TESTUTIL_SANITIZERS_H_
#define VIGIL_TESTS_TESTUTIL_SANITIZERS_H_

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define VIGIL_TEST_OWN_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define VIGIL_TEST_OWN_MALLOC 1
#endif
#endif

namespace vigil::testutil {

#ifdef VIGIL_TEST_OWN_MALLOC
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace vigil::testutil

#endif  // VIGIL_TESTS_TESTUTIL_SANITIZERS_H_
