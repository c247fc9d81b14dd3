// psgrad.Model: a trained or loaded model that predicts, saves itself and shows its weights.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "io/model_scoring.hpp"
#include "io/saved_model.hpp"

namespace psgrad::python {

class PythonModel {
 public:
  explicit PythonModel(LoadedModel loaded) : loaded_(std::move(loaded)) {}

  pybind11::array_t<std::int64_t> predict_labels(const pybind11::array& x);
  pybind11::array_t<float> predict_probabilities(const pybind11::array& x);
  void save(const std::filesystem::path& path) const;
  pybind11::dict weights() const;
  const LoadedModel& loaded() const { return loaded_; }

 private:
  std::vector<Prediction> predictions(const pybind11::array& x);

  LoadedModel loaded_;
  std::mutex mutex_;  // prediction runs in the model's own buffers, with the GIL released
};

// Registers psgrad.Model and psgrad.load.
void bind_model(pybind11::module_& module);

}  // namespace psgrad::python
