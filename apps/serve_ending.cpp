#include "apps/serve_ending.hpp"

#include <csignal>
#include <cstdio>
#include <unistd.h>

#include <fmt/format.h>

#include "apps/signal_watch.hpp"

namespace psgrad {

void write_port_file_or_stop(std::optional<PortFile>& port_file, const ServedAddress& address,
                             const std::string& command) {
  if (!port_file) return;
  if (auto written = port_file->write(address); !written) {
    fmt::print(stderr, "{}: --port-file: {}\n", command, written.error());
    std::fflush(stderr);
    ::kill(::getpid(), SIGTERM);
  }
}

int serve_exit_code(int run_code, int signal_received) {
  if (run_code != 0 && signal_received != 0) return exit_code_for_signal(signal_received);
  return run_code;
}

}  // namespace psgrad
