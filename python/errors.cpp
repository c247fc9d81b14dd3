// Makes psgrad.Error (a RuntimeError) and psgrad.InputError (an Error and a ValueError), and raises
// them for the bindings' C++ exceptions, long words cut as the command line cuts them.
#include "python/errors.hpp"

#include "io/user_text.hpp"

namespace psgrad::python {

namespace py = pybind11;

namespace {

// Kept for the translator, which runs without a module at hand; the module holds a reference too.
PyObject* error_type = nullptr;
PyObject* input_error_type = nullptr;

}  // namespace

void bind_errors(py::module_& module) {
  error_type = PyErr_NewExceptionWithDoc(
      "psgrad.Error",
      "A psgrad run, or a file it reads or writes, failed. str(error) is the one line the command line "
      "prints after \"psgrad: \".",
      PyExc_RuntimeError, nullptr);
  if (!error_type) throw py::error_already_set();
  const auto bases = py::make_tuple(py::handle(error_type), py::handle(PyExc_ValueError));
  input_error_type = PyErr_NewExceptionWithDoc(
      "psgrad.InputError",
      "psgrad refused its input before running: a config, array, checkpoint or model file. Also a "
      "ValueError; str(error) names the file, key or argument and what was expected.",
      bases.ptr(), nullptr);
  if (!input_error_type) throw py::error_already_set();
  module.add_object("Error", py::handle(error_type));
  module.add_object("InputError", py::handle(input_error_type));
  py::register_exception_translator([](std::exception_ptr raised) {
    try {
      if (raised) std::rethrow_exception(raised);
    } catch (const InputError& error) {
      PyErr_SetString(input_error_type, cut_long_words(error.what()).c_str());
    } catch (const FailedError& error) {
      PyErr_SetString(error_type, cut_long_words(error.what()).c_str());
    }
  });
}

}  // namespace psgrad::python
