// The silence store: creation, updates with Alertmanager's rules, expiry,
// matching, validation errors, GC, and persistence on a real data dir.
#include <memory>
#include <regex>
#include <string>

#include "catch2/catch.hpp"
#include "server/alerting/silences.h"
#include "server/alerting/state.h"
#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::alerting {
namespace {

constexpr Timestamp kNow = 1'700'000'000'000;
constexpr Timestamp kHour = 3'600'000;

Matcher M(MatchType t, std::string_view n, std::string_view v) {
  auto m = Matcher::Make(t, n, v);
  REQUIRE(m.ok());
  return *m;
}

Silence S(std::vector<Matcher> ms, Timestamp start, Timestamp end) {
  Silence s;
  s.matchers = std::move(ms);
  s.starts_at = start;
  s.ends_at = end;
  s.created_by = "alice";
  s.comment = "maintenance";
  return s;
}

std::unique_ptr<Silences> Open(StateStore* st) {
  auto s = Silences::Open(st, nullptr);
  REQUIRE(s.ok());
  return std::move(*s);
}

TEST_CASE("silences: create, states, matching", "[alerting][silences]") {
  auto st = MemoryStateStore();
  auto sil = Open(st.get());
  auto id = sil->Set(S({M(MatchType::kEqual, "alertname", "Down")},
                       kNow - kHour, kNow + kHour),
                     kNow);
  REQUIRE(id.ok());
  CHECK(std::regex_match(
      *id, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
                      "[0-9a-f]{12}")));
  auto got = sil->Get(*id);
  REQUIRE(got.ok());
  CHECK(got->starts_at == kNow);  // a start in the past becomes now
  CHECK(got->updated_at == kNow);
  CHECK(got->created_by == "alice");
  CHECK(got->StateAt(kNow) == SilenceState::kActive);
  CHECK(sil->Mutes({{"alertname", "Down"}, {"x", "y"}}, kNow) ==
        std::vector<std::string>{*id});
  CHECK(sil->Mutes({{"alertname", "Up"}}, kNow).empty());
  CHECK(sil->Mutes({{"alertname", "Down"}}, kNow + 2 * kHour).empty());

  // In the future: pending, mutes nothing until it starts.
  auto fut = sil->Set(S({M(MatchType::kRegexMatch, "job", "api|web")},
                        kNow + kHour, kNow + 3 * kHour),
                      kNow);
  REQUIRE(fut.ok());
  CHECK(sil->Get(*fut)->starts_at == kNow + kHour);
  CHECK(sil->Get(*fut)->StateAt(kNow) == SilenceState::kPending);
  CHECK(sil->Mutes({{"job", "api"}}, kNow).empty());
  CHECK(sil->Mutes({{"job", "api"}}, kNow + kHour) ==
        std::vector<std::string>{*fut});
  Silences::Counts c = sil->CountStates(kNow);
  CHECK(c.active == 1);
  CHECK(c.pending == 1);
  CHECK(c.expired == 0);
}

TEST_CASE("silences: update rules", "[alerting][silences]") {
  auto st = MemoryStateStore();
  auto sil = Open(st.get());
  const auto ms = std::vector<Matcher>{M(MatchType::kEqual, "a", "b")};
  auto id = sil->Set(S(ms, kNow, kNow + kHour), kNow);
  REQUIRE(id.ok());

  SECTION("active: new end and comment update in place") {
    Silence s = *sil->Get(*id);
    s.ends_at = kNow + 2 * kHour;
    s.comment = "longer";
    auto id2 = sil->Set(s, kNow + 1000);
    REQUIRE(id2.ok());
    CHECK(*id2 == *id);
    CHECK(sil->Get(*id)->ends_at == kNow + 2 * kHour);
    CHECK(sil->Get(*id)->comment == "longer");
    CHECK(sil->List().size() == 1);
  }
  SECTION("active: changed matchers expire it and create another") {
    Silence s = *sil->Get(*id);
    s.matchers = {M(MatchType::kEqual, "a", "c")};
    auto id2 = sil->Set(s, kNow + 1000);
    REQUIRE(id2.ok());
    CHECK(*id2 != *id);
    CHECK(sil->Get(*id)->StateAt(kNow + 1001) == SilenceState::kExpired);
    CHECK(sil->Get(*id)->ends_at == kNow + 1000);
    CHECK(sil->Get(*id2)->matchers[0].value() == "c");
    CHECK(sil->List().size() == 2);
  }
  SECTION("active: a changed start replaces it") {
    Silence s = *sil->Get(*id);
    s.starts_at = kNow + 5000;
    auto id2 = sil->Set(s, kNow + 1000);
    REQUIRE(id2.ok());
    CHECK(*id2 != *id);
    CHECK(sil->Get(*id2)->starts_at == kNow + 5000);
  }
  SECTION("pending: may move its start, but not into the past") {
    auto p = sil->Set(S(ms, kNow + kHour, kNow + 2 * kHour), kNow);
    REQUIRE(p.ok());
    Silence s = *sil->Get(*p);
    s.starts_at = kNow + 30 * 60 * 1000;
    CHECK(*sil->Set(s, kNow) == *p);
    s.starts_at = kNow - 1000;
    auto p2 = sil->Set(s, kNow);
    REQUIRE(p2.ok());
    CHECK(*p2 != *p);
    CHECK(sil->Get(*p)->StateAt(kNow + 1) == SilenceState::kExpired);
    CHECK(sil->Get(*p2)->starts_at == kNow);
  }
  SECTION("expired: an update creates a new silence") {
    REQUIRE(sil->Expire(*id, kNow + 1000).ok());
    Silence s = *sil->Get(*id);
    s.ends_at = kNow + 5 * kHour;
    auto id2 = sil->Set(s, kNow + 2000);
    REQUIRE(id2.ok());
    CHECK(*id2 != *id);
  }
  SECTION("unknown id") {
    Silence s = S(ms, kNow, kNow + kHour);
    s.id = "no-such-id";
    auto r = sil->Set(s, kNow);
    CHECK(r.status().code() == absl::StatusCode::kNotFound);
    CHECK(r.status().message() == "silence not found");
  }
}

TEST_CASE("silences: expire", "[alerting][silences]") {
  auto st = MemoryStateStore();
  auto sil = Open(st.get());
  const auto ms = std::vector<Matcher>{M(MatchType::kEqual, "a", "b")};
  auto active = *sil->Set(S(ms, kNow, kNow + kHour), kNow);
  auto pending = *sil->Set(S(ms, kNow + kHour, kNow + 2 * kHour), kNow);
  REQUIRE(sil->Expire(active, kNow + 10).ok());
  CHECK(sil->Get(active)->ends_at == kNow + 10);
  CHECK(sil->Mutes({{"a", "b"}}, kNow + 11).empty());
  REQUIRE(sil->Expire(pending, kNow + 20).ok());
  CHECK(sil->Get(pending)->starts_at == kNow + 20);
  CHECK(sil->Get(pending)->ends_at == kNow + 20);
  CHECK(sil->Expire(active, kNow + 30).ok());  // idempotent
  CHECK(sil->Expire("nope", kNow).code() == absl::StatusCode::kNotFound);
  CHECK(sil->CountStates(kNow + 30).expired == 2);

  // GC after the retention (120h by default) past the end.
  CHECK(sil->GC(kNow + 100 * kHour) == 0);
  CHECK(sil->GC(kNow + 121 * kHour) == 2);
  CHECK(sil->List().empty());
  auto again = Open(st.get());  // gone from the store too
  CHECK(again->List().empty());
}

TEST_CASE("silences: validation errors read as Alertmanager's",
          "[alerting][silences]") {
  auto st = MemoryStateStore();
  auto sil = Open(st.get());
  auto err = [&](Silence s) {
    auto r = sil->Set(std::move(s), kNow);
    REQUIRE(!r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(r.status().message());
  };
  CHECK(err(S({}, kNow, kNow + kHour)) ==
        "silence invalid: at least one matcher required");
  CHECK(err(S({M(MatchType::kRegexMatch, "a", ".*"),
               M(MatchType::kEqual, "b", "")},
              kNow, kNow + kHour)) ==
        "silence invalid: at least one matcher must not match the empty "
        "string");
  CHECK(err(S({M(MatchType::kEqual, "a", "b")}, kNow + kHour, kNow)) ==
        "silence invalid: end time must not be before start time");
  CHECK(err(S({M(MatchType::kEqual, "a", "b")}, kNow, 0)) ==
        "silence invalid: invalid zero end timestamp");
  CHECK(err(S({M(MatchType::kEqual, "a", "b"),
               M(MatchType::kEqual, "bad-name", "x")},
              kNow, kNow + kHour)) ==
        "silence invalid: invalid label matcher 1: invalid label name "
        "\"bad-name\"");
  CHECK(sil->List().empty());
}

TEST_CASE("silences: records decode or are refused clearly",
          "[alerting][silences]") {
  Silence s = S({M(MatchType::kNotEqual, "a", "q\"uote"),
                 M(MatchType::kRegexNoMatch, "b", "x.*")},
                kNow, kNow + kHour);
  s.id = "id-1";
  s.updated_at = kNow;
  auto back = DecodeSilence(EncodeSilence(s));
  REQUIRE(back.ok());
  CHECK(back->id == "id-1");
  REQUIRE(back->matchers.size() == 2);
  CHECK(back->matchers[0].type() == MatchType::kNotEqual);
  CHECK(back->matchers[0].value() == "q\"uote");
  CHECK(back->matchers[1].type() == MatchType::kRegexNoMatch);
  CHECK(back->ends_at == kNow + kHour);
  CHECK(back->comment == "maintenance");

  CHECK(DecodeSilence("{").status().message() ==
        "silence record is not a JSON object");
  CHECK(DecodeSilence(R"({"id":"x"})").status().message() ==
        "silence record: \"createdBy\" missing or not a string");
  CHECK(
      DecodeSilence(
          R"({"id":"x","createdBy":"","comment":"","startsAt":1,"endsAt":2,)"
          R"("updatedAt":1,"matchers":[{"type":"~~","name":"a","value":"b"}]})")
          .status()
          .message() == "unknown matcher type ~~");

  // An undecodable record is skipped on open; the others load.
  auto st = MemoryStateStore();
  REQUIRE(st->Put("silence/broken", "not json").ok());
  REQUIRE(st->Put("silence/id-1", EncodeSilence(s)).ok());
  auto sil = Open(st.get());
  CHECK(sil->List().size() == 1);
}

TEST_CASE("silences: persist across reopening a real data directory",
          "[alerting][silences]") {
  testutil::TempDir dir;
  std::string active, pending, expired;
  {
    auto db = storage::DB::Open({}, dir.path());
    REQUIRE(db.ok());
    auto st = StorageStateStore(db->get());
    auto sil = Open(st.get());
    const auto ms = std::vector<Matcher>{M(MatchType::kEqual, "a", "b")};
    active = *sil->Set(S(ms, kNow, kNow + kHour), kNow);
    pending = *sil->Set(S(ms, kNow + kHour, kNow + 2 * kHour), kNow);
    expired = *sil->Set(S(ms, kNow, kNow + kHour), kNow);
    REQUIRE(sil->Expire(expired, kNow + 5).ok());
  }
  auto db = storage::DB::Open({}, dir.path());
  REQUIRE(db.ok());
  auto st = StorageStateStore(db->get());
  auto sil = Open(st.get());
  REQUIRE(sil->List().size() == 3);
  CHECK(sil->Get(active)->StateAt(kNow + 10) == SilenceState::kActive);
  CHECK(sil->Get(pending)->StateAt(kNow + 10) == SilenceState::kPending);
  CHECK(sil->Get(expired)->StateAt(kNow + 10) == SilenceState::kExpired);
  CHECK(sil->Get(active)->comment == "maintenance");
  CHECK(sil->Mutes({{"a", "b"}}, kNow + 10) ==
        std::vector<std::string>{active});
}

}  // namespace
}  // namespace vigil::alerting
