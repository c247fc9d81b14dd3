// Estimates a process's memory from its config and compares it with the machine's.
#include "apps/resource_check.hpp"

#include "io/machine_memory.hpp"

namespace psgrad {

ProcessRole process_role(const RunOptions& options) {
  if (options.worker_processes_here) return ProcessRole::server_and_worker_processes;
  return options.command == "serve" ? ProcessRole::server : ProcessRole::whole_run;
}

Status check_fits_machine(const Config& config, const DataShape& data, ProcessRole role) {
  const auto memory = machine_memory_bytes();
  if (!memory) return success();  // nothing to compare with; the run finds out the hard way
  return check_memory(config, data, role, *memory);
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
