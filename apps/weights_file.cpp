// The raw weights file: a four-word header (magic, version, layout hash, count), then the floats.
#include "apps/weights_file.hpp"

#include "io/atomic_file.hpp"
#include "model/fnv1a.hpp"

namespace psgrad {

std::uint64_t weights_hash(const FloatBuffer& values) { return fnv1a(values.data(), values.size() * sizeof(float)); }

Status write_weights_file(const std::string& path, const Weights& weights) {
  const std::uint64_t header[4] = {0x5753475250ull /* "PRGSW" */, weights.version, weights.layout_hash,
                                   weights.values.size()};
  return write_file_atomically(path, "weights file", [&](int fd) -> Status {
    if (auto written = write_fully(fd, header, sizeof header); !written) return written;
    return write_fully(fd, weights.values.data(), weights.values.size() * sizeof(float));
  });
}

}  // namespace psgrad
