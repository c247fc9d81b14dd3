// A Thinc config as the TOML document the config's checks read, so each key keeps its one declaration
// and its checks whichever format wrote it.
#pragma once

#include <string>
#include <vector>

#include <toml++/toml.h>

#include "io/config_validator.hpp"
#include "model/result.hpp"

namespace psgrad {

struct ConfigDocument {
  toml::table document;
  KeyLocations locations;
};

// Reads Thinc text (io/thinc_config.hpp) into a document: sections become tables, lists arrays. The
// --set overrides (section.key=value, as parse_config takes them) are filled in before ${...}, as
// Thinc's own overrides are, so a key that refers to an overridden one follows it. read_sections are
// the sections psgrad reads; a section no ${...} reads from is left for the checks to refuse, one that
// only serves ${...} (Thinc's [variables] habit) is left out. null has no setting to go to: an error.
Result<ConfigDocument> thinc_document(const std::string& text, const std::string& source,
                                      const std::vector<std::string>& read_sections,
                                      const std::vector<std::string>& overrides);

}  // namespace psgrad
