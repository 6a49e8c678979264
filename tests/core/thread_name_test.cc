// core/thread_name.h: naming the calling thread.
#include "core/thread_name.h"

#include <catch2/catch.hpp>
#include <string>
#include <thread>

namespace vigil {
namespace {

TEST_CASE("SetCurrentThreadName names the calling thread, cut to 15 bytes",
          "[core][thread_name]") {
  std::string inside, cut;
  std::thread([&] {
    SetCurrentThreadName("vigil-test");
    inside = CurrentThreadName();
    SetCurrentThreadName("vigil-a-name-longer-than-fifteen");
    cut = CurrentThreadName();
  }).join();
  CHECK(inside == "vigil-test");
  CHECK(cut == "vigil-a-name-lo");
  // The thread's own name is untouched by another's.
  CHECK(CurrentThreadName() != "vigil-test");
}

}  // namespace
}  // namespace vigil
