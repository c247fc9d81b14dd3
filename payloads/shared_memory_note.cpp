// The line a process prints at its end about what went through shared memory.
#include <fmt/format.h>

#include "payloads/shared_memory.hpp"

namespace psgrad {

std::string shared_memory_note() {
  const auto counts = shared_memory_counts();
  if (counts.put + counts.taken + counts.inline_fallbacks == 0) return {};
  auto note = fmt::format("through shared memory: {} payloads sent{}, {} received", counts.put,
                          counts.in_place > 0 ? fmt::format(" ({} written in place)", counts.in_place) : "",
                          counts.taken);
  if (counts.inline_fallbacks > 0) note += fmt::format(", {} sent inline (no slot free)", counts.inline_fallbacks);
  return note;
}

std::string with_shared_memory_note(const std::string& line) {
  const auto note = shared_memory_note();
  return note.empty() ? line : line + "; " + note;
}

}  // namespace psgrad
