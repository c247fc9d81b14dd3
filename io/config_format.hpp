// Which language a config is written in: TOML, or Thinc's config format (an INI file of JSON values).
#pragma once

#include <optional>
#include <string>

namespace psgrad {

enum class ConfigFormat { toml, thinc };

// By the file name's extension (.toml: TOML; .cfg or .ini: Thinc), and for any other name (text from a
// server, a checkpoint or a Python string) by the first line only one of the two can read: an
// unquoted "@key =", a "key: value", a value that is a bare word or starts with ${ are Thinc's; a quoted
// key, a dotted key, [[...]], a '...' or """...""" string or an inline table { a = 1 } are TOML's.
// Text with neither reads the same either way, and is TOML.
ConfigFormat config_format(const std::string& source, const std::string& text);

// "toml" / "cfg", as `config show --format` takes them.
std::optional<ConfigFormat> config_format_named(const std::string& name);

}  // namespace psgrad
