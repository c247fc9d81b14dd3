// A model file read back and rebuilt into a Model, refused unless its stored layout matches the rebuild.
#pragma once

#include <cstddef>
#include <string>

#include "io/config.hpp"
#include "io/model_file.hpp"
#include "model/model.hpp"
#include "model/result.hpp"

namespace psgrad {

struct LoadedModel {
  std::string path;
  ModelFileHeader header;
  Config config;  // parsed from the stored config text
  Model model;    // built from the stored architecture, holding the stored weights
};

// Refuses (one line naming the file) a stored config that no longer parses, an architecture that
// builds a different layout than the stored one, or a weight count that does not fit it.
Result<LoadedModel> load_saved_model(const std::string& path);

// Refuses inputs of another width than the model's; data_name names them in the message.
Status check_input_width(const LoadedModel& loaded, std::size_t rows, std::size_t cols, const std::string& data_name);
// The same for examples that are not images: width features each.
Status check_input_width(const LoadedModel& loaded, std::size_t width, const std::string& data_name);

}  // namespace psgrad
