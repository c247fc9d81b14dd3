// Turns a caf::error into the one-line text psgrad shows: the context string when there is one.
#pragma once

#include <string>

#include "caf/actor_system.hpp"
#include "caf/error.hpp"

namespace psgrad {

inline std::string error_text(caf::actor_system& system, const caf::error& error) {
  const auto& context = error.context();
  if (context.match_elements<std::string>()) return context.get_as<std::string>(0);
  return system.render(error);
}

}  // namespace psgrad
