// The saved-model file (model.psgrad): magic, format version, stored config and layout, raw weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/result.hpp"

namespace psgrad {

// Layout, all integers little-endian, strings as a u64 byte count then the bytes:
//   "PSGRADMF" | u32 format version | u64 weights version | u64 input width | u64 classes |
//   u64 image rows | u64 image cols | str architecture | str config TOML | str layout description |
//   u64 layout hash | u64 weight count | f32 weights... | u64 FNV-1a of every byte before it
constexpr char model_file_magic[8] = {'P', 'S', 'G', 'R', 'A', 'D', 'M', 'F'};
constexpr std::uint32_t model_file_format_version = 1;

// Everything a model file holds except the weights.
struct ModelFileHeader {
  std::uint32_t format_version = model_file_format_version;
  std::uint64_t weights_version = 0;  // optimizer steps behind the weights
  std::uint64_t input_width = 0;
  std::uint64_t num_classes = 0;
  std::uint64_t image_rows = 0;  // 0 when the inputs are not images
  std::uint64_t image_cols = 0;
  std::string architecture;        // "relu_relu_softmax.v1"
  std::string config_text;         // the resolved config (render_config), so settings are all explicit
  std::string layout_description;  // ParameterLayout::describe()
  std::uint64_t layout_hash = 0;   // ParameterLayout::hash()
};

struct ModelFileContents {
  ModelFileHeader header;
  std::vector<float> weights;
};

// Written to a temporary file next to path, synced and renamed, so path is never half-written.
Status write_model_file(const std::string& path, const ModelFileHeader& header, const float* weights,
                        std::size_t weight_count);

// Errors are one line naming the file and the fault: wrong magic, unsupported version, truncated, corrupted.
Result<ModelFileContents> read_model_file(const std::string& path);

}  // namespace psgrad
