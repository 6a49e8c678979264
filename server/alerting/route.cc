// RouteTree: Alertmanager's dispatch.NewRoute / Route.Match / Key / ID.
#include "server/alerting/route.h"

#include <algorithm>
#include <utility>

namespace vigil::alerting {
namespace {

// NewRoute: start from the parent's options (the root from Alertmanager's
// DefaultRouteOpts) and override what this route sets.
std::unique_ptr<RouteNode> Build(const config::am::Route& cr,
                                 const RouteNode* parent) {
  auto node = std::make_unique<RouteNode>();
  RouteNode& n = *node;
  if (parent != nullptr) {
    n.receiver = parent->receiver;
    n.group_by = parent->group_by;
    n.group_by_all = parent->group_by_all;
    n.group_wait_ms = parent->group_wait_ms;
    n.group_interval_ms = parent->group_interval_ms;
    n.repeat_interval_ms = parent->repeat_interval_ms;
  } else {
    n.group_wait_ms = 30 * 1000;
    n.group_interval_ms = 5 * 60 * 1000;
    n.repeat_interval_ms = 4 * 60 * 60 * 1000;
  }
  n.parent = parent;
  if (!cr.receiver.empty()) n.receiver = cr.receiver;
  // Alertmanager keeps `...` apart from the label list: a list with real
  // labels replaces the parent's grouping; `...` alone switches to all.
  std::vector<std::string> labels;
  if (cr.group_by) {
    for (const std::string& l : *cr.group_by) {
      if (l != "...") labels.push_back(l);
    }
  }
  if (!labels.empty()) {
    std::sort(labels.begin(), labels.end());
    labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
    n.group_by = std::move(labels);
    n.group_by_all = false;
  } else if (cr.group_by_all) {
    n.group_by_all = true;
  }
  if (n.group_by_all) n.group_by.clear();
  if (cr.group_wait_ms) n.group_wait_ms = *cr.group_wait_ms;
  if (cr.group_interval_ms) n.group_interval_ms = *cr.group_interval_ms;
  if (cr.repeat_interval_ms) n.repeat_interval_ms = *cr.repeat_interval_ms;
  n.matchers = cr.matchers;
  // Time intervals are the route's own, never inherited (as in
  // Alertmanager 0.25).
  n.mute_time_intervals = cr.mute_time_intervals;
  n.active_time_intervals = cr.active_time_intervals;
  n.continue_ = cr.continue_;
  for (const config::am::Route& child : cr.routes) {
    n.routes.push_back(Build(child, node.get()));
  }
  return node;
}

bool MatchesAll(const std::vector<Matcher>& ms, const Labels& labels) {
  for (const Matcher& m : ms) {
    if (!m.Matches(labels.Get(m.name()))) return false;
  }
  return true;
}

void MatchInto(const RouteNode& r, const Labels& labels,
               std::vector<const RouteNode*>* out) {
  const size_t before = out->size();
  for (const auto& child : r.routes) {
    if (!MatchesAll(child->matchers, labels)) continue;
    MatchInto(*child, labels, out);
    if (!child->continue_) break;
  }
  if (out->size() == before) out->push_back(&r);
}

void WalkFrom(const RouteNode& r, int depth,
              const std::function<void(const RouteNode&, int)>& f) {
  f(r, depth);
  for (const auto& child : r.routes) WalkFrom(*child, depth + 1, f);
}

std::string MatchersString(const std::vector<Matcher>& ms) {
  std::string s = "{";
  for (size_t i = 0; i < ms.size(); ++i) {
    if (i > 0) s += ',';
    s += config::am::MatcherString(ms[i]);
  }
  s += '}';
  return s;
}

}  // namespace

std::string RouteNode::Key() const {
  if (parent == nullptr) return MatchersString(matchers);
  return parent->Key() + "/" + MatchersString(matchers);
}

std::string RouteNode::ID() const {
  std::string id = Key();
  if (parent == nullptr) return id;
  for (size_t i = 0; i < parent->routes.size(); ++i) {
    if (parent->routes[i].get() == this) {
      id += "/" + std::to_string(i);
      break;
    }
  }
  return id;
}

Labels RouteNode::GroupLabels(const Labels& labels) const {
  if (group_by_all) return labels;
  std::vector<Label> out;
  for (const Label& l : labels) {
    if (std::binary_search(group_by.begin(), group_by.end(), l.name)) {
      out.push_back(l);
    }
  }
  return Labels::FromSorted(std::move(out));
}

RouteTree::RouteTree(const config::am::Route& root)
    : root_(Build(root, nullptr)) {}

std::vector<const RouteNode*> RouteTree::Match(const Labels& labels) const {
  std::vector<const RouteNode*> out;
  // The root matches everything in a valid file; with matchers (only
  // possible for a hand-built tree) it still is the fallback.
  MatchInto(*root_, labels, &out);
  return out;
}

void RouteTree::Walk(
    const std::function<void(const RouteNode&, int depth)>& f) const {
  WalkFrom(*root_, 0, f);
}

}  // namespace vigil::alerting
