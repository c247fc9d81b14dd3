// Fills in ${...} references as configparser's ExtendedInterpolation, with Thinc's section references.
#include "io/thinc_interpolation.hpp"

#include <fmt/format.h>

#include "io/user_text.hpp"

namespace psgrad {

namespace {

// configparser's MAX_INTERPOLATION_DEPTH: two keys that refer to each other stop here.
constexpr int kMaxDepth = 10;
// Values that each refer to the one before twice double at every step; a config is at most 1 MiB, and
// what its references fill in stops at 16 times that rather than at the machine's memory.
constexpr std::size_t kMaxFilledBytes = std::size_t{16} << 20;

std::string section_reference(const std::string& name) { return std::string("\"") + kSectionReference + name + "\""; }

void note_reference(std::set<std::string>& referenced, const std::string& section) {
  referenced.insert(section.substr(0, section.find('.')));
}

}  // namespace

Result<std::string> ThincInterpolation::fill(const std::string& section, const std::string& value) {
  std::string out;
  if (auto filled = fill_into(out, section, value, 1); !filled) return Error{filled.error()};
  return out;
}

// The value a reference names, and in value_section the section its own references are read in.
Result<std::string> ThincInterpolation::lookup(const std::string& section, const std::string& name,
                                               std::string& value_section) {
  std::string path = name;
  for (auto& c : path)
    if (c == ':') c = '.';
  const auto dot = path.rfind('.');
  if (dot == std::string::npos) {
    value_section = section;
    if (const auto* own = stored_.find(section); own && own->find(path)) return own->find(path)->text;
    if (!stored_.find(path))
      return Error{fmt::format("${{{}}} names no key {} in [{}] and no section [{}]", echoed(name), echoed(path),
                               echoed(section), echoed(path))};
    note_reference(referenced_, path);
    return section_reference(path);
  }
  value_section = path.substr(0, dot);
  const auto key = path.substr(dot + 1);
  if (const auto* other = stored_.find(value_section); other && other->find(key)) {
    note_reference(referenced_, value_section);
    return other->find(key)->text;
  }
  if (!stored_.find(path))
    return Error{fmt::format("${{{}}} names no key {} in [{}] and no section [{}]", echoed(name), echoed(key),
                             echoed(value_section), echoed(path))};
  note_reference(referenced_, path);
  return section_reference(path);
}

Status ThincInterpolation::fill_into(std::string& out, const std::string& section, const std::string& value,
                                     int depth) {
  if (depth > kMaxDepth)
    return Error{fmt::format("references nest more than {} deep; do two keys refer to each other?", kMaxDepth)};
  std::size_t at = 0;
  while (at < value.size()) {
    const auto dollar = value.find('$', at);
    if (dollar == std::string::npos) {
      out.append(value, at, std::string::npos);
      break;
    }
    out.append(value, at, dollar - at);
    const char next = dollar + 1 < value.size() ? value[dollar + 1] : '\0';
    if (next == '$') {
      out += '$';
      at = dollar + 2;
      continue;
    }
    const auto close = next == '{' ? value.find('}', dollar + 2) : std::string::npos;
    const auto rest = echoed(value.substr(dollar));
    if (next != '{')
      return Error{fmt::format("'$' must be followed by '{{' or another '$' (a dollar sign is written $$), got \"{}\"",
                               rest)};
    if (close == std::string::npos || close == dollar + 2)
      return Error{fmt::format("bad reference \"{}\"; expected ${{section.key}}", rest)};
    const auto name = value.substr(dollar + 2, close - dollar - 2);
    std::string value_section;
    auto found = lookup(section, name, value_section);
    if (!found) return Error{found.error()};
    const auto before = out.size();
    if (found->find('$') == std::string::npos) {
      out += *found;
    } else if (auto nested = fill_into(out, value_section, *found, depth + 1); !nested) {
      return nested;
    }
    if (depth == 1) filled_ += out.size() - before;
    if (out.size() > kMaxFilledBytes || filled_ > kMaxFilledBytes)
      return Error{fmt::format("references fill in more than {} MiB of text", kMaxFilledBytes >> 20)};
    at = close + 1;
  }
  return success();
}

}  // namespace psgrad
