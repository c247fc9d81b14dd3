#include "apps/run_config.hpp"

#include <map>
#include <sstream>

#include <fmt/format.h>

#include "io/checkpoint_file.hpp"

namespace psgrad {

namespace {

// "section.key" -> the value's text, from render_config's output (one key a line under [section]).
std::map<std::string, std::string> rendered_values(const std::string& text) {
  std::map<std::string, std::string> values;
  std::istringstream lines(text);
  std::string line, section;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      section = line.substr(1, line.find(']') - 1);
      continue;
    }
    const auto equals = line.find(" = ");
    if (equals == std::string::npos) continue;
    values[section + "." + line.substr(0, equals)] = line.substr(equals + 3);
  }
  return values;
}

}  // namespace

std::vector<std::string> changed_settings(const std::string& before, const std::string& after) {
  const auto old_values = rendered_values(before);
  std::vector<std::string> changes;
  for (const auto& [path, value] : rendered_values(after)) {
    const auto old = old_values.find(path);
    if (old == old_values.end()) changes.push_back(fmt::format("{} = {} (it had none)", path, value));
    else if (old->second != value) changes.push_back(fmt::format("{} = {} (it had {})", path, value, old->second));
  }
  return changes;
}

Result<Config> load_run_config(const std::string& config_path, const std::string& resume_path,
                               const std::vector<std::string>& overrides, const std::vector<FlagSetting>& flags) {
  if (!config_path.empty()) return load_config(config_path, overrides, flags);
  if (resume_path.empty())
    return Error{"--config: a config file is required, unless --resume names a checkpoint whose run to continue"};
  auto checkpoint = read_checkpoint(resume_path);
  if (!checkpoint) return Error{checkpoint.error()};
  const auto source = resume_path + " (the config inside the checkpoint)";
  auto written = parse_config(checkpoint->config, source);
  if (!written) return Error{written.error()};
  auto config = parse_config(checkpoint->config, source, overrides, flags);
  if (!config) return config;
  for (const auto& change : changed_settings(render_config(*written), render_config(*config)))
    config->notes.push_back(fmt::format("resuming {}'s run with {}", resume_path, change));
  return config;
}

}  // namespace psgrad
