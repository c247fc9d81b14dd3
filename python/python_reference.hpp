// A Python object kept alive by C++ code on any thread: whichever thread lets go of it last takes the GIL.
#pragma once

#include <memory>
#include <utility>

#include <pybind11/pybind11.h>

namespace psgrad::python {

class PythonReference {
 public:
  // Call with the GIL held.
  explicit PythonReference(pybind11::object object) : object_(std::move(object)) {}
  PythonReference(const PythonReference&) = delete;
  PythonReference& operator=(const PythonReference&) = delete;
  ~PythonReference() {
    pybind11::gil_scoped_acquire gil;
    object_ = pybind11::object();
  }

 private:
  pybind11::object object_;
};

// Call with the GIL held.
inline std::shared_ptr<const void> held_by_python(pybind11::object object) {
  return std::make_shared<PythonReference>(std::move(object));
}

}  // namespace psgrad::python
