// The saved-model file (model.psgrad): magic, format version, stored config and layout, raw weights;
// for a model with embedding tables, the columns it reads, its class names and each table's trained rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/data_columns.hpp"
#include "model/result.hpp"
#include "model/sparse_rows.hpp"

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

// A model with tables is written in a layout of its own, whose header holds the weights version,
// architecture and config (and, read back, the class count); all integers little-endian:
//   "PSGRADSM" | u32 format version | u64 weights version | str architecture | str config TOML |
//   str label column | u64 max tokens | u64 columns | per column: str name, u32 kind, u64 has max id,
//   u64 max id | u64 classes | str class name... | u64 dense weight count | f32 weights... |
//   u64 tables | per table: u64 init seed, u64 width, u64 rows, u64 keys (ascending)..., f32 rows... |
//   u64 FNV-1a of every byte before it
constexpr char tables_model_file_magic[8] = {'P', 'S', 'G', 'R', 'A', 'D', 'S', 'M'};
constexpr std::uint32_t tables_model_file_format_version = 1;

struct SavedTable {
  std::uint64_t init_seed = 0;  // the seed of rows the file does not hold (EmbeddingTable's initial_row)
  SparseRows rows;              // every row training touched, in key order
};

// What a model with embedding tables holds beyond its header and dense weights.
struct ModelFileTables {
  std::string label;  // the label's column
  std::uint64_t max_tokens = 0;
  std::vector<DataColumn> columns;  // as [data.columns] declared them, in name order
  std::vector<std::string> class_names;
  std::vector<SavedTable> tables;   // one per id column, in order
};

struct ModelFileContents {
  ModelFileHeader header;
  std::vector<float> weights;  // the dense weights
  std::optional<ModelFileTables> tables;
};

// Written to a temporary file next to path, synced and renamed, so path is never half-written.
Status write_model_file(const std::string& path, const ModelFileHeader& header, const float* weights,
                        std::size_t weight_count);
// The same for either layout: with tables, the tables layout.
Status write_model_file(const std::string& path, const ModelFileContents& contents);

// Either layout. Errors are one line naming the file and the fault: wrong magic, unsupported version,
// truncated, corrupted.
Result<ModelFileContents> read_model_file(const std::string& path);

// Whether the file starts with the tables layout's magic (a file that cannot be read: false).
bool model_file_has_tables(const std::string& path);

}  // namespace psgrad
