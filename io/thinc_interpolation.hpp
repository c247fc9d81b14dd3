// ${section.key} references in a Thinc config's values, filled in as Thinc's configparser interpolation
// fills them: text in, text out, before the value is read as JSON.
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include "io/thinc_sections.hpp"
#include "model/result.hpp"

namespace psgrad {

// What ${section} leaves in a value, as Thinc marks it: a JSON string the reader replaces with a copy of
// the section once every section is read.
inline constexpr const char* kSectionReference = "__SECTION__:";

class ThincInterpolation {
 public:
  // stored: the values as Thinc keeps them before filling in (a quoted string already unquoted).
  explicit ThincInterpolation(const IniDocument& stored) : stored_(stored) {}

  // A value of section with its references filled in: ${a.b} is key b of [a], or else the section
  // [a.b]; ${b} is key b of the same section, or else the section [b]; a ':' counts as a '.'; "$$" is
  // a '$'. A referenced value's own references are filled in too, at most 10 deep. The problem, when
  // there is one, is a phrase for the caller to place.
  Result<std::string> fill(const std::string& section, const std::string& value);

  // The top-level sections references read from.
  const std::set<std::string>& referenced() const { return referenced_; }

 private:
  Status fill_into(std::string& out, const std::string& section, const std::string& value, int depth);
  Result<std::string> lookup(const std::string& section, const std::string& name, std::string& value_section);

  const IniDocument& stored_;
  std::set<std::string> referenced_;
  std::size_t filled_ = 0;  // bytes references have put into values so far
};

}  // namespace psgrad
