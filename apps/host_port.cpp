#include "apps/host_port.hpp"

#include <fmt/format.h>

#include "io/user_text.hpp"

namespace psgrad {

Result<HostPort> parse_host_port(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    return Error{fmt::format("'{}' is not HOST:PORT", echoed(text))};
  std::string host = text.substr(0, colon);
  if (host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const auto port_text = text.substr(colon + 1);
  if (port_text.find_first_not_of("0123456789") != std::string::npos || port_text.size() > 5)
    return Error{fmt::format("'{}' is not HOST:PORT: the port must be a number from 1 to 65535", echoed(text))};
  const long port = std::stol(port_text);
  if (port < 1 || port > 65535)
    return Error{fmt::format("'{}' is not HOST:PORT: the port must be a number from 1 to 65535", echoed(text))};
  return HostPort{host, static_cast<std::uint16_t>(port)};
}

}  // namespace psgrad
