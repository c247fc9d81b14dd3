// A value or a one-line error message: how fallible operations at boundaries report failure.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace psgrad {

struct Error {
  std::string message;
};

template <class T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}
  Result(Error error) : state_(std::move(error)) {}

  explicit operator bool() const { return std::holds_alternative<T>(state_); }
  bool ok() const { return std::holds_alternative<T>(state_); }

  T& value() & { return checked(); }
  const T& value() const& { return const_cast<Result*>(this)->checked(); }
  T&& value() && { return std::move(checked()); }
  T* operator->() { return &checked(); }
  const T* operator->() const { return &const_cast<Result*>(this)->checked(); }
  T& operator*() & { return checked(); }
  const T& operator*() const& { return const_cast<Result*>(this)->checked(); }

  const std::string& error() const {
    if (ok()) throw std::logic_error("Result::error() called on a value");
    return std::get<Error>(state_).message;
  }

 private:
  T& checked() {
    if (!ok()) throw std::logic_error("Result::value() called on an error: " + error());
    return std::get<T>(state_);
  }
  std::variant<T, Error> state_;
};

// For operations that return nothing but may fail.
struct Done {};
using Status = Result<Done>;
inline Status success() { return Done{}; }

}  // namespace psgrad
