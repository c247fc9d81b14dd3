// `psgrad launch --slurm`: this Slurm task's role, served or worked in this very process.
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "apps/launch_command.hpp"
#include "apps/error_exit.hpp"
#include "apps/serve_command.hpp"
#include "apps/shard_command.hpp"
#include "apps/work_command.hpp"
#include "launch/shell_quote.hpp"
#include "launch/slurm_roles.hpp"

namespace psgrad {

namespace {

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// `scontrol show hostnames LIST`: Slurm's own expansion of node lists like "node[01-04,07]".
Result<std::vector<std::string>> expand_node_list(const std::string& list) {
  if (list.empty()) return Error{"SLURM_NODELIST is not set: run `psgrad launch --slurm` under srun"};
  const auto command = "scontrol show hostnames " + shell_quoted(list) + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return Error{"cannot run scontrol to expand SLURM_NODELIST"};
  std::string output;
  char buffer[4096];
  while (auto n = std::fread(buffer, 1, sizeof buffer, pipe.get())) output.append(buffer, n);
  const int status = pclose(pipe.release());
  if (status != 0)
    return Error{fmt::format("`scontrol show hostnames {}` failed{}", list,
                             output.empty() ? "" : ": " + parse_hostnames(output).front())};
  return parse_hostnames(output);
}

}  // namespace

int run_slurm_task(const LaunchOptions& options, int table_shards) {
  const ErrorExit error{"psgrad launch --slurm"};
  auto nodes = expand_node_list(variable("SLURM_NODELIST"));
  if (!nodes) return error.refused(nodes.error());
  auto task = slurm_task(variable("SLURM_PROCID"), variable("SLURM_NTASKS"), variable("SLURM_JOB_ID"), *nodes,
                         static_cast<std::uint16_t>(options.port), table_shards);
  if (!task) return error.refused(task.error());
  if (options.dry_run) {
    if (task->serves)
      fmt::print("{}: server on {}:{} for {} workers\n", variable("SLURM_PROCID"), task->server_host, task->port,
                 task->num_workers);
    else if (task->table_shard >= 0)
      fmt::print("{}: table shard {} of {}, joining {}:{}\n", variable("SLURM_PROCID"), task->table_shard,
                 table_shards, task->server_host, task->port);
    else
      fmt::print("{}: worker {} of {}, joining {}:{}\n", variable("SLURM_PROCID"), task->worker_index,
                 task->num_workers, task->server_host, task->port);
    return 0;
  }
  // The token comes from the job's environment (srun passes it to every task), never a command line.
  const auto token = variable("PSGRAD_JOIN_TOKEN");
  if (token.empty() && task->serves)
    fmt::print(stderr, "psgrad launch --slurm: warning: PSGRAD_JOIN_TOKEN is not set, so any process that reaches "
                       "{}:{} may join; export it in the batch script\n", task->server_host, task->port);
  if (task->serves) {
    ServeOptions serve;
    serve.config_path = options.config;
    serve.overrides = options.overrides;
    serve.overrides.push_back(fmt::format("cluster.num_workers={}", task->num_workers));
    serve.bind = "0.0.0.0";
    serve.port = task->port;
    serve.token = token;
    serve.data_dir = options.data;
    serve.trace_path = options.trace;
    serve.save_model = options.save;
    serve.tensorboard_dir = options.tensorboard;
    return run_serve_command(serve);
  }
  if (task->table_shard >= 0) {
    ShardOptions shard;
    shard.table_index = task->table_shard;
    shard.connect = fmt::format("{}:{}", task->server_host, task->port);
    shard.token = token;
    shard.keep_trying = true;  // the tasks start together: the server may still be loading its data
    return run_shard_command(shard);
  }
  WorkOptions work;
  work.connect = fmt::format("{}:{}", task->server_host, task->port);
  work.token = token;
  work.data = options.data;
  work.retry = true;  // the tasks start together: the server may still be loading its data
  return run_work_command(work);
}

}  // namespace psgrad
