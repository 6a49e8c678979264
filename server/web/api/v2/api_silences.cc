// /api/v2/silences and /api/v2/silence/{id}.
#include <cctype>
#include <string>
#include <vector>

#include "core/go/strconv.h"
#include "core/labels.h"
#include "fmt/format.h"
#include "server/web/api/v2/api.h"
#include "server/web/api/v2/filter.h"
#include "server/web/api/v2/requests.h"
#include "server/web/api/v2/respond.h"
#include "server/web/api/v2/sort.h"

namespace vigil::web::api::v2 {
namespace {

// strfmt's uuid format: 32 hex digits in groups of 8-4-4-4-12, the dashes
// optional, any case.
bool IsUuid(std::string_view s) {
  static constexpr int kGroups[] = {8, 4, 4, 4, 12};
  size_t i = 0;
  for (int g = 0; g < 5; ++g) {
    if (g > 0 && i < s.size() && s[i] == '-') ++i;
    for (int k = 0; k < kGroups[g]; ++k, ++i) {
      if (i >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i]))) {
        return false;
      }
    }
  }
  return i == s.size();
}

std::optional<ApiError> CheckId(const std::string& id) {
  if (IsUuid(id)) return std::nullopt;
  return ApiError::OpenApi(
      422, 601,
      fmt::format("silenceID in path must be of type uuid: {}", go::Quote(id)));
}

// silence.validateMatcher plus the matcher's construction; the errors
// read as Alertmanager's after "silence invalid: ".
absl::StatusOr<std::vector<Matcher>> BuildMatchers(
    const std::vector<PostableMatcher>& in) {
  std::vector<Matcher> out;
  bool all_match_empty = true;
  for (size_t i = 0; i < in.size(); ++i) {
    const PostableMatcher& p = in[i];
    auto fail = [&](const std::string& why) {
      return absl::InvalidArgumentError(
          fmt::format("silence invalid: invalid label matcher {}: {}", i, why));
    };
    if (!IsValidLabelName(p.name)) {
      return fail(fmt::format("invalid label name {}", go::Quote(p.name)));
    }
    MatchType t =
        p.is_regex
            ? (p.is_equal ? MatchType::kRegexMatch : MatchType::kRegexNoMatch)
            : (p.is_equal ? MatchType::kEqual : MatchType::kNotEqual);
    auto m = Matcher::Make(t, p.name, p.value);
    if (!m.ok()) {
      return fail(fmt::format("invalid regular expression {}: {}",
                              go::Quote(p.value),
                              std::string(m.status().message())));
    }
    all_match_empty = all_match_empty && m->MatchesEmpty();
    out.push_back(*std::move(m));
  }
  if (all_match_empty) {
    return absl::InvalidArgumentError(
        "silence invalid: at least one matcher must not match the empty "
        "string");
  }
  return out;
}

}  // namespace

void Api::GetSilences(alerting::Router& r, const net::HttpRequest& req,
                      net::HttpResponse* resp) const {
  auto filter = ParseSilenceFilter(req);
  if (!filter.ok()) {
    return RespondError(resp, ApiError::Payload(400, filter.status()));
  }
  const Timestamp now = Now();
  std::vector<alerting::Silence> all = r.ListSilences();
  std::vector<alerting::Silence> kept;
  for (alerting::Silence& s : all) {
    if (SilenceMatchesFilter(s, *filter)) kept.push_back(std::move(s));
  }
  SortSilences(&kept, now);
  RespondJson(resp, [&](JsonWriter& w) {
    w.StartArray();
    for (const alerting::Silence& s : kept) WriteGettableSilence(w, s, now);
    w.EndArray();
  });
}

void Api::GetSilence(alerting::Router& r, const net::HttpRequest& req,
                     net::HttpResponse* resp) const {
  const std::string id(req.PathParam("silenceID").value_or(""));
  if (auto e = CheckId(id)) return RespondError(resp, *e);
  auto s = r.GetSilence(id);
  if (absl::IsNotFound(s.status())) {
    return RespondError(resp, ApiError{404, ""});  // Alertmanager's bare 404
  }
  if (!s.ok()) {
    return RespondError(resp, ApiError::Payload(500, s.status()));
  }
  const Timestamp now = Now();
  RespondJson(resp, [&](JsonWriter& w) { WriteGettableSilence(w, *s, now); });
}

void Api::DeleteSilence(alerting::Router& r, const net::HttpRequest& req,
                        net::HttpResponse* resp) const {
  const std::string id(req.PathParam("silenceID").value_or(""));
  if (auto e = CheckId(id)) return RespondError(resp, *e);
  // Alertmanager answers an unknown id with 500 "silence not found", and
  // expiring an expired silence with 200.
  auto s = r.GetSilence(id);
  if (s.ok() && s->StateAt(Now()) == alerting::SilenceState::kExpired) {
    return RespondEmpty(resp);
  }
  absl::Status st = s.ok() ? r.ExpireSilence(id) : s.status();
  if (absl::IsNotFound(st)) {
    return RespondError(resp, ApiError::Payload(500, "silence not found"));
  }
  if (!st.ok()) return RespondError(resp, ApiError::Payload(500, st));
  RespondEmpty(resp);
}

void Api::PostSilences(alerting::Router& r, const net::HttpRequest& req,
                       net::HttpResponse* resp) const {
  if (auto e = CheckJsonContentType(req.Header("content-type"))) {
    return RespondError(resp, *e);
  }
  auto decoded = DecodePostableSilence(req.body);
  if (auto* e = std::get_if<ApiError>(&decoded)) return RespondError(resp, *e);
  PostableSilence& p = std::get<PostableSilence>(decoded);

  const Timestamp now = Now();
  if (p.starts_at >= p.ends_at) {
    return RespondError(
        resp, ApiError::Payload(400,
                                "Failed to create silence: start time must "
                                "be before end time"));
  }
  if (p.ends_at < now) {
    return RespondError(
        resp, ApiError::Payload(400,
                                "Failed to create silence: end time can't be "
                                "in the past"));
  }
  // silences.Set looks the id up before validating anything else.
  if (!p.id.empty() && absl::IsNotFound(r.GetSilence(p.id).status())) {
    return RespondError(resp, ApiError::Payload(404, "silence not found"));
  }
  auto matchers = BuildMatchers(p.matchers);
  if (!matchers.ok()) {
    return RespondError(resp, ApiError::Payload(400, matchers.status()));
  }
  alerting::Silence s;
  s.id = std::move(p.id);
  s.matchers = *std::move(matchers);
  // A zero start (Go's zero time) is in the past: the router starts it now.
  s.starts_at = p.starts_at == kMinTimestamp ? now : p.starts_at;
  s.ends_at = p.ends_at;
  s.updated_at = now;
  s.created_by = std::move(p.created_by);
  s.comment = std::move(p.comment);
  auto id = r.PutSilence(std::move(s));
  if (absl::IsNotFound(id.status())) {
    return RespondError(resp, ApiError::Payload(404, "silence not found"));
  }
  if (!id.ok()) {
    return RespondError(resp, ApiError::Payload(400, id.status()));
  }
  RespondJson(resp, [&](JsonWriter& w) {
    w.StartObject();
    w.Key("silenceID");
    w.String(*id);
    w.EndObject();
  });
}

}  // namespace vigil::web::api::v2
