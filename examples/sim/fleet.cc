#include "examples/sim/fleet.h"

#include <algorithm>

#include "examples/sim/render.h"

namespace vigil::sim {

namespace {

constexpr int64_t kCheckpointEvery = 1800;  // seconds
constexpr size_t kMaxCheckpoints = 48;      // a day

template <typename S, typename StepFn>
void Advance(S* st, int64_t t, std::map<int64_t, S>* record, StepFn step) {
  while (st->t < t) {
    step(st);
    if (record && st->t % kCheckpointEvery == 0) {
      (*record)[st->t] = *st;
      while (record->size() > kMaxCheckpoints) record->erase(record->begin());
    }
  }
}

template <typename S>
void Rewind(S* live, std::map<int64_t, S>* cps, int64_t t, const S& initial) {
  cps->erase(cps->upper_bound(t), cps->end());
  if (live->t <= t) return;
  *live = cps->empty() ? initial : cps->rbegin()->second;
}

}  // namespace

Fleet::Fleet(const Config& config, FaultSet* faults)
    : c_(config), faults_(faults), model_(config) {
  for (int h = 0; h < c_.hosts(); ++h) {
    hosts_.push_back(std::make_unique<Slot>());
    hosts_.back()->live = InitialHost(c_, h);
  }
  gateway_.live = InitialGateway(c_);
  snapshot_ = std::make_shared<std::vector<Fault>>(faults_->Snapshot());
}

std::shared_ptr<const std::vector<Fault>> Fleet::Faults() const {
  std::lock_guard<std::mutex> l(faults_mu_);
  return snapshot_;
}

void Fleet::FaultsChanged(int64_t t) {
  {
    std::lock_guard<std::mutex> l(faults_mu_);
    snapshot_ = std::make_shared<std::vector<Fault>>(faults_->Snapshot());
  }
  for (int h = 0; h < c_.hosts(); ++h) {
    Slot& s = *hosts_[size_t(h)];
    std::lock_guard<std::mutex> l(s.mu);
    Rewind(&s.live, &s.checkpoints, t, InitialHost(c_, h));
  }
  std::lock_guard<std::mutex> l(gateway_.mu);
  Rewind(&gateway_.live, &gateway_.checkpoints, t, InitialGateway(c_));
}

HostLoad Fleet::Load(int host, int64_t t) const {
  return model_.Host(host, t, *Faults());
}

HostState Fleet::HostAt(int h, int64_t t) {
  auto faults = Faults();
  auto step = [&](HostState* st) {
    StepHost(c_, h, model_.Host(h, st->t, *faults), st);
  };
  Slot& s = *hosts_[size_t(h)];
  std::lock_guard<std::mutex> l(s.mu);
  if (t >= s.live.t) {
    Advance(&s.live, t, &s.checkpoints, step);
    return s.live;
  }
  auto it = s.checkpoints.upper_bound(t);
  HostState st =
      it == s.checkpoints.begin() ? InitialHost(c_, h) : std::prev(it)->second;
  Advance<HostState>(&st, t, nullptr, step);
  return st;
}

GatewayState Fleet::GatewayAt(int64_t t) {
  auto faults = Faults();
  std::vector<HostLoad> loads(size_t(c_.hosts()));
  auto step = [&](GatewayState* st) {
    for (int h = 0; h < c_.hosts(); ++h) {
      loads[size_t(h)] = model_.Host(h, st->t, *faults);
    }
    StepGateway(c_, loads, model_.Gateway(st->t, *faults), st);
  };
  std::lock_guard<std::mutex> l(gateway_.mu);
  if (t >= gateway_.live.t) {
    Advance(&gateway_.live, t, &gateway_.checkpoints, step);
    return gateway_.live;
  }
  auto it = gateway_.checkpoints.upper_bound(t);
  GatewayState st = it == gateway_.checkpoints.begin() ? InitialGateway(c_)
                                                       : std::prev(it)->second;
  Advance<GatewayState>(&st, t, nullptr, step);
  return st;
}

std::string Fleet::Render(PageKind kind, int host, int64_t t) {
  t = std::max(t, c_.start);
  if (kind == PageKind::kGateway) {
    GatewayState s = GatewayAt(t);
    auto faults = Faults();
    std::vector<HostLoad> loads;
    for (int h = 0; h < c_.hosts(); ++h) {
      loads.push_back(model_.Host(h, t, *faults));
    }
    return RenderGateway(c_, loads, s);
  }
  HostState s = HostAt(host, t);
  HostLoad l = Load(host, t);
  HostPage p{c_, host, t, l, s};
  switch (kind) {
    case PageKind::kEngine:
      return RenderEngine(p);
    case PageKind::kDcgm:
      return RenderDcgm(p);
    case PageKind::kNode:
      return RenderNode(p);
    case PageKind::kGateway:
      break;
  }
  return "";
}

}  // namespace vigil::sim
