// Prediction with the GIL released, model files through the command line's reader and writer, and the
// weights as NumPy arrays named as in the model file's layout.
#include "python/model_binding.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "apps/model_saving.hpp"
#include "python/array_data.hpp"
#include "python/errors.hpp"

namespace psgrad::python {

namespace py = pybind11;

std::vector<Prediction> PythonModel::predictions(const py::array& x) {
  auto rows = feature_rows(x, "X", loaded_.config.data.scale, RowAlignment::aligned);
  if (!rows) throw InputError(rows.error());
  const auto fits = rows->image_rows ? check_input_width(loaded_, rows->image_rows, rows->image_cols, "X")
                                     : check_input_width(loaded_, rows->width, "X");
  if (!fits) throw InputError(fits.error());
  const auto batch_size = static_cast<std::size_t>(loaded_.config.evaluation.batch_size);
  py::gil_scoped_release released;
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = predict(loaded_.model, rows->data, rows->count, batch_size);
  if (!found) throw InputError("X: " + found.error());
  return std::move(found).value();
}

py::array_t<std::int64_t> PythonModel::predict_labels(const py::array& x) {
  const auto found = predictions(x);
  py::array_t<std::int64_t> labels(static_cast<py::ssize_t>(found.size()));
  auto out = labels.mutable_unchecked<1>();
  for (std::size_t i = 0; i < found.size(); ++i) out(static_cast<py::ssize_t>(i)) = static_cast<std::int64_t>(found[i].label);
  return labels;
}

py::array_t<float> PythonModel::predict_probabilities(const py::array& x) {
  const auto found = predictions(x);
  const auto classes = static_cast<py::ssize_t>(loaded_.header.num_classes);
  py::array_t<float> probabilities({static_cast<py::ssize_t>(found.size()), classes});
  auto out = probabilities.mutable_unchecked<2>();
  for (std::size_t i = 0; i < found.size(); ++i)
    for (py::ssize_t c = 0; c < classes; ++c) out(static_cast<py::ssize_t>(i), c) = found[i].probabilities[c];
  return probabilities;
}

void PythonModel::save(const std::filesystem::path& path) const {
  const auto& weights = loaded_.model.weights();
  auto saved = save_model(path.string(), loaded_.header, loaded_.model.layout(), weights.data(), weights.size());
  if (!saved) throw FailedError(saved.error());
}

py::dict PythonModel::weights() const {
  py::dict arrays;
  const float* values = loaded_.model.weights().data();
  for (const auto& array : loaded_.model.layout().arrays()) {
    py::array_t<float> copy({static_cast<py::ssize_t>(array.rows), static_cast<py::ssize_t>(array.cols)});
    std::copy_n(values + array.offset, array.size(), copy.mutable_data());
    arrays[py::str(array.layer + "." + array.name)] = copy;
  }
  return arrays;
}

void bind_model(py::module_& module) {
  py::class_<PythonModel, std::shared_ptr<PythonModel>> model(module, "Model", R"(A trained model: what psgrad.train returns as result.model and psgrad.load reads back.

Its files are the command line's model files: Model.save writes what `psgrad train --save` writes, and
`psgrad eval`, `psgrad predict` and psgrad.load read either.)");
  model.attr("__module__") = "psgrad";
  model
      .def("predict", &PythonModel::predict_labels, py::arg("X"),
           R"(The predicted class of each example: an int64 array of shape (n,).

X: float32 features or uint8 pixels (divided by 255, as IDX images are), shaped (n, features) or
(n, rows, cols) with the width the model was trained on. Float32 features are multiplied by the
config's data.scale, as `psgrad predict` does with .npy files.)")
      .def("predict_proba", &PythonModel::predict_probabilities, py::arg("X"),
           "Each example's class probabilities: a float32 array of shape (n, classes). X as for predict.")
      .def("save", &PythonModel::save, py::arg("path"),
           "Writes the model file (atomically): for psgrad.load, `psgrad eval --model` and `psgrad predict --model`.")
      .def("weights", &PythonModel::weights,
           "The weights as a dict of float32 arrays named as in the model file's layout (\"relu1.W\", \"relu1.b\", ...); copies.")
      .def_property_readonly("architecture", [](const PythonModel& self) { return self.loaded().header.architecture; },
                             "The registered architecture, e.g. \"relu_relu_softmax.v1\".")
      .def_property_readonly("input_width", [](const PythonModel& self) { return self.loaded().header.input_width; },
                             "Features per example.")
      .def_property_readonly("num_classes", [](const PythonModel& self) { return self.loaded().header.num_classes; },
                             "Classes predicted, 0 to num_classes - 1.")
      .def_property_readonly(
          "image_shape",
          [](const PythonModel& self) -> py::object {
            const auto& header = self.loaded().header;
            if (!header.image_rows) return py::none();
            return py::make_tuple(header.image_rows, header.image_cols);
          },
          "(rows, cols) of the images the model was trained on, or None.")
      .def_property_readonly("version", [](const PythonModel& self) { return self.loaded().header.weights_version; },
                             "Optimizer steps behind the weights.")
      .def_property_readonly("config", [](const PythonModel& self) { return self.loaded().header.config_text; },
                             "The resolved config the model was trained with (TOML, every default written out).")
      .def("__repr__", [](const PythonModel& self) {
        const auto& header = self.loaded().header;
        return fmt::format("<psgrad.Model {}: {} inputs, {} classes, version {}>", header.architecture,
                           header.input_width, header.num_classes, header.weights_version);
      });
  module.def(
      "load",
      [](const std::filesystem::path& path) {
        auto loaded = load_saved_model(path.string());
        if (!loaded) throw InputError(loaded.error());
        return std::make_shared<PythonModel>(std::move(loaded).value());
      },
      py::arg("path"), "Reads a model file written by Model.save or `psgrad train --save`.");
}

}  // namespace psgrad::python
