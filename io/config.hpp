// The training configuration, in TOML or Thinc's format: sections, validation against registered
// settings, overrides.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/config_format.hpp"
#include "io/data_columns.hpp"
#include "model/job.hpp"
#include "model/result.hpp"
#include "model/run_limits.hpp"
#include "model/settings.hpp"

namespace psgrad {

// The data section is read by apps/ only; the sections that shape training are the job (model/job.hpp).
struct DataSection {
  std::string name = "mnist";  // a named data set ...
  std::string path;            // ... or a folder of IDX or .npy files, an .npz or a CSV file (wins when set)
  std::int64_t label_column = 0;  // CSV: the label's column, from 0; negative counts from the end
  std::string dev_path;           // the dev examples, replacing any test split of path
  double dev_fraction = 0.0;      // or this share of path's examples, per class; 0: none
  double scale = 1.0;             // CSV and NumPy features are multiplied by it
  // Named columns (io/data_columns.hpp): a JSON Lines, CSV or TSV file's inputs, by name, and its label.
  std::vector<DataColumn> columns;  // [data.columns], in name order; empty: none
  std::string label;                // the label's column
  std::uint64_t max_tokens = 1024;  // the most tokens of a text, or ids of a list, in one example's column
};

// The config is the job plus what only the command line's side reads: where it came from and the data.
struct Config : TrainingJob {
  std::string source;  // file name, for messages
  // What parsing changed or left out on its own, for the user to see: settings of an architecture or
  // optimizer that --set replaced, dropped because the new choice has no such setting; the Ray-only
  // keys of a [ray] section.
  std::vector<std::string> notes;
  DataSection data;
};

// A command-line flag that stands for a config key (--mode for cluster.mode): its value goes in as it
// is, after the --set overrides, gets the key's checks, and a refusal names the flag.
struct FlagSetting {
  std::string flag;  // "--mode"
  std::string path;  // "cluster.mode"
  SettingValue value;
};

// Parses and validates config text, TOML or Thinc's format as config_format(source, text) tells
// (io/config_format.hpp). overrides are "section.key=value" (value in TOML syntax; a bare word is taken
// as a string) and are applied before validation, so they get the same checks. Every error is one line:
// "<source>: <key path>: expected ..., got ..." (for Thinc's format "<source>:<line>: ...").
Result<Config> parse_config(const std::string& text, const std::string& source,
                            const std::vector<std::string>& overrides = {}, const std::vector<FlagSetting>& flags = {});
Result<Config> load_config(const std::string& path, const std::vector<std::string>& overrides = {},
                           const std::vector<FlagSetting>& flags = {});

// The resolved config, every default filled in, as TOML or in Thinc's format; parse_config of either
// gives the config back.
std::string render_config(const Config& config, ConfigFormat format = ConfigFormat::toml);

// The settings each fixed section accepts (for validation and the generated config reference).
const std::vector<SettingSpec>& training_settings();
const std::vector<SettingSpec>& evaluation_settings();
const std::vector<SettingSpec>& tables_settings();
const std::vector<SettingSpec>& data_settings();
const std::vector<SettingSpec>& cluster_settings();

}  // namespace psgrad
