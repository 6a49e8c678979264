// -----------------------------------------------------------------------------
// File: alerting/route.h
// -----------------------------------------------------------------------------
//
// Alertmanager's routing tree (dispatch.Route): built once from the file's
// `route`, with every option inherited down the tree, and matched against
// an alert's labels depth first, children in order, `continue` going on to
// the next sibling.
//
//   RouteTree tree(file.route);
//   for (const RouteNode* r : tree.Match(alert.labels)) ... r->receiver ...
#ifndef VIGIL_SERVER_ALERTING_ROUTE_H_
#define VIGIL_SERVER_ALERTING_ROUTE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/labels.h"
#include "core/matcher.h"
#include "server/config/alertmanager.h"

namespace vigil::alerting {

struct RouteNode {
  std::string receiver;
  std::vector<std::string> group_by;  // sorted; empty with group_by_all
  bool group_by_all = false;
  std::vector<Matcher> matchers;
  std::vector<std::string> mute_time_intervals;
  std::vector<std::string> active_time_intervals;
  bool continue_ = false;
  int64_t group_wait_ms = 0;
  int64_t group_interval_ms = 0;
  int64_t repeat_interval_ms = 0;
  const RouteNode* parent = nullptr;
  std::vector<std::unique_ptr<RouteNode>> routes;

  // Alertmanager's Route.Key(): the parent's key, "/", then this route's
  // matchers as "{a=\"b\",c=~\"d\"}" ("{}" for none). The root is "{}".
  std::string Key() const;
  // Alertmanager's Route.ID() (0.27): Key(), plus "/<index among the
  // parent's routes>" for every route but the root.
  std::string ID() const;
  // The labels of `labels` this route groups by (all with group_by_all).
  Labels GroupLabels(const Labels& labels) const;
};

class RouteTree {
 public:
  explicit RouteTree(const config::am::Route& root);

  // The routes an alert with `labels` ends at (never empty: the root when
  // nothing deeper matches).
  std::vector<const RouteNode*> Match(const Labels& labels) const;

  const RouteNode& root() const { return *root_; }
  // Every node, depth first, parents before children.
  void Walk(const std::function<void(const RouteNode&, int depth)>& f) const;

 private:
  std::unique_ptr<RouteNode> root_;
};

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_ROUTE_H_
