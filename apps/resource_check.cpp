// Estimates a process's memory from its config and compares it with the machine's.
#include "apps/resource_check.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "io/machine_memory.hpp"

namespace psgrad {

ProcessRole process_role(const RunOptions& options) {
  if (options.worker_processes_here) return ProcessRole::server_and_worker_processes;
  return options.command == "serve" ? ProcessRole::server : ProcessRole::whole_run;
}

Status check_fits_machine(const Config& config, const DataShape& data, ProcessRole role) {
  const auto memory = memory_limit();
  if (!memory) return success();  // nothing to compare with; the run finds out the hard way
  return check_memory(config, data, role, memory->bytes, memory->holder);
}

Status check_threads_start(const Config& config) {
  // CAF's network, clock and private threads, and psgrad's own (signals, step helper), beside the scheduler's.
  constexpr std::size_t other_threads = 8;
  const std::size_t scheduler = config.cluster.threads != 0 ? config.cluster.threads
                                                            : std::max(1u, std::thread::hardware_concurrency());
  const std::size_t wanted = scheduler + other_threads;
  std::mutex mutex;
  std::condition_variable released;
  bool go = false;
  std::vector<std::thread> started;
  started.reserve(wanted);
  std::string refused;
  for (std::size_t i = 0; i < wanted; ++i) {
    try {
      started.emplace_back([&] {
        std::unique_lock<std::mutex> lock(mutex);
        released.wait(lock, [&] { return go; });
      });
    } catch (const std::system_error& error) {
      refused = error.what();
      break;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    go = true;
  }
  released.notify_all();
  for (auto& thread : started) thread.join();
  if (refused.empty()) return success();
  return Error{fmt::format("{}: cluster.threads = {}: this machine let psgrad start only {} of the {} threads the run "
                           "needs ({}); lower cluster.threads",
                           config.source, config.cluster.threads, started.size(), wanted, refused)};
}

Status check_fits_machine(const Config& config, const std::string& data_dir, ProcessRole role) {
  auto peeked = peek_data_shape(data_source(config.data), data_dir);
  const auto shape = peeked ? *peeked : DataShape{};
  if (auto fits = check_fits_machine(config, shape, role); !fits) return fits;
  // A server also refuses a config that no worker could run on a machine like its own: otherwise its
  // workers would fail one by one after joining while it waits for them.
  if (role == ProcessRole::server) return check_fits_machine(config, shape, ProcessRole::worker);
  return success();
}

}  // namespace psgrad
