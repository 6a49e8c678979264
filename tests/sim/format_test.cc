// The exporters' number formats, checked against values printed in the
// real captures (fixtures/metrics/).
#include "examples/sim/format.h"

#include <catch2/catch.hpp>

namespace {

std::string Py(double v) {
  std::string s;
  vigil::sim::AppendPy(&s, v);
  return s;
}

}  // namespace

TEST_CASE("Python floats print as prometheus_client prints them", "[sim]") {
  // vllm-v1.txt, vllm-v0.txt, sglang.txt.
  CHECK(Py(0) == "0.0");
  CHECK(Py(1) == "1.0");
  CHECK(Py(162) == "162.0");
  CHECK(Py(123859) == "123859.0");
  CHECK(Py(0.28) == "0.28");
  CHECK(Py(10.950000000000001) == "10.950000000000001");
  CHECK(Py(0.05 * 1.5) == "0.07500000000000001");
  CHECK(Py(1048576) == "1.048576e+06");
  CHECK(Py(1.7740114612876017e+09) == "1.7740114612876017e+09");
  CHECK(Py(5.106151424e+09) == "5.106151424e+09");
  CHECK(Py(8.128902e+06) == "8.128902e+06");
  CHECK(Py(2.3518979474117756e+06) == "2.3518979474117756e+06");
  CHECK(Py(866964.5791549598) == "866964.5791549598");
  CHECK(Py(0.007507552643049313) == "0.007507552643049313");
  CHECK(Py(0.0001) == "0.0001");
  CHECK(Py(0.00001) == "1e-05");
  CHECK(Py(2560) == "2560.0");
  CHECK(Py(1.0 / 0.0) == "+Inf");
}

TEST_CASE("Go and dcgm-exporter numbers", "[sim]") {
  std::string s;
  vigil::sim::AppendGo(&s, 61440);
  CHECK(s == "61440");
  s.clear();
  vigil::sim::AppendGo(&s, 2.1164032e+08);
  CHECK(s == "2.1164032e+08");
  s.clear();
  vigil::sim::AppendGo(&s, 1e6);
  CHECK(s == "1e+06");
  s.clear();
  vigil::sim::AppendDcgmFloat(&s, 40.979);
  CHECK(s == "40.979000");
  s.clear();
  vigil::sim::AppendDcgmInt(&s, 455497156);
  CHECK(s == "455497156");
}
