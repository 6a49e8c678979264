#include "server/web/api/v2/sort.h"

#include <algorithm>
#include <string>

namespace vigil::web::api::v2 {

bool LabelSetBefore(const Labels& a, const Labels& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  // Walk the union of the names in order; both are sorted by name.
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const Label& x = a[i];
    const Label& y = b[j];
    if (x.name != y.name) return x.name > y.name;  // a lacks y.name: a first
    if (x.value != y.value) return x.value < y.value;
    ++i;
    ++j;
  }
  return false;
}

void SortGroupAlerts(std::vector<alerting::AlertView>* alerts) {
  std::stable_sort(
      alerts->begin(), alerts->end(),
      [](const alerting::AlertView& x, const alerting::AlertView& y) {
        for (std::string_view key : {"job", "instance"}) {
          const bool xi = x.alert.labels.Has(key), yi = y.alert.labels.Has(key);
          if (!xi && !yi) continue;
          if (!xi) return false;
          if (!yi) return true;
          std::string_view xv = x.alert.labels.Get(key),
                           yv = y.alert.labels.Get(key);
          if (xv != yv) return xv < yv;
        }
        return LabelSetBefore(x.alert.labels, y.alert.labels);
      });
}

void SortGroups(std::vector<alerting::GroupView>* groups) {
  std::stable_sort(
      groups->begin(), groups->end(),
      [](const alerting::GroupView& x, const alerting::GroupView& y) {
        if (x.labels == y.labels) return x.receiver < y.receiver;
        return LabelSetBefore(x.labels, y.labels);
      });
}

void SortSilences(std::vector<alerting::Silence>* silences, Timestamp now) {
  auto rank = [](alerting::SilenceState s) {
    switch (s) {
      case alerting::SilenceState::kActive:
        return 1;
      case alerting::SilenceState::kPending:
        return 2;
      case alerting::SilenceState::kExpired:
        return 3;
    }
    return 4;
  };
  std::stable_sort(silences->begin(), silences->end(),
                   [&](const alerting::Silence& x, const alerting::Silence& y) {
                     const auto sx = x.StateAt(now), sy = y.StateAt(now);
                     if (sx != sy) return rank(sx) < rank(sy);
                     switch (sx) {
                       case alerting::SilenceState::kActive:
                         return x.ends_at < y.ends_at;
                       case alerting::SilenceState::kPending:
                         return x.starts_at < y.starts_at;
                       case alerting::SilenceState::kExpired:
                         return x.ends_at > y.ends_at;
                     }
                     return false;
                   });
}

}  // namespace vigil::web::api::v2
