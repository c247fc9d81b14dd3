// A model file read back and rebuilt, its dense arrays into a Model or, for a model with tables, into a
// SparseModel with the saved rows; refused unless what it holds fits the rebuild.
#pragma once

#include <cstddef>
#include <string>

#include "io/config.hpp"
#include "io/model_file.hpp"
#include "model/model.hpp"
#include "model/sparse_model.hpp"
#include "model/result.hpp"

namespace psgrad {

// What every saved model passes before it is rebuilt: the file reads, its stored config parses and
// names the stored architecture, and no dense weight is NaN or infinite. Errors name the file.
struct SavedFile {
  ModelFileContents contents;
  Config config;  // parsed from the stored config text
};
Result<SavedFile> read_saved_file(const std::string& path);

struct LoadedModel {
  std::string path;
  ModelFileHeader header;
  Config config;  // parsed from the stored config text
  Model model;    // built from the stored architecture, holding the stored weights
};

// Refuses (one line naming the file) a stored config that no longer parses, an architecture that
// builds a different layout than the stored one, or a weight count that does not fit it.
Result<LoadedModel> load_saved_model(const std::string& path);

// A saved model with embedding tables: its file (the rows in file.tables), config, and the model its config
// builds, holding the file's dense weights.
struct LoadedTablesModel {
  ModelFileContents file;
  Config config;
  SparseModel model;
};

// Refuses a file without tables, and one whose dense weight count, table count or row widths differ from
// the model its config builds.
Result<LoadedTablesModel> load_tables_model(const std::string& path);

// Refuses inputs of another width than the model's; data_name names them in the message.
Status check_input_width(const LoadedModel& loaded, std::size_t rows, std::size_t cols, const std::string& data_name);
// The same for examples that are not images: width features each.
Status check_input_width(const LoadedModel& loaded, std::size_t width, const std::string& data_name);

}  // namespace psgrad
