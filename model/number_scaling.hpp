// How hashembed_mlp.v1 feeds a numeric column to its dense layers: as it is, or log1p for counts.
#pragma once

#include <optional>
#include <string>

namespace psgrad {

enum class NumberScaling { as_is, log1p };

// "as_is" or "log1p", as settings spell them; nothing for any other text.
std::optional<NumberScaling> number_scaling_named(const std::string& name);
const char* number_scaling_name(NumberScaling scaling);

// as_is: the value. log1p: sign(value) * log(1 + |value|), computed in double and stored as float. For
// counts (value >= 0) that is log1p itself, as click models take Criteo's counts; keeping the sign makes
// the few negative values such columns hold (Criteo's I2 goes down to -3) finite instead of NaN.
float scale_number(NumberScaling scaling, float value);

}  // namespace psgrad
