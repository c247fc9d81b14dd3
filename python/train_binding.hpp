// psgrad._core.train: a config and NumPy arrays in; a run of every actor in this process; its
// records, summary and model out.
#pragma once

#include <pybind11/pybind11.h>

namespace psgrad::python {

void bind_training(pybind11::module_& module);

}  // namespace psgrad::python
