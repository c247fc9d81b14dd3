// Reads the worker index out of `psgrad work`'s joined line; anything else, or a number that does not
// fit, is not a joined line.
#include "launch/joined_worker.hpp"

#include <cctype>

namespace psgrad {

std::optional<int> joined_worker_index(const std::string& line) {
  static const std::string start = "psgrad work: joined ", middle = " as worker ";
  if (line.rfind(start, 0) != 0) return std::nullopt;
  // Older workers of a model with tables said "joined as worker K of N", without the server's address.
  const auto at = line.find(middle, start.size() - 1);
  if (at == std::string::npos) return std::nullopt;
  std::size_t digit = at + middle.size();
  long index = 0;
  const std::size_t first = digit;
  while (digit < line.size() && std::isdigit(static_cast<unsigned char>(line[digit])) && digit - first < 9)
    index = index * 10 + (line[digit++] - '0');
  if (digit == first || line.compare(digit, 4, " of ") != 0) return std::nullopt;
  return static_cast<int>(index);
}

}  // namespace psgrad
