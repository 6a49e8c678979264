// -----------------------------------------------------------------------------
// File: config/file_sd.h
// -----------------------------------------------------------------------------
//
// file_sd_configs target files as Prometheus's discovery/file reads them: a
// JSON or YAML list of {targets: [...], labels: {...}}. Each group gets the
// source "FILE:INDEX" and the label __meta_filepath=FILE. One-shot reads:
// the watcher / refresh loop lives in server/discovery/. Thread-compatible
// (no shared state).
#ifndef VIGIL_SERVER_CONFIG_FILE_SD_H_
#define VIGIL_SERVER_CONFIG_FILE_SD_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "server/config/config.h"

namespace vigil::config {

// The files matching `patterns` (Go filepath.Glob; relative patterns are
// joined to `base_dir`), in pattern order, each pattern's matches sorted.
// Malformed patterns match nothing (Prometheus logs and skips them).
std::vector<std::string> ListFileSDFiles(
    const std::vector<std::string>& patterns, std::string_view base_dir);

// Reads one target file; the format follows its extension (.json, else
// .yml / .yaml, case-insensitive).
// Unavailable: unreadable ("open f.json: no such file or directory").
// InvalidArgument: bad content, with Prometheus's texts where they exist
// ("\"a-b\" is not a valid label name", "nil target group item found").
absl::StatusOr<std::vector<TargetGroup>> ReadFileSDFile(
    const std::string& path);

// ListFileSDFiles + ReadFileSDFile for each; the first failing file's
// error, prefixed with its name ("f.yml: ...").
absl::StatusOr<std::vector<TargetGroup>> ReadFileSD(
    const std::vector<std::string>& patterns, std::string_view base_dir);

}  // namespace vigil::config

#endif  // VIGIL_SERVER_CONFIG_FILE_SD_H_
