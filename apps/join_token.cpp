#include "apps/join_token.hpp"

#include <array>
#include <sys/random.h>

#include <fmt/format.h>

namespace psgrad {

Result<std::string> new_join_token() {
  std::array<unsigned char, 16> bytes{};
  if (getrandom(bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
    return Error{"cannot draw random bytes for a join token"};
  std::string token;
  for (auto byte : bytes) token += fmt::format("{:02x}", byte);
  return token;
}

}  // namespace psgrad
