// psgrad's one-line errors as Python exceptions: psgrad.Error for a run or file that failed,
// psgrad.InputError (also a ValueError) for input refused before anything ran.
#pragma once

#include <stdexcept>
#include <string>

#include <pybind11/pybind11.h>

namespace psgrad::python {

// Thrown in the bindings, turned into psgrad.Error with the message as it is.
struct FailedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Turned into psgrad.InputError: a config, data, checkpoint or model file refused.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Adds Error and InputError to the module and translates the two C++ types into them.
void bind_errors(pybind11::module_& module);

}  // namespace psgrad::python
