// `psgrad launch`: one command starts a run's server, shards and workers on the hosts of a hostfile
// (over ssh, or as local processes), or plays this task's role inside a Slurm allocation.
#pragma once

#include <string>
#include <vector>

#include "apps/command.hpp"

namespace psgrad {

struct LaunchOptions {
  std::string hostfile;
  std::string config;
  std::vector<std::string> overrides;
  std::vector<std::string> ssh_options;
  std::string data;
  std::string remote_psgrad;  // the binary's path on the other hosts; default: this binary's
  bool slurm = false;
  int port = 0;  // --slurm: the server's port; 0 derives it from SLURM_JOB_ID
  bool dry_run = false;
  bool no_metrics = false;  // the server writes no metrics file
  std::string resume;  // a checkpoint the server continues from
  std::string trace, save, tensorboard;  // passed to serve: a Chrome trace, the model, TensorBoard events
  std::string metrics;                   // passed to serve: its metrics file (default: runs/ on the first host)
};

Command add_launch_command(CLI::App& app);
int run_launch_command(const LaunchOptions& options);

// --slurm, in slurm_launch.cpp.
int run_slurm_task(const LaunchOptions& options, int table_shards);

}  // namespace psgrad
