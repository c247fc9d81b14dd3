// Starts the workers of `train --processes` as children of this binary, and collects how they ended.
#include "apps/local_workers.hpp"

#include <csignal>
#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "apps/connect_options.hpp"

namespace psgrad {

namespace {

// How long a child stopped by SIGTERM may take to end: a worker or shard process exits at once.
constexpr std::chrono::seconds kStopGrace{5};

}  // namespace

ChildSpec local_child_spec(std::vector<std::string> command, const std::string& token) {
  ChildSpec spec;
  spec.command = std::move(command);
  spec.executable = "/proc/self/exe";
  // The token goes in the environment, which only this user can read, not on the command line,
  // which every local user can (ps).
  spec.environment = {std::string(join_token_variable) + "=" + token};
  // They print where the server does.
  spec.streams = ChildStreams::inherited;
  // Their own process group: Ctrl-C at the terminal reaches only the server, which stops them
  // cleanly once it has saved the run (they exit 0).
  spec.own_process_group = true;
  // The server blocks SIGINT and SIGTERM for its signal watch: a child inheriting that mask would
  // ignore `kill <worker pid>`.
  spec.default_signals = true;
  return spec;
}

std::vector<ChildProcess> start_local_workers(std::size_t count, std::uint16_t port, const std::string& data_dir,
                                              const std::string& token) {
  std::vector<std::string> command = {"psgrad", "work", "--connect", fmt::format("127.0.0.1:{}", port), "--quiet"};
  if (!data_dir.empty()) command.insert(command.end(), {"--data-dir", data_dir});
  const auto spec = local_child_spec(std::move(command), token);
  std::vector<ChildProcess> workers;
  for (std::size_t k = 0; k < count; ++k) {
    auto worker = ChildProcess::start(spec);
    if (worker)
      workers.push_back(std::move(*worker));
    else
      fmt::print(stderr, "psgrad: could not start worker process {}\n", k);
  }
  return workers;
}

std::string ended_before_joining(const std::vector<ChildProcess>& processes, std::size_t expected) {
  if (processes.size() < expected)
    return fmt::format("only {} of the {} processes this server was to start for the run could start, so it cannot "
                       "get every worker and table shard it waits for",
                       processes.size(), expected);
  for (const auto& process : processes)
    if (const auto how = process.how_it_ended())
      return fmt::format("a process this server started for the run (pid {}) {} before training began, so the run "
                         "cannot get every worker and table shard it waits for",
                         process.pid(), *how);
  return {};
}

int wait_for_local_workers(std::vector<ChildProcess>& workers) {
  int failures = 0;
  for (auto& worker : workers) {
    worker.wait();
    if (worker.exit_code() != 0) ++failures;
  }
  // The run dropped them and finished with the others: a success, as for any lost worker (serve_exit_code).
  if (failures)
    fmt::print(stderr, "psgrad: warning: {} worker process(es) failed; the run finished with the others\n", failures);
  return failures;
}

void stop_local_workers(std::vector<ChildProcess>& workers) {
  // SIGCONT after SIGTERM: a stopped (frozen) child takes the SIGTERM only once it runs again. One that
  // still runs after the grace period is hung: it is killed, or this process would wait on it forever.
  for (auto& worker : workers) {
    worker.signal(SIGTERM);
    worker.signal(SIGCONT);
  }
  const auto deadline = std::chrono::steady_clock::now() + kStopGrace;
  for (auto& worker : workers) {
    while (!worker.poll_exit() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!worker.poll_exit()) {
      fmt::print(stderr, "psgrad: process {} did not end within {} s of SIGTERM; killing it\n", worker.pid(),
                 std::chrono::duration_cast<std::chrono::seconds>(kStopGrace).count());
      worker.signal(SIGKILL);
    }
    worker.wait();
  }
}

}  // namespace psgrad
