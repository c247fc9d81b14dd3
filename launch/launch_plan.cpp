#include "launch/launch_plan.hpp"

#include <arpa/inet.h>

#include <fmt/format.h>

#include "launch/shell_quote.hpp"

namespace psgrad {

namespace {

std::string without_user(const std::string& host) {
  const auto at = host.rfind('@');
  return at == std::string::npos ? host : host.substr(at + 1);
}

bool is_ipv4_address(const std::string& host) {
  in_addr address{};
  return inet_pton(AF_INET, host.c_str(), &address) == 1;
}

}  // namespace

std::string Role::label() const {
  switch (kind) {
    case RoleKind::server: return "server";
    case RoleKind::shard: return fmt::format("shard {}", index);
    case RoleKind::table_shard: return fmt::format("table shard {}", index);
    case RoleKind::worker: return "worker";
  }
  return "role";
}

bool is_local_host(const std::string& host) {
  const auto name = without_user(host);
  return name == "localhost" || name.rfind("127.", 0) == 0 || name == "::1" || name == "[::1]";
}

Result<LaunchPlan> plan_launch(const std::vector<HostLine>& hosts, const std::string& hostfile_name, bool tables) {
  if (hosts.empty()) return Error{fmt::format("{}: no hosts", hostfile_name)};
  LaunchPlan plan;
  plan.tables = tables;
  // The tables live only in table shard processes, numbered from 0; dense runs' server holds shard 0.
  plan.servers = tables ? 0 : 1;
  const auto shard_kind = tables ? RoleKind::table_shard : RoleKind::shard;
  const auto& first = hosts.front();
  plan.roles.push_back(Role{RoleKind::server, 0, first.host, is_local_host(first.host)});
  for (const auto& host : hosts)
    for (int k = 0; k < host.shards; ++k)
      plan.roles.push_back(Role{shard_kind, plan.servers++, host.host, is_local_host(host.host)});
  if (tables && plan.servers == 0)
    return Error{fmt::format("{}: the run's model has embedding tables, which live in table shard processes: give "
                             "a host shards=K (K >= 1)",
                             hostfile_name)};
  for (const auto& host : hosts)
    for (int k = 0; k < host.workers; ++k)
      plan.roles.push_back(Role{RoleKind::worker, plan.workers++, host.host, is_local_host(host.host)});
  for (const auto& role : plan.roles) plan.any_remote = plan.any_remote || !role.local;

  const auto server = without_user(first.host);
  if (!plan.any_remote) {
    plan.bind = "127.0.0.1";
    plan.server_address = "127.0.0.1";
  } else if (is_local_host(first.host)) {
    for (const auto& host : hosts)
      if (!is_local_host(host.host))
        return Error{fmt::format("{}:{}: the server's host {} cannot be reached from {} (line {}); name the first "
                                 "host by an address every host can reach",
                                 hostfile_name, first.line, first.host, host.host, host.line)};
  } else {
    // An address is listened on as it is; a name may resolve to a loopback address on its own host
    // (Debian maps the host name to 127.0.1.1), so the server listens on every address instead.
    plan.bind = is_ipv4_address(server) ? server : "0.0.0.0";
    plan.server_address = server;
  }
  return plan;
}

std::vector<std::string> role_arguments(const Role& role, const LaunchPlan& plan, const LaunchSettings& settings,
                                        std::uint16_t port) {
  std::vector<std::string> args;
  const auto connect = fmt::format("{}:{}", plan.server_address, port);
  switch (role.kind) {
    case RoleKind::server:
      // Without a config a resumed run continues with the config inside its checkpoint.
      args = {"serve"};
      if (!settings.config.empty()) args.insert(args.end(), {"--config", settings.config});
      args.insert(args.end(), {"--bind", plan.bind, "--port", "0"});
      if (!settings.server_port_file.empty()) args.insert(args.end(), {"--port-file", settings.server_port_file});
      args.insert(args.end(), {"--set", fmt::format("cluster.num_workers={}", plan.workers)});
      if (plan.tables) {
        args.insert(args.end(), {"--set", fmt::format("cluster.servers={}", plan.servers)});
      } else if (plan.servers > 1) {
        args.insert(args.end(), {"--set", fmt::format("cluster.servers={}", plan.servers), "--remote-shards"});
      }
      for (const auto& override_text : settings.overrides) args.insert(args.end(), {"--set", override_text});
      if (!settings.data.empty()) args.insert(args.end(), {"--data-dir", settings.data});
      if (settings.no_metrics) args.push_back("--no-metrics");
      if (!settings.resume.empty()) args.insert(args.end(), {"--resume", settings.resume});
      if (!settings.trace.empty()) args.insert(args.end(), {"--trace", settings.trace});
      if (!settings.metrics.empty()) args.insert(args.end(), {"--metrics", settings.metrics});
      if (!settings.save.empty()) args.insert(args.end(), {"--save", settings.save});
      if (!settings.tensorboard.empty()) args.insert(args.end(), {"--tensorboard", settings.tensorboard});
      if (!settings.resume_command.empty()) args.insert(args.end(), {"--resume-command", settings.resume_command});
      break;
    case RoleKind::shard:
      args = {"shard", "--index", std::to_string(role.index), "--connect", connect};
      break;
    case RoleKind::table_shard:
      args = {"shard", "--tables", std::to_string(role.index), "--connect", connect};
      break;
    case RoleKind::worker:
      args = {"work", "--connect", connect};
      if (!settings.data.empty()) args.insert(args.end(), {"--data-dir", settings.data});
      break;
  }
  args.push_back("--launched");
  return args;
}

std::vector<std::string> role_command(const Role& role, const LaunchPlan& plan, const LaunchSettings& settings,
                                      std::uint16_t port) {
  auto args = role_arguments(role, plan, settings, port);
  if (role.local) {
    args.insert(args.begin(), settings.psgrad);
    return args;
  }
  // The remote shell runs: cd DIR && [PSGRAD_DATA=...] exec PSGRAD ARGS...
  std::string remote = "cd " + shell_quoted(settings.directory) + " && ";
  if (!settings.data_env.empty()) remote += "PSGRAD_DATA=" + shell_quoted(settings.data_env) + " ";
  args.insert(args.begin(), settings.psgrad);
  remote += "exec " + shell_command(args);
  // ssh takes the first value it gets for an option, so the user's options come before our defaults.
  std::vector<std::string> command = {"ssh", "-T"};
  for (const auto& option : settings.ssh_options) command.insert(command.end(), {"-o", option});
  command.insert(command.end(), {"-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5",
                                 "-o", "ServerAliveCountMax=3", "--", role.host, remote});
  return command;
}

}  // namespace psgrad
