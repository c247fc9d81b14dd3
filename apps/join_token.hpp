// A fresh join token for one launched run: 128 random bits from the kernel, as 32 hex digits.
#pragma once

#include <string>

#include "model/result.hpp"

namespace psgrad {

Result<std::string> new_join_token();

}  // namespace psgrad
