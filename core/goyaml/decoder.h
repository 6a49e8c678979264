// Strict decoding of yaml-cpp nodes with the semantics (and error texts) of
// Go's gopkg.in/yaml.v3 decoder with KnownFields(true), which is how
// Prometheus reads rule files: type errors are collected ("line N: cannot
// unmarshal !!str `abc` into int", "line N: field foo not found in type T",
// duplicate keys), while an error from a custom unmarshaler (a bad
// duration) aborts decoding and is the only error reported.
//
// Used for rule files, promtool's unit-test files and prometheus.yml
// (yaml.v2 strict mode words most errors the same way; see set_yaml_v2).
#ifndef VIGIL_CORE_GOYAML_DECODER_H_
#define VIGIL_CORE_GOYAML_DECODER_H_

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace vigil::goyaml {

// A 1-based position in a YAML file. {0, 0} means "no position" (the whole
// file, e.g. an I/O error).
struct SourcePos {
  int line = 0;
  int column = 0;
  bool operator==(const SourcePos&) const = default;
};

// 1-based position of `n` (yaml-cpp marks are 0-based).
SourcePos PosOf(const YAML::Node& n);

// A collected decoding error: go-yaml's text ("line N: ...") and where.
struct TypeError {
  SourcePos pos;
  std::string text;
};

// A (key, value) pair of a mapping whose key decoded to a string.
struct Field {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

// A map[string]string's entries in file order, with each key's node.
using StringMapEntries = std::vector<std::pair<Field, std::string>>;

// What Struct() or Sequence() returned, or no elements when it failed:
// `for (const Field& f : Items(fields))` iterates the decoder's vector in
// place. (`fields ? *fields : std::vector<Field>{}` copies it into a
// temporary that ends with the loop, so a pointer to an element kept past
// the loop dangles: ASan found one in server/probe/config.cc.)
template <class T>
const std::vector<T>& Items(const std::optional<std::vector<T>>& v) {
  static const std::vector<T> kNone;
  return v ? *v : kNone;
}

class GoYamlDecoder {
 public:
  // `source` is the document text; it is used to place empty values the
  // way go-yaml does (just after the "key:"), and must outlive the decoder.
  explicit GoYamlDecoder(std::string_view source) : source_(source) {}

  // Whether Struct() reports keys it does not know (go-yaml's KnownFields).
  // Default: true
  void set_known_fields(bool on) { known_fields_ = on; }
  // gopkg.in/yaml.v2 strict mode (Prometheus's config loader): duplicate
  // keys read "field X already set in type T" / "key \"k\" already set in
  // map" and the rest of the mapping is still decoded.
  // Default: false (yaml.v3)
  void set_yaml_v2(bool on) { yaml_v2_ = on; }

  // go-yaml's tag of a scalar: "!!str" for quoted text, else resolved
  // ("!!int", "!!float", "!!bool", "!!null", "!!timestamp", "!!str");
  // "!!seq" / "!!map" for collections.
  std::string ShortTag(const YAML::Node& n) const;

  // Mapping into a struct named `type`: checks duplicate keys, then returns
  // the fields whose key is in `known` (in file order) and records "field
  // X not found in type T" for the rest. A null node is an empty struct. On
  // a non-mapping records "cannot unmarshal ... into T" and returns nullopt.
  std::optional<std::vector<Field>> Struct(
      const YAML::Node& n, std::string_view type,
      std::initializer_list<std::string_view> known);

  // A sequence (or null, which is empty) of items decoded into `type`
  // ("[]rulefmt.RuleGroup"); nullopt plus a type error otherwise.
  std::optional<std::vector<YAML::Node>> Sequence(const YAML::Node& n,
                                                  std::string_view type);

  // A string: any scalar's text; null is "". Collections are type errors.
  bool String(const YAML::Node& n, std::string* out);
  // A map[string]string in file order; duplicate keys are type errors.
  bool StringMap(const YAML::Node& n, StringMapEntries* out);
  // A Go int, with go-yaml's conversions (1.5 truncates to 1; null is 0).
  bool Int(const YAML::Node& n, int* out);
  // A Prometheus model.Duration ("1h30m", "0"); null is 0. A malformed
  // duration sets the fatal error.
  bool Duration(const YAML::Node& n, int64_t* out_ms);

  // Where an empty value (`expr:` with nothing after it) sits: go-yaml puts
  // it just after the colon of its key; yaml-cpp at the next token.
  SourcePos ValuePos(const Field& f) const;

  const std::vector<TypeError>& type_errors() const { return type_errors_; }
  // The first non-type error ("not a valid duration string: ..."), if any.
  const std::optional<TypeError>& fatal() const { return fatal_; }
  bool failed() const { return fatal_.has_value() || !type_errors_.empty(); }

  // Sets the fatal error unless one is set (errors after it are moot).
  void Fail(SourcePos pos, std::string text) {
    if (!fatal_) fatal_ = TypeError{pos, std::move(text)};
  }

  // Records "line N: cannot unmarshal <tag>[ `value`] into <type>".
  void TypeMismatch(const YAML::Node& n, std::string_view type);

 private:
  bool CheckDuplicateKeys(const YAML::Node& n);
  // Struct()'s key loop; "<<" merge values go to `merges`.
  void AddFields(const YAML::Node& n, std::string_view type,
                 std::initializer_list<std::string_view> known,
                 std::vector<Field>* fields, std::vector<YAML::Node>* merges);

  std::string_view source_;
  bool known_fields_ = true;
  bool yaml_v2_ = false;
  std::vector<TypeError> type_errors_;
  std::optional<TypeError> fatal_;
};

// yaml-cpp accepts a quoted scalar left open at the end of the input;
// go-yaml (and the YAML spec) do not. Returns where such a scalar starts.
std::optional<SourcePos> FindUnterminatedQuote(std::string_view source,
                                               const YAML::Node& root);

// go-yaml's "yaml: unmarshal errors:\n  line 3: ...\n  line 9: ..." text.
std::string UnmarshalErrorsText(std::vector<TypeError> errors);
// The earliest position among `errors` (REQUIRES: not empty).
SourcePos FirstPos(const std::vector<TypeError>& errors);

// Parses a Prometheus model.Duration with its error texts ("empty duration
// string", `not a valid duration string: "5x"`, "duration out of range").
absl::StatusOr<int64_t> ParsePromDuration(std::string_view s);

}  // namespace vigil::goyaml

#endif  // VIGIL_CORE_GOYAML_DECODER_H_
