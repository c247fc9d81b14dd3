// The port file's one line, written by the server through a temporary file and read back by launch.
#include "apps/port_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace psgrad {

namespace {

constexpr const char* standard_output = "-";

}  // namespace

std::string served_address_line(const ServedAddress& address) {
  return nlohmann::json{{"host", address.host}, {"port", address.port}}.dump();
}

Result<ServedAddress> parse_served_address(const std::string& line) {
  const auto parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return Error{"not a JSON object"};
  const auto host = parsed.find("host");
  const auto port = parsed.find("port");
  if (host == parsed.end() || !host->is_string()) return Error{"no \"host\" string"};
  if (port == parsed.end() || !port->is_number_unsigned() || *port == 0 || *port > 65535)
    return Error{"no \"port\" in 1..65535"};
  return ServedAddress{host->get<std::string>(), port->get<std::uint16_t>()};
}

Result<PortFile> PortFile::create(const std::string& path) {
  if (path == standard_output) return PortFile(path, "", -1);
  std::string temporary = path + ".XXXXXX";
  const int fd = mkstemp(temporary.data());
  if (fd < 0) return Error{fmt::format("cannot write beside {}: {}", path, std::strerror(errno))};
  if (std::remove(path.c_str()) != 0 && errno != ENOENT) {
    const auto reason = std::strerror(errno);
    ::close(fd);
    std::remove(temporary.c_str());
    return Error{fmt::format("cannot remove the old {}: {}", path, reason)};
  }
  return PortFile(path, std::move(temporary), fd);
}

PortFile::PortFile(PortFile&& other) noexcept
    : path_(std::move(other.path_)), temporary_(std::move(other.temporary_)), fd_(other.fd_), written_(other.written_) {
  other.path_.clear();
  other.temporary_.clear();
  other.fd_ = -1;
  other.written_ = false;
}

PortFile::~PortFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temporary_.empty()) std::remove(temporary_.c_str());
  if (written_ && path_ != standard_output) std::remove(path_.c_str());
}

Status PortFile::write(const ServedAddress& address) {
  if (written_) return Error{fmt::format("{}: written already", path_)};
  const auto line = served_address_line(address) + "\n";
  if (path_ == standard_output) {
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
    written_ = true;
    return success();
  }
  const bool complete = ::write(fd_, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  const int write_error = errno;
  ::close(fd_);
  fd_ = -1;
  if (!complete) return Error{fmt::format("cannot write {}: {}", temporary_, std::strerror(write_error))};
  if (std::rename(temporary_.c_str(), path_.c_str()) != 0)
    return Error{fmt::format("cannot rename {} to {}: {}", temporary_, path_, std::strerror(errno))};
  temporary_.clear();
  written_ = true;
  return success();
}

Result<std::optional<ServedAddress>> read_port_file(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "r"), std::fclose);
  if (!file) {
    if (errno == ENOENT) return std::optional<ServedAddress>();
    return Error{fmt::format("cannot read {}: {}", path, std::strerror(errno))};
  }
  char buffer[1024];
  const auto size = std::fread(buffer, 1, sizeof buffer, file.get());
  std::string text(buffer, size);
  auto address = parse_served_address(text.substr(0, text.find('\n')));
  if (!address) return Error{fmt::format("{}: {}", path, address.error())};
  return std::optional<ServedAddress>(std::move(address).value());
}

}  // namespace psgrad
