// What the tools that hand psgrad's results to the Thinc comparisons share: float arrays in and out of
// .npy files, and a one-line failure.
#pragma once

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "io/npy_array.hpp"

namespace psgrad::testing {

inline std::vector<float> floats(const NpyArray& array) {
  std::vector<float> values(array.element_count());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(array.value(i));
  return values;
}

inline int fail(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  return 1;
}

inline bool write_npy(const std::string& path, std::vector<std::uint64_t> shape, const float* data, std::size_t size) {
  std::ofstream file(path, std::ios::binary);
  file << npy_bytes(npy_array(std::move(shape), std::vector<float>(data, data + size)));
  return static_cast<bool>(file);
}

// The text of a file, for the config a tool is given.
inline std::string file_text(const char* path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

}  // namespace psgrad::testing
