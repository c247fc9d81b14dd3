// The saved file of a model with embedding tables: config, dense weights, each table's trained rows,
// the columns it reads and its class names. A sibling of model_file.hpp with a magic of its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/data_columns.hpp"
#include "model/result.hpp"
#include "model/sparse_rows.hpp"

namespace psgrad {

// Layout, all integers little-endian, strings as a u64 byte count then the bytes:
//   "PSGRADSM" | u32 format version | u64 weights version | str architecture | str config TOML |
//   str label column | u64 max tokens | u64 columns | per column: str name, u32 kind, u64 has max id,
//   u64 max id | u64 classes | str class name... | u64 dense weight count | f32 weights... |
//   u64 tables | per table: u64 init seed, u64 width, u64 rows, u64 keys (ascending)..., f32 rows... |
//   u64 FNV-1a of every byte before it
constexpr char sparse_model_file_magic[8] = {'P', 'S', 'G', 'R', 'A', 'D', 'S', 'M'};
constexpr std::uint32_t sparse_model_file_format_version = 1;

struct SavedTable {
  std::uint64_t init_seed = 0;  // the seed of rows the file does not hold (EmbeddingTable's initial_row)
  SparseRows rows;              // every row training touched, in key order
};

struct SparseModelFile {
  std::uint64_t weights_version = 0;  // optimizer steps behind the weights
  std::string architecture;           // "hashembed_mlp.v1"
  std::string config_text;            // render_config of the run
  std::string label;                  // the label's column
  std::uint64_t max_tokens = 0;
  std::vector<DataColumn> columns;    // as [data.columns] declared them, in name order
  std::vector<std::string> class_names;
  std::vector<float> dense_weights;
  std::vector<SavedTable> tables;     // one per id column, in order
};

// Whether the file starts with the sparse model file's magic (a file that cannot be read: false).
bool is_sparse_model_file(const std::string& path);

// Written to a temporary file next to path, synced and renamed, so path is never half-written.
Status write_sparse_model_file(const std::string& path, const SparseModelFile& model);

// Errors are one line naming the file and the fault: wrong magic, unsupported version, truncated, corrupted.
Result<SparseModelFile> read_sparse_model_file(const std::string& path);

}  // namespace psgrad
