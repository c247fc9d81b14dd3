// Reading and writing IDX files (the MNIST format), raw or gzip-compressed, with validated headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/result.hpp"

namespace psgrad {

struct IdxImages {
  std::size_t count = 0;
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<std::uint8_t> pixels;  // count * rows * cols
};

struct IdxLabels {
  std::vector<std::uint8_t> labels;
};

// What an images file's header declares, read without its pixels.
struct IdxImagesHeader {
  std::size_t count = 0;
  std::size_t rows = 0;
  std::size_t cols = 0;
};

// Errors name the file and the fault: "data/x.idx: wrong magic 0x00000801, expected 0x00000803 (images)".
Result<IdxImages> read_idx_images(const std::string& path);
Result<IdxImagesHeader> read_idx_images_header(const std::string& path);
Result<IdxLabels> read_idx_labels(const std::string& path);
// Writes gzip when path ends in ".gz". Written to a temporary file and renamed, so never half-written.
Status write_idx_images(const std::string& path, const IdxImages& images);
Status write_idx_labels(const std::string& path, const IdxLabels& labels);

}  // namespace psgrad
