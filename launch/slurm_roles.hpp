// Which role a Slurm task plays: task 0 serves on the first node of the allocation; for a model with K
// table shards, tasks 1..K hold them; the others work.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.hpp"

namespace psgrad {

// The host names `scontrol show hostnames LIST` prints, one a line.
std::vector<std::string> parse_hostnames(std::string_view scontrol_output);

struct SlurmTask {
  bool serves = false;      // SLURM_PROCID 0
  int table_shard = -1;     // SLURM_PROCID 1..K with K table shards: SLURM_PROCID - 1
  int worker_index = -1;    // the others: SLURM_PROCID - 1 - K
  int num_workers = 0;      // SLURM_NTASKS - 1 - K
  std::string server_host;  // the first node of SLURM_NODELIST
  std::uint16_t port = 0;
};

// From the task's variables (unset ones as empty strings) and the expanded node list. The port is
// `port` when given (non-zero), else derived from SLURM_JOB_ID so that every task of a job agrees
// without talking: 20000 + job id mod 20000. Errors name the variable and what was expected.
Result<SlurmTask> slurm_task(const std::string& procid, const std::string& ntasks, const std::string& job_id,
                             const std::vector<std::string>& nodes, std::uint16_t port, int table_shards = 0);

}  // namespace psgrad
