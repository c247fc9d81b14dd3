// Reading one TOML config document: --set overrides applied to it, and its sections checked against
// setting specs with one-line errors that say which values came from --set.
#pragma once

#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "model/result.hpp"
#include "model/settings.hpp"

namespace psgrad {

// What the --set overrides of one parse touched, so messages can say so.
struct OverrideRecord {
  std::set<std::string> paths;             // "training.batch_size"
  std::set<std::string> created_sections;  // sections the file did not have
  std::map<std::string, std::string> flags;  // "cluster.mode" -> "--mode": paths a command-line flag set
};

// Applies "section.key=value" overrides to the parsed document (value in TOML syntax; a bare word is
// taken as a string); records the paths they set. "section.table.key=value" sets a key of a sub-table
// such as [optimizer.learn_rate], creating it (or replacing a plain value there) when needed.
Status apply_overrides(toml::table& document, const std::vector<std::string>& overrides, const std::string& source,
                       OverrideRecord& record);

// Sets "section.key" to a flag's value, as it is; records that the flag set it.
void apply_flag(toml::table& document, const std::string& flag, const std::string& path, const SettingValue& value,
                OverrideRecord& record);

// Where the document's keys were written, for messages: each key path's line (a Thinc config's; TOML
// messages name no line), and keys read under another name ("cluster.num_workers" that [ray] wrote as
// "ray.num_workers").
struct KeyLocations {
  std::map<std::string, int> lines;  // "optimizer.learn_rate" (a key or a section header) -> line
  std::map<std::string, std::string> written_as;
  std::map<std::string, std::string> hints;  // what a refused value may have meant, added to its message
};

// Validation state for one parse: the source name for messages, which key paths came from --set and
// where the others were written.
class Validator {
 public:
  Validator(std::string source, OverrideRecord overrides, KeyLocations locations = {})
      : source_(std::move(source)), overrides_(std::move(overrides)), locations_(std::move(locations)) {}

  // "<source>: <path>: <problem>", with " (from --set)" when an override set the path; with the line
  // ("<source>:<line>: ...") of the key, or else of its section, when it is known, and its hint.
  Error fail(const std::string& path, const std::string& problem) const;

  // Reads a section's keys against specs, defaults filled in. handled_keys ("@layers") are read by the
  // caller but still count as known; owner names who requires a missing setting ("SGD.v1").
  Result<Settings> read_settings(const toml::table* section, const std::string& section_name,
                                 const std::vector<SettingSpec>& specs,
                                 std::initializer_list<std::string> handled_keys, const std::string& owner) const;

  // The registered name under key ("@layers") in section, or default_name when the section is absent.
  // A section that only --set created may leave the name out: `--set model.dropout=0.5` tweaks the
  // default model rather than demanding the user also spell out its architecture.
  Result<std::string> read_registry_name(const toml::table* section, const std::string& section_name,
                                         const std::string& key, const std::string& what,
                                         const std::vector<std::string>& known_names,
                                         const std::string& default_name) const;

  const std::string& source() const { return source_; }
  // The line a key path or section header was written on, in a Thinc config; 0 when unknown.
  int line(const std::string& path) const {
    const auto found = locations_.lines.find(path);
    return found == locations_.lines.end() ? 0 : found->second;
  }
  // Whether --set set this key path ("model.@layers").
  bool from_override(const std::string& path) const {
    return overrides_.paths.count(path) > 0 || overrides_.flags.count(path) > 0;
  }

 private:
  std::string source_;
  OverrideRecord overrides_;
  KeyLocations locations_;
};

}  // namespace psgrad
