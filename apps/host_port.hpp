// Parses HOST:PORT (and [IPv6]:PORT) command-line values.
#pragma once

#include <cstdint>
#include <string>

#include "model/result.hpp"

namespace psgrad {

struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};

Result<HostPort> parse_host_port(const std::string& text);

}  // namespace psgrad
