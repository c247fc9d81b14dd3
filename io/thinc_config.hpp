// Reads a config written in Thinc's format (Thinc's Config().from_str) into a tree of sections.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "io/thinc_value.hpp"
#include "model/result.hpp"

namespace psgrad {

struct ThincConfig {
  ThincTable sections;               // top-level sections; [a.b] is the table b inside a
  std::map<std::string, int> lines;  // "optimizer.@optimizers" and "optimizer.learn_rate" (a header) -> line
  std::set<std::string> referenced;  // the top-level sections a ${...} read from
  // Keys whose value became a string only for a comment after it ("200 # steps"), which Thinc's format
  // does not have: for messages to say so.
  std::set<std::string> commented;
};

// A value that replaces, or adds, one key before ${...} are filled in, as Thinc's overrides do: a key
// that refers to the key sees the new value.
struct ThincPreset {
  std::string section;  // "optimizer.learn_rate"
  std::string key;
  ThincValue value;
};

// Thinc's rules: the INI layer (io/thinc_sections.hpp); each value read as JSON, or kept as a string
// when it is not JSON; ${section.key} (or ${section:key}) replaced by that key's value, a whole value or
// inside a string, and ${section} by a copy of that section; [a.b] needs [a] before it. Errors are one
// line: "<source>:<line>: <key path>: <problem>". Presets for sections the text lacks are left out.
Result<ThincConfig> read_thinc_config(const std::string& text, const std::string& source,
                                      const std::vector<ThincPreset>& presets = {});

}  // namespace psgrad
