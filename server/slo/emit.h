// -----------------------------------------------------------------------------
// File: slo/emit.h
// -----------------------------------------------------------------------------
//
// YAML text for what `vigil slo generate` writes: the rule file (as Sloth's
// yaml.v2 output is laid out: `groups:` / `- name:` / `rules:`, keys in
// rulefmt's order, maps sorted, multi-line expressions as `|` blocks) and
// the scalars of the generated unit tests.
#ifndef VIGIL_SERVER_SLO_EMIT_H_
#define VIGIL_SERVER_SLO_EMIT_H_

#include <string>
#include <string_view>
#include <vector>

#include "server/slo/generate.h"

namespace vigil::slo {

// `s` as a YAML scalar value placed after "key: " on a line indented by
// `indent` spaces: plain when that reads back as the same string, a literal
// block (`|`, `|-`, `|+`) when it has line breaks, double-quoted otherwise.
std::string YamlScalar(std::string_view s, int indent);

// `key: value` lines of a sorted map at `indent` (nothing if empty).
std::string YamlMap(std::string_view key, const StringMap& m, int indent);

// The whole rule file, after `header` (comment lines, each ending in \n).
std::string RenderRuleFile(const std::vector<RuleGroup>& groups,
                           std::string_view header);

}  // namespace vigil::slo

#endif  // VIGIL_SERVER_SLO_EMIT_H_
