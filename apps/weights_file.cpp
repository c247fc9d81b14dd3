#include "apps/weights_file.hpp"

#include <cstdio>

#include <fmt/format.h>
#include <unistd.h>

namespace psgrad {

std::uint64_t weights_hash(const FloatBuffer& values) {
  std::uint64_t hash = 14695981039346656037ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
  for (std::size_t i = 0; i < values.size() * sizeof(float); ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

Status write_weights_file(const std::string& path, const Weights& weights) {
  const auto temporary = path + ".tmp";
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (!file) return Error{fmt::format("{}: cannot write weights file", path)};
  const std::uint64_t header[4] = {0x5753475250ull /* "PRGSW" */, weights.version, weights.layout_hash,
                                   weights.values.size()};
  bool ok = std::fwrite(header, sizeof header, 1, file) == 1 &&
            std::fwrite(weights.values.data(), sizeof(float), weights.values.size(), file) ==
                weights.values.size();
  ok = std::fflush(file) == 0 && ::fsync(fileno(file)) == 0 && ok;
  ok = std::fclose(file) == 0 && ok;
  if (!ok || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return Error{fmt::format("{}: writing the weights failed", path)};
  }
  return success();
}

}  // namespace psgrad
