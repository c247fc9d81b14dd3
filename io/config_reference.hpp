// The generated config reference: every section's and every registered entry's settings as Markdown.
#pragma once

#include <string>

namespace psgrad {

// A Markdown document with one table (section, key, expected, default, description), built from the
// same SettingSpec lists that validate configs, so the docs cannot say what the parser does not do.
std::string config_reference_markdown();

}  // namespace psgrad
