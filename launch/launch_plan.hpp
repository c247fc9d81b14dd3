// The roles of a launched run (server, shards, workers), where each runs, and the command that starts it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "launch/hostfile.hpp"
#include "model/result.hpp"

namespace psgrad {

// A table shard holds a part of a sparse run's embedding tables (`psgrad shard --tables`).
enum class RoleKind { server, shard, table_shard, worker };

struct Role {
  RoleKind kind = RoleKind::worker;
  int index = 0;     // shard 1..K-1, table shard 0..K-1, worker 0..N-1 in hostfile order (the server's is 0)
  std::string host;  // as the hostfile names it
  bool local = false;  // started as a child process, not over ssh
  // "server", "shard 1", "table shard 0", "worker": the server numbers workers as they join, so until a worker has
  // joined (joined_worker.hpp) no number would be the server's.
  std::string label() const;
};

struct LaunchPlan {
  std::vector<Role> roles;  // the server first, then shards, then workers
  int workers = 0;
  // cluster.servers: the server's shard and one per shard process; with tables, one per table shard
  // process (the server holds none of the tables).
  int servers = 1;
  bool tables = false;        // a run with embedding tables: shards= lines are table shard processes
  std::string bind;           // what the server listens on
  std::string server_address;  // what the others connect to (with the port the server reports)
  bool any_remote = false;
};

// localhost, 127.x.y.z and ::1 start as local processes.
bool is_local_host(const std::string& host);

// Errors: a server named localhost while other hosts are remote cannot be reached by them; a run with
// embedding tables (`tables`) without a table shard.
Result<LaunchPlan> plan_launch(const std::vector<HostLine>& hosts, const std::string& hostfile_name,
                               bool tables = false);

// What every role's command needs to know besides its role.
struct LaunchSettings {
  std::string psgrad;       // the binary, by its absolute path (the same path on every host)
  std::string directory;    // where remote roles run: the launch's working directory
  std::string config;       // the config's absolute path, read by the server only
  std::vector<std::string> overrides;  // --set k=v, for the server
  std::string data;         // --data for workers and --data-dir for the server, when given
  std::string data_env;     // $PSGRAD_DATA to pass on to remote roles, when set
  std::vector<std::string> ssh_options;  // extra `-o OPTION` for ssh
  bool no_metrics = false;  // the server writes no metrics file
  std::string resume;       // a checkpoint the server continues from, by its absolute path
  std::string resume_command;  // how the whole run is started again, for the server's hint when interrupted
  // The server's outputs, by their absolute paths (on the first host); empty: not written.
  std::string trace;        // serve --trace
  std::string metrics;      // serve --metrics (empty: the server's default, runs/)
  std::string save;         // serve --save
  std::string tensorboard;  // serve --tensorboard
  // Where the server writes its address once it listens (serve --port-file; "-": its standard output);
  // empty: nowhere.
  std::string server_port_file;
};

// The psgrad arguments of a role (without the binary). `port` is the server's, once it listens. Every
// role reads the join token from its standard input (--launched): it never appears here.
std::vector<std::string> role_arguments(const Role& role, const LaunchPlan& plan, const LaunchSettings& settings,
                                        std::uint16_t port);

// The whole command: the binary and its arguments for a local role; ssh with BatchMode and the remote
// shell command for others.
std::vector<std::string> role_command(const Role& role, const LaunchPlan& plan, const LaunchSettings& settings,
                                      std::uint16_t port);

}  // namespace psgrad
