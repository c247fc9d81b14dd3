// psgrad._core for models with embedding tables: training from named columns, and a trained model's
// predictions (python/psgrad/__init__.py writes the columns as JSON Lines files and wraps both).
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "apps/tables_scoring.hpp"

namespace psgrad::python {

class PythonTablesModel {
 public:
  explicit PythonTablesModel(LoadedTablesModel loaded) : loaded_(std::move(loaded)) {}

  // Each example's class probabilities (examples x classes) for the examples of a file of the model's
  // columns, read as `psgrad predict` reads it.
  pybind11::array_t<float> predict_file(const std::string& path);
  void save(const std::filesystem::path& path) const;
  const LoadedTablesModel& loaded() const { return loaded_; }

 private:
  LoadedTablesModel loaded_;
  std::mutex mutex_;  // prediction runs in the model's own buffers, with the GIL released
};

void bind_columns(pybind11::module_& module);

}  // namespace psgrad::python
