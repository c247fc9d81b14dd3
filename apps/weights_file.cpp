// The raw weights file: a four-word header (magic, version, layout hash, count), then the floats.
#include "apps/weights_file.hpp"

#include "io/atomic_file.hpp"

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
  const std::uint64_t header[4] = {0x5753475250ull /* "PRGSW" */, weights.version, weights.layout_hash,
                                   weights.values.size()};
  return write_file_atomically(path, "weights file", [&](int fd) -> Status {
    if (auto written = write_fully(fd, header, sizeof header); !written) return written;
    return write_fully(fd, weights.values.data(), weights.values.size() * sizeof(float));
  });
}

}  // namespace psgrad
