// A config read from a file anchors its relative paths at the file's folder; a config that arrives as
// text (from a server, a checkpoint, a model file) already holds the paths its first reader resolved.
#include "io/config_paths.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

namespace psgrad {

namespace fs = std::filesystem;

namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

bool overridden(const std::vector<std::string>& overrides, const std::string& key) {
  return std::any_of(overrides.begin(), overrides.end(), [&key](const std::string& text) {
    return trimmed(text.substr(0, text.find('='))) == key;
  });
}

}  // namespace

Status resolve_config_paths(Config& config, const std::string& config_path, const std::vector<std::string>& overrides) {
  std::error_code error;
  const fs::path folder = fs::absolute(fs::path(config_path), error).parent_path();
  if (error) return Error{fmt::format("{}: cannot tell the config's folder: {}", config_path, error.message())};
  struct PathKey {
    const char* name;
    std::string* value;
    bool must_exist;
  };
  const PathKey keys[] = {{"data.path", &config.data.path, false},
                          {"data.dev_path", &config.data.dev_path, false},
                          {"training.checkpoint_path", &config.training.checkpoint_path, false},
                          {"cluster.tls_certificate", &config.cluster.tls_certificate, true},
                          {"cluster.tls_key", &config.cluster.tls_key, true},
                          {"cluster.tls_ca", &config.cluster.tls_ca, true}};
  for (const auto& key : keys) {
    if (key.value->empty()) continue;
    const bool from_file = !overridden(overrides, key.name);
    if (from_file && fs::path(*key.value).is_relative()) *key.value = (folder / *key.value).lexically_normal().string();
    // Data and checkpoints say for themselves what is wrong with them, when they are read.
    if (key.must_exist && !fs::exists(*key.value, error)) {
      const auto looked_at = fs::absolute(*key.value, error).lexically_normal().string();
      return Error{fmt::format("{}: {}: {} not found{}", config_path, key.name, looked_at,
                               from_file ? " (a relative path in a config is relative to the config's folder)"
                                         : "")};
    }
  }
  return success();
}

}  // namespace psgrad
