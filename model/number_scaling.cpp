#include "model/number_scaling.hpp"

#include <cmath>

namespace psgrad {

std::optional<NumberScaling> number_scaling_named(const std::string& name) {
  if (name == "as_is") return NumberScaling::as_is;
  if (name == "log1p") return NumberScaling::log1p;
  return std::nullopt;
}

const char* number_scaling_name(NumberScaling scaling) { return scaling == NumberScaling::as_is ? "as_is" : "log1p"; }

float scale_number(NumberScaling scaling, float value) {
  if (scaling == NumberScaling::as_is) return value;
  const double magnitude = std::log1p(std::abs(static_cast<double>(value)));
  return static_cast<float>(value < 0 ? -magnitude : magnitude);
}

}  // namespace psgrad
