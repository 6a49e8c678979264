// DB::PutState / DeleteState / ScanState: the optional `state` family.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "storage/db.h"
#include "tests/storage/db_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::storage {
namespace {

using testutil::MustOpen;

std::map<std::string, std::string> ScanAll(DB* db, std::string_view prefix) {
  std::map<std::string, std::string> out;
  REQUIRE(db->ScanState(prefix, [&](std::string_view k, std::string_view v) {
              out[std::string(k)] = std::string(v);
            }).ok());
  return out;
}

TEST_CASE("state: put, scan by prefix, delete, survive reopen",
          "[storage][state]") {
  testutil::TempDir dir;
  {
    auto db = MustOpen(dir.path());
    CHECK(ScanAll(db.get(), "").empty());  // no family yet: nothing
    CHECK(db->DeleteState("absent").ok());
    REQUIRE(db->PutState("a/1", "one").ok());
    REQUIRE(db->PutState("a/2", std::string("t\0o", 3)).ok());
    REQUIRE(db->PutState("b/1", "other").ok());
    REQUIRE(db->PutState("a/1", "uno").ok());  // replaces
    auto a = ScanAll(db.get(), "a/");
    REQUIRE(a.size() == 2);
    CHECK(a["a/1"] == "uno");
    CHECK(a["a/2"] == std::string("t\0o", 3));
    REQUIRE(db->DeleteState("a/2").ok());
    CHECK(ScanAll(db.get(), "a/").size() == 1);
    CHECK(db->PutState("", "x").code() == absl::StatusCode::kInvalidArgument);
  }
  {
    auto db = MustOpen(dir.path());
    auto all = ScanAll(db.get(), "");
    CHECK(all ==
          std::map<std::string, std::string>{{"a/1", "uno"}, {"b/1", "other"}});
  }
  {  // read-only: readable, not writable
    Options o;
    o.read_only = true;
    auto db = MustOpen(dir.path(), o);
    CHECK(ScanAll(db.get(), "b/").size() == 1);
    CHECK(db->PutState("c", "d").code() ==
          absl::StatusCode::kFailedPrecondition);
  }
}

TEST_CASE("state: a directory without the family opens and gains it",
          "[storage][state]") {
  testutil::TempDir dir;
  {
    auto db = MustOpen(dir.path());
    auto app = db->NewAppender();
    REQUIRE(app->Append(0, {{"__name__", "up"}}, 1000, 1).ok());
    REQUIRE(app->Commit().ok());
  }
  {
    auto db = MustOpen(dir.path());
    CHECK(ScanAll(db.get(), "").empty());
    REQUIRE(db->PutState("k", "v").ok());
    auto all = ScanAll(db.get(), "");
    CHECK(all.size() == 1);
  }
  {  // the tombstones family and the state family together
    auto db = MustOpen(dir.path());
    REQUIRE(db->DeleteSeries(
                  std::vector<Matcher>{testutil::Eq("__name__", "up")}, 0, 2000)
                .ok());
  }
  {
    auto db = MustOpen(dir.path());
    CHECK(ScanAll(db.get(), "")["k"] == "v");
    REQUIRE(db->PutState("k2", "v2").ok());
  }
  auto db = MustOpen(dir.path());
  CHECK(ScanAll(db.get(), "k").size() == 2);
}

}  // namespace
}  // namespace vigil::storage
