// The notification log: the dedup decision (Alertmanager's
// DedupStage.needsUpdate), expiry, and persistence.
#include <memory>

#include "catch2/catch.hpp"
#include "server/alerting/nflog.h"
#include "server/alerting/state.h"
#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::alerting {
namespace {

constexpr Timestamp kNflogNow = 1'700'000'000'000;
constexpr int64_t kRepeat = 4 * 3600 * 1000;

NflogEntry Entry(std::vector<uint64_t> firing, std::vector<uint64_t> resolved,
                 Timestamp t) {
  NflogEntry e;
  e.firing = std::move(firing);
  e.resolved = std::move(resolved);
  e.timestamp = t;
  return e;
}

TEST_CASE("nflog: dedup decisions", "[alerting][nflog]") {
  // Never notified.
  CHECK(NeedsUpdate(nullptr, {1}, {}, false, kRepeat, kNflogNow));
  CHECK_FALSE(NeedsUpdate(nullptr, {}, {1}, true, kRepeat, kNflogNow));
  NflogEntry e = Entry({1, 2}, {}, kNflogNow);
  // Unchanged: not before repeat_interval, then yes.
  CHECK_FALSE(NeedsUpdate(&e, {1, 2}, {}, true, kRepeat, kNflogNow + 1000));
  CHECK_FALSE(NeedsUpdate(&e, {1, 2}, {}, true, kRepeat, kNflogNow + kRepeat));
  CHECK(NeedsUpdate(&e, {1, 2}, {}, true, kRepeat, kNflogNow + kRepeat + 1));
  // A new firing alert.
  CHECK(NeedsUpdate(&e, {1, 2, 3}, {}, false, kRepeat, kNflogNow + 1000));
  // One resolved: only with send_resolved.
  CHECK(NeedsUpdate(&e, {1}, {2}, true, kRepeat, kNflogNow + 1000));
  CHECK_FALSE(NeedsUpdate(&e, {1}, {2}, false, kRepeat, kNflogNow + 1000));
  // All resolved: always (the log must forget the firing ones).
  CHECK(NeedsUpdate(&e, {}, {1, 2}, false, kRepeat, kNflogNow + 1000));
  // Resolved already reported.
  NflogEntry r = Entry({1}, {2}, kNflogNow);
  CHECK_FALSE(NeedsUpdate(&r, {1}, {2}, true, kRepeat, kNflogNow + 1000));
  // Fired and resolved between two notifications that had nothing firing.
  NflogEntry empty = Entry({}, {1}, kNflogNow);
  CHECK_FALSE(NeedsUpdate(&empty, {}, {1, 5}, true, kRepeat, kNflogNow + 1000));
}

TEST_CASE("nflog: log, query, expiry", "[alerting][nflog]") {
  auto st = MemoryStateStore();
  auto log = Nflog::Open(st.get(), nullptr, 120LL * 3600 * 1000);
  REQUIRE(log.ok());
  NflogReceiver r{"team", "webhook", 0};
  NflogReceiver r1{"team", "webhook", 1};
  CHECK(!(*log)->Query("{}:{}", r));
  REQUIRE((*log)->Log(r, "{}:{}", {3, 1}, {2}, kNflogNow, 2 * kRepeat).ok());
  auto e = (*log)->Query("{}:{}", r);
  REQUIRE(e);
  CHECK(e->firing == std::vector<uint64_t>{1, 3});
  CHECK(e->resolved == std::vector<uint64_t>{2});
  CHECK(e->timestamp == kNflogNow);
  CHECK(e->expires_at == kNflogNow + 2 * kRepeat);
  CHECK(!(*log)->Query("{}:{}", r1));  // another integration index
  CHECK(!(*log)->Query("{}:{a=\"b\"}", r));
  CHECK((*log)->GC(kNflogNow + 2 * kRepeat - 1) == 0);
  CHECK((*log)->GC(kNflogNow + 2 * kRepeat) == 1);
  CHECK(!(*log)->Query("{}:{}", r));
  // A repeat interval longer than the retention expires with the retention.
  REQUIRE((*log)->Log(r, "g", {1}, {}, kNflogNow, 1000LL * 3600 * 1000).ok());
  CHECK((*log)->Query("g", r)->expires_at == kNflogNow + 120LL * 3600 * 1000);
}

TEST_CASE("nflog: records decode or are refused clearly", "[alerting][nflog]") {
  NflogEntry e = Entry({7, 9}, {8}, kNflogNow);
  e.group_key = "{}/{a=\"b\"}:{alertname=\"X\"}";
  e.receiver = {"r", "slack", 2};
  e.expires_at = kNflogNow + 5;
  auto back = DecodeNflogEntry(EncodeNflogEntry(e));
  REQUIRE(back.ok());
  CHECK(back->group_key == e.group_key);
  CHECK(back->receiver.integration == "slack");
  CHECK(back->receiver.index == 2);
  CHECK(back->firing == e.firing);
  CHECK(back->resolved == e.resolved);
  CHECK(back->expires_at == kNflogNow + 5);
  CHECK(DecodeNflogEntry("[]").status().message() ==
        "nflog record is not a JSON object");
  CHECK(DecodeNflogEntry(R"({"groupKey":"g","receiver":"r","integration":"w",)"
                         R"("index":0,"timestamp":1,"expiresAt":2,)"
                         R"("firing":["x"],"resolved":[]})")
            .status()
            .message() ==
        "nflog record: \"firing\" missing or of the wrong type");
}

TEST_CASE("nflog: persists across reopening a real data directory",
          "[alerting][nflog]") {
  testutil::TempDir dir;
  NflogReceiver r{"team", "webhook", 0};
  {
    auto db = storage::DB::Open({}, dir.path());
    REQUIRE(db.ok());
    auto st = StorageStateStore(db->get());
    auto log = Nflog::Open(st.get(), nullptr, 120LL * 3600 * 1000);
    REQUIRE(log.ok());
    REQUIRE((*log)->Log(r, "gk", {1, 2}, {}, kNflogNow, 2 * kRepeat).ok());
  }
  auto db = storage::DB::Open({}, dir.path());
  REQUIRE(db.ok());
  auto st = StorageStateStore(db->get());
  auto log = Nflog::Open(st.get(), nullptr, 120LL * 3600 * 1000);
  REQUIRE(log.ok());
  auto e = (*log)->Query("gk", r);
  REQUIRE(e);
  // The same group is not due again before its repeat interval.
  CHECK_FALSE(NeedsUpdate(&*e, {1, 2}, {}, true, kRepeat, kNflogNow + 60'000));
  CHECK(NeedsUpdate(&*e, {1, 2}, {}, true, kRepeat, kNflogNow + kRepeat + 1));
}

}  // namespace
}  // namespace vigil::alerting
