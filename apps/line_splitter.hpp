// Splits a byte stream into lines; a last line without a newline comes out at the end.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace psgrad {

class LineSplitter {
 public:
  // The lines these bytes complete, without their newlines.
  std::vector<std::string> add(const char* bytes, std::size_t size);
  // What is left once the stream ended: a line that had no newline, if any.
  std::optional<std::string> rest();

 private:
  std::string partial_;
};

}  // namespace psgrad
