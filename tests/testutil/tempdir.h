// A temporary directory removed at scope exit.
#ifndef VIGIL_TESTS_TESTUTIL_TEMPDIR_H_
#define VIGIL_TESTS_TESTUTIL_TEMPDIR_H_

#include <cstdlib>
#include <filesystem>
#include <string>

namespace vigil::testutil {

class TempDir {
 public:
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "vigil-test-XXXXXX").string();
    char* p = mkdtemp(tmpl.data());
    path_ = p ? p : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace vigil::testutil

#endif  // VIGIL_TESTS_TESTUTIL_TEMPDIR_H_
