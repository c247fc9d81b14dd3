#include "launch/slurm_roles.hpp"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "io/user_text.hpp"

namespace psgrad {

namespace {

Result<long long> slurm_number(const std::string& name, const std::string& value) {
  if (value.empty()) return Error{fmt::format("{} is not set: run `psgrad launch --slurm` under srun", name)};
  long long number = -1;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc{} || end != value.data() + value.size() || number < 0)
    return Error{fmt::format("{}={} is not a whole number", name, echoed(value))};
  return number;
}

}  // namespace

std::vector<std::string> parse_hostnames(std::string_view output) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start < output.size()) {
    auto end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    auto line = output.substr(start, end - start);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
    if (!line.empty()) names.emplace_back(line);
    start = end + 1;
  }
  return names;
}

Result<SlurmTask> slurm_task(const std::string& procid, const std::string& ntasks, const std::string& job_id,
                             const std::vector<std::string>& nodes, std::uint16_t port, int table_shards) {
  auto task = slurm_number("SLURM_PROCID", procid);
  if (!task) return Error{task.error()};
  auto tasks = slurm_number("SLURM_NTASKS", ntasks);
  if (!tasks) return Error{tasks.error()};
  if (*tasks < 2 + table_shards)
    return Error{table_shards == 0
                     ? fmt::format("SLURM_NTASKS={}: a run needs 2 tasks or more (a server and a worker)", *tasks)
                     : fmt::format("SLURM_NTASKS={}: a run with {} table shards needs {} tasks or more (a server, the "
                                   "table shards and a worker)",
                                   *tasks, table_shards, 2 + table_shards)};
  if (*tasks > 1025) return Error{fmt::format("SLURM_NTASKS={}: at most 1024 workers and the server", *tasks)};
  if (*task >= *tasks) return Error{fmt::format("SLURM_PROCID={} is not below SLURM_NTASKS={}", *task, *tasks)};
  if (nodes.empty()) return Error{"SLURM_NODELIST expands to no host names"};
  SlurmTask result;
  result.serves = *task == 0;
  if (!result.serves && *task <= table_shards) result.table_shard = static_cast<int>(*task - 1);
  if (!result.serves && result.table_shard < 0) result.worker_index = static_cast<int>(*task - 1 - table_shards);
  result.num_workers = static_cast<int>(*tasks - 1 - table_shards);
  result.server_host = nodes.front();
  if (port != 0) {
    result.port = port;
  } else {
    auto job = slurm_number("SLURM_JOB_ID", job_id);
    if (!job) return Error{job.error() + " (or give --port)"};
    result.port = static_cast<std::uint16_t>(20000 + *job % 20000);
  }
  return result;
}

}  // namespace psgrad
