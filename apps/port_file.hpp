// `serve --port-file`: where the server listens, as one line of JSON for programs to read
// ({"host":"127.0.0.1","port":40563}); the "listening on" line is for people.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "model/result.hpp"

namespace psgrad {

struct ServedAddress {
  std::string host;  // as the server listens: an address, or 0.0.0.0 for every one
  std::uint16_t port = 0;
};

// The line, without its newline.
std::string served_address_line(const ServedAddress& address);
// Refuses anything but an object with a string "host" and a "port" in 1..65535.
Result<ServedAddress> parse_served_address(const std::string& line);

// A path a server writes its address to once it listens. "-" stands for standard output, where a
// launch reads it over ssh.
class PortFile {
 public:
  // Makes the temporary file the address is written to now, so that a path that cannot be written is
  // refused before a run loads its data; removes a file an earlier server left at the path, whose
  // address is stale.
  static Result<PortFile> create(const std::string& path);

  PortFile(PortFile&& other) noexcept;
  PortFile& operator=(PortFile&&) = delete;
  PortFile(const PortFile&) = delete;
  PortFile& operator=(const PortFile&) = delete;
  // Removes the file: once the server stops, nobody listens at its address.
  ~PortFile();

  // Writes the line into the temporary file and renames that over the path, so a reader finds the
  // whole line or no file at all. Once only.
  Status write(const ServedAddress& address);

 private:
  PortFile(std::string path, std::string temporary, int fd)
      : path_(std::move(path)), temporary_(std::move(temporary)), fd_(fd) {}

  std::string path_;
  std::string temporary_;  // empty once renamed, and for standard output
  int fd_ = -1;
  bool written_ = false;
};

// The address a server wrote to `path`; nothing while there is no file yet.
Result<std::optional<ServedAddress>> read_port_file(const std::string& path);

}  // namespace psgrad
