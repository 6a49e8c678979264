#include "examples/sim/faults.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "core/go/json.h"
#include "core/time.h"
#include "fmt/format.h"

namespace vigil::sim {

namespace {

constexpr const char* kKindNames[kNumFaultKinds] = {
    "traffic-surge", "kv-saturation", "queue-buildup", "long-prompts",
    "gpu-degrading", "gpu-overheat",  "xid",           "ecc-dbe",
    "engine-hang",   "target-down",   "gateway-5xx",   "spec-decode-low",
    "tenant-surge"};

std::string KindList() {
  std::string s;
  for (const char* k : kKindNames) {
    if (!s.empty()) s += ", ";
    s += k;
  }
  return s;
}

absl::Status Bad(const std::string& field, const std::string& why) {
  return absl::InvalidArgumentError(field + ": " + why);
}

// Which fields each kind reads, besides kind/at/in/duration.
std::set<std::string> FieldsOf(FaultKind k) {
  switch (k) {
    case FaultKind::kTrafficSurge:
    case FaultKind::kLongPrompts:
      return {"host", "factor"};
    case FaultKind::kKvSaturation:
    case FaultKind::kEngineHang:
      return {"host"};
    case FaultKind::kQueueBuildup:
      return {"host", "rate"};
    case FaultKind::kGpuDegrading:
      return {"host", "gpu"};
    case FaultKind::kGpuOverheat:
      return {"host", "gpu", "temp"};
    case FaultKind::kXid:
      return {"host", "gpu", "code"};
    case FaultKind::kEccDbe:
      return {"host", "gpu", "count"};
    case FaultKind::kTargetDown:
      return {"host", "page", "mode"};
    case FaultKind::kGateway5xx:
      return {"fraction"};
    case FaultKind::kSpecDecodeLow:
      return {"host", "rate"};
    case FaultKind::kTenantSurge:
      return {"tenant", "factor"};
  }
  return {};
}

// Kinds that need a host (the others default to the whole fleet).
bool NeedsHost(FaultKind k) {
  switch (k) {
    case FaultKind::kKvSaturation:
    case FaultKind::kQueueBuildup:
    case FaultKind::kGpuDegrading:
    case FaultKind::kGpuOverheat:
    case FaultKind::kXid:
    case FaultKind::kEccDbe:
    case FaultKind::kEngineHang:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<double> Number(const YAML::Node& n, const std::string& field,
                              double lo, double hi) {
  double v = 0;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    return Bad(field, fmt::format("want a number; have {:?}",
                                  n.IsScalar() ? n.Scalar() : "a collection"));
  }
  if (!(v >= lo && v <= hi)) {
    return Bad(field, fmt::format("{} out of range [{}, {}]", v, lo, hi));
  }
  return v;
}

absl::StatusOr<int64_t> Seconds(const YAML::Node& n, const std::string& field) {
  if (!n.IsScalar()) return Bad(field, "want a duration such as 10m");
  auto ms = ParseDuration(n.Scalar());
  if (!ms.ok()) return Bad(field, std::string(ms.status().message()));
  return *ms / 1000;
}

absl::StatusOr<Fault> FromNode(const YAML::Node& n, const Config& c,
                               int64_t now, bool allow_in) {
  if (!n.IsMap()) return Bad("fault", "want a mapping (JSON object)");
  Fault f;
  if (!n["kind"]) {
    return Bad("kind", "missing (want one of " + KindList() + ")");
  }
  std::string kind = n["kind"].IsScalar() ? n["kind"].Scalar() : "";
  auto it = std::find(std::begin(kKindNames), std::end(kKindNames), kind);
  if (it == std::end(kKindNames)) {
    return Bad("kind", fmt::format("unknown fault kind {:?} (want one of {})",
                                   kind, KindList()));
  }
  f.kind = FaultKind(it - std::begin(kKindNames));
  std::set<std::string> allowed = FieldsOf(f.kind);
  allowed.insert({"kind", "at", "duration"});
  if (allow_in) allowed.insert("in");
  for (const auto& kv : n) {
    std::string key = kv.first.as<std::string>();
    if (!allowed.count(key)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return Bad(key, fmt::format("unknown field for kind {} (allowed: {})",
                                  kind, list));
    }
  }
  // Defaults per kind.
  f.factor = f.kind == FaultKind::kTrafficSurge  ? 3
             : f.kind == FaultKind::kLongPrompts ? 4
                                                 : 5;
  f.fraction = 0.05;
  f.rate = f.kind == FaultKind::kSpecDecodeLow ? 0.15 : 2;
  f.temp = 94;
  f.code = 79;
  f.count = 1;
  f.tenant = "team-a";
  absl::StatusOr<double> v;
  if (n["host"]) {
    if (!(v = Number(n["host"], "host", 0, 1e9)).ok()) return v.status();
    if (*v != double(int(*v)) || int(*v) >= c.hosts()) {
      return Bad("host",
                 fmt::format("{} out of range (the fleet has {} "
                             "hosts, 0..{})",
                             n["host"].Scalar(), c.hosts(), c.hosts() - 1));
    }
    f.host = int(*v);
  } else if (NeedsHost(f.kind)) {
    return Bad("host", "missing (kind " + kind + " targets one host)");
  }
  if (n["gpu"]) {
    if (!(v = Number(n["gpu"], "gpu", 0, 1e9)).ok()) return v.status();
    if (*v != double(int(*v)) || int(*v) >= c.gpus) {
      return Bad("gpu", fmt::format("{} out of range (hosts have {} GPUs, "
                                    "0..{})",
                                    n["gpu"].Scalar(), c.gpus, c.gpus - 1));
    }
    f.gpu = int(*v);
  } else if (f.kind == FaultKind::kXid || f.kind == FaultKind::kEccDbe ||
             f.kind == FaultKind::kGpuDegrading ||
             f.kind == FaultKind::kGpuOverheat) {
    f.gpu = 0;
  }
  if (n["factor"]) {
    if (!(v = Number(n["factor"], "factor", 0, 1000)).ok()) return v.status();
    f.factor = *v;
  }
  if (n["fraction"]) {
    if (!(v = Number(n["fraction"], "fraction", 0, 1)).ok()) return v.status();
    f.fraction = *v;
  }
  if (n["rate"]) {
    double hi = f.kind == FaultKind::kSpecDecodeLow ? 1 : 1000;
    if (!(v = Number(n["rate"], "rate", 0, hi)).ok()) return v.status();
    f.rate = *v;
  }
  if (n["temp"]) {
    if (!(v = Number(n["temp"], "temp", 0, 130)).ok()) return v.status();
    f.temp = *v;
  }
  if (n["code"]) {
    if (!(v = Number(n["code"], "code", 1, 1000)).ok()) return v.status();
    f.code = int(*v);
  }
  if (n["count"]) {
    if (!(v = Number(n["count"], "count", 1, 1e6)).ok()) return v.status();
    f.count = int(*v);
  }
  if (n["tenant"]) {
    f.tenant = n["tenant"].IsScalar() ? n["tenant"].Scalar() : "";
    if (f.tenant != "team-a" && f.tenant != "team-b" && f.tenant != "team-c") {
      return Bad("tenant", fmt::format("unknown tenant {:?} (want team-a, "
                                       "team-b, team-c)",
                                       f.tenant));
    }
  }
  if (n["page"]) {
    std::string p = n["page"].IsScalar() ? n["page"].Scalar() : "";
    if (p == "engine") {
      f.page = PageKind::kEngine;
    } else if (p == "dcgm") {
      f.page = PageKind::kDcgm;
    } else if (p == "node") {
      f.page = PageKind::kNode;
    } else if (p == "gateway") {
      f.page = PageKind::kGateway;
    } else {
      return Bad("page", fmt::format("unknown page {:?} (want engine, dcgm, "
                                     "node, gateway)",
                                     p));
    }
  }
  if (f.kind == FaultKind::kTargetDown && f.page != PageKind::kGateway &&
      f.host < 0) {
    return Bad("host", "missing (page " + std::string(PageName(f.page)) +
                           " belongs to one host)");
  }
  if (n["mode"]) {
    std::string m = n["mode"].IsScalar() ? n["mode"].Scalar() : "";
    if (m != "refused" && m != "404") {
      return Bad("mode",
                 fmt::format("unknown mode {:?} (want refused or 404)", m));
    }
    f.refuse = m == "refused";
  }
  if ((f.kind == FaultKind::kEccDbe || f.kind == FaultKind::kGpuDegrading) &&
      !c.ecc) {
    return Bad("kind", kind +
                           " moves the DCGM_FI_DEV_ECC_* counters, which are "
                           "off: start vigil-sim with --ecc");
  }
  f.start = now;
  if (n["at"] && n["in"]) return Bad("at", "give at or in, not both");
  absl::StatusOr<int64_t> s;
  if (n["at"]) {
    if (!(s = Seconds(n["at"], "at")).ok()) return s.status();
    f.start = c.start + *s;
  } else if (n["in"]) {
    if (!(s = Seconds(n["in"], "in")).ok()) return s.status();
    f.start = now + *s;
  }
  if (n["duration"]) {
    if (!(s = Seconds(n["duration"], "duration")).ok()) return s.status();
    if (*s <= 0) return Bad("duration", "must be > 0");
    f.end = f.start + *s;
  }
  return f;
}

}  // namespace

const char* FaultKindName(FaultKind k) { return kKindNames[int(k)]; }

std::string FaultJson(const Fault& f, int64_t now) {
  std::string s =
      fmt::format(R"({{"id":{},"kind":"{}")", f.id, FaultKindName(f.kind));
  if (f.host >= 0) s += fmt::format(R"(,"host":{})", f.host);
  if (f.gpu >= 0) s += fmt::format(R"(,"gpu":{})", f.gpu);
  s += fmt::format(R"(,"start":{})", f.start);
  if (f.end != kForever) s += fmt::format(R"(,"end":{})", f.end);
  const char* state = now < f.start ? "pending"
                      : now < f.end ? "active"
                                    : "ended";
  s += fmt::format(R"(,"state":"{}")", state);
  switch (f.kind) {
    case FaultKind::kTrafficSurge:
    case FaultKind::kLongPrompts:
      s += fmt::format(R"(,"factor":{})", f.factor);
      break;
    case FaultKind::kTenantSurge:
      s += fmt::format(R"(,"tenant":"{}","factor":{})", f.tenant, f.factor);
      break;
    case FaultKind::kQueueBuildup:
    case FaultKind::kSpecDecodeLow:
      s += fmt::format(R"(,"rate":{})", f.rate);
      break;
    case FaultKind::kGpuOverheat:
      s += fmt::format(R"(,"temp":{})", f.temp);
      break;
    case FaultKind::kXid:
      s += fmt::format(R"(,"code":{})", f.code);
      break;
    case FaultKind::kEccDbe:
      s += fmt::format(R"(,"count":{})", f.count);
      break;
    case FaultKind::kTargetDown:
      s += fmt::format(R"(,"page":"{}","mode":"{}")", PageName(f.page),
                       f.refuse ? "refused" : "404");
      break;
    case FaultKind::kGateway5xx:
      s += fmt::format(R"(,"fraction":{})", f.fraction);
      break;
    default:
      break;
  }
  return s + "}";
}

absl::StatusOr<Fault> ParseFault(const std::string& text, const Config& c,
                                 int64_t now) {
  YAML::Node n;
  try {
    n = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Bad("body", fmt::format("not JSON: {}", e.what()));
  }
  try {
    return FromNode(n, c, now, /*allow_in=*/true);
  } catch (const YAML::Exception& e) {
    return Bad("body", e.what());
  }
}

absl::StatusOr<std::vector<Fault>> LoadScenario(const std::string& path,
                                                const Config& c) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", path, e.what()));
  }
  if (!root.IsMap() || !root["faults"] || !root["faults"].IsSequence()) {
    return absl::InvalidArgumentError(path +
                                      ": want a mapping with a `faults:` list");
  }
  std::vector<Fault> out;
  int i = 0;
  for (const auto& n : root["faults"]) {
    absl::StatusOr<Fault> f;
    try {
      f = FromNode(n, c, c.start, /*allow_in=*/false);
    } catch (const YAML::Exception& e) {
      f = Bad("fault", e.what());
    }
    if (!f.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: faults[{}] (line {}): {}", path, i,
                      n.Mark().line + 1, std::string(f.status().message())));
    }
    out.push_back(*f);
    ++i;
  }
  return out;
}

int FaultSet::Add(Fault f) {
  std::lock_guard<std::mutex> l(mu_);
  f.id = next_id_++;
  faults_.push_back(f);
  ++version_;
  return f.id;
}

bool FaultSet::End(int id, int64_t now) {
  std::lock_guard<std::mutex> l(mu_);
  for (size_t i = 0; i < faults_.size(); ++i) {
    if (faults_[i].id != id) continue;
    if (faults_[i].start >= now) {
      faults_.erase(faults_.begin() + long(i));
    } else {
      faults_[i].end = std::min(faults_[i].end, now);
    }
    ++version_;
    return true;
  }
  return false;
}

void FaultSet::EndAll(int64_t now) {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<Fault> kept;
  for (auto& f : faults_) {
    if (f.start >= now) continue;
    f.end = std::min(f.end, now);
    kept.push_back(f);
  }
  faults_ = std::move(kept);
  ++version_;
}

std::vector<Fault> FaultSet::Snapshot() const {
  std::lock_guard<std::mutex> l(mu_);
  return faults_;
}

uint64_t FaultSet::version() const {
  std::lock_guard<std::mutex> l(mu_);
  return version_;
}

}  // namespace vigil::sim
