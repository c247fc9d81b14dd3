// The compiled part of the psgrad package: errors, training, models (python/psgrad/__init__.py wraps it).
#include <pybind11/pybind11.h>

#include "python/columns_binding.hpp"
#include "python/errors.hpp"
#include "python/model_binding.hpp"
#include "python/train_binding.hpp"

PYBIND11_MODULE(_core, module) {
  module.doc() = "psgrad's C++ core in this process; use the psgrad package, which wraps it.";
  psgrad::python::bind_errors(module);
  psgrad::python::bind_model(module);
  psgrad::python::bind_training(module);
  psgrad::python::bind_columns(module);
  // The command line of the same build, for the roles that run as processes of their own.
  module.attr("command_line") = PSGRAD_COMMAND_LINE;
}
