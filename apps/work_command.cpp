// Connects to a server, builds this worker from the config it sends, and serves until stopped.
#include "apps/work_command.hpp"

#include <cstdio>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "caf/actor_system.hpp"
#include "caf/scoped_actor.hpp"
#include "actors/actor_config.hpp"
#include "transport/remote_client.hpp"
#include "transport/worker_process.hpp"
#include "payloads/shared_memory.hpp"
#include "apps/error_exit.hpp"
#include "apps/host_port.hpp"
#include "apps/resource_check.hpp"
#include "apps/worker_data.hpp"
#include "io/config.hpp"
#include "io/user_text.hpp"

namespace psgrad {

namespace {

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return fmt::format("{} (pid {})", name, getpid());
}

// One session with a server: hello, build, join, serve. Returns the exit code, and whether the
// server went away (the case --retry reconnects after).
struct SessionEnd {
  int code;
  bool server_lost;
};

// The flags that stand for config keys, set over the config the server sends, with the keys' checks.
std::vector<FlagSetting> work_flags(const WorkOptions& options) {
  std::vector<FlagSetting> flags;
  if (options.server_wait_ms)
    flags.push_back({"--server-wait-ms", "cluster.server_wait_ms", SettingValue{*options.server_wait_ms}});
  return flags;
}

SessionEnd serve_one_session(caf::actor_system& system, const WorkOptions& options, const HostPort& address,
                             const RetryPolicy& retry, const std::function<void(const std::string&)>& say) {
  const ErrorExit error{"psgrad work"};
  caf::scoped_actor self{system};
  auto connection = connect_to_server(self, address.host, address.port, options.token, host_name(), retry, say);
  if (!connection) return {error.failed(connection.error()), false};
  const auto& offer = connection->offer;
  auto config =
      parse_config(offer.config, fmt::format("config from server {}", options.connect), {}, work_flags(options));
  if (!config) return {error.failed(config.error()), false};
  auto data = load_worker_data(*config, options.data);
  if (!data) return {error.failed(data.error()), false};
  if (data->dense) {
    const DataShape shape{data->dense->width, data->dense->num_classes, data->dense->count, data->dev_count};
    if (auto fits = check_fits_machine(*config, shape, ProcessRole::worker); !fits)
      return {error.failed(fits.error()), false};
  }
  WorkerProcessSetup setup;
  setup.job = *config;
  setup.dense = data->dense;
  setup.tables = data->tables;
  setup.fingerprint = data->fingerprint;
  setup.description = data->description;
  setup.token = options.token;
  setup.tls = retry.tls;
  setup.name = host_name();
  setup.server = options.connect;
  setup.say = say;
  const auto end = serve_worker_process(self, *connection, setup);
  // A lost server: --retry reconnects.
  if (!end.ending) return {error.failed(end.ending.error()), end.server_lost};
  const auto& done = *end.ending;
  // The limit was this worker's to give: --retry does not wait longer.
  if (done.outcome == RunEnding::Outcome::server_silent) return {error.failed(done.failure), false};
  // The server is going away as well: --retry would only wait for a run that ended.
  if (done.outcome == RunEnding::Outcome::failed_on_server)
    return {error.failed("the run failed on the server: " + done.failure), false};
  if (done.outcome == RunEnding::Outcome::dropped)
    return {error.failed(fmt::format("the server dropped worker {}: {}", connection->offer.worker_index, done.failure)),
            false};
  say(with_shared_memory_note("training finished"));
  return {0, false};
}

}  // namespace

Command add_work_command(CLI::App& app) {
  auto options = std::make_shared<WorkOptions>();
  auto* command = app.add_subcommand("work", "Join a server with one DataWorker");
  add_connect_options(*command, *options);
  command->add_option("--data-dir", options->data,
                      "the data path on this machine (a folder of IDX or .npy files, an .npz or CSV file), or the "
                      "folder of named data sets (default $PSGRAD_DATA, else ./data)");
  command->add_flag("--retry", options->retry,
                    "keep retrying to reach the server, and reconnect when it goes away (with backoff)");
  command->add_flag("--quiet", options->quiet, "print errors only");
  command->add_option("--server-wait-ms", options->server_wait_ms,
                      "how long to wait for a server that answers nothing (stopped or stalled, its connection "
                      "open) before giving up; 0 waits forever (default the server's cluster.server_wait_ms)");
  return {command, [options] { return run_work_command(*options); }};
}

int run_work_command(const WorkOptions& given) {
  WorkOptions options = given;
  auto contact = server_contact(options);
  if (!contact) return ErrorExit{"psgrad work"}.refused(contact.error());
  // A flag the config would refuse is refused now, before the server is dialled.
  if (auto flags = work_flags(options); !flags.empty())
    if (auto checked = parse_config("", "psgrad work", {}, flags); !checked)
      return ErrorExit{""}.refused(checked.error());
  // A server that is gone closes its connection, which CAF sees at once; one that is silent (stopped,
  // stalled) keeps it open, and only ServerWait judges that, by cluster.server_wait_ms, which the server
  // sends after this system starts. CAF's own connection timeout would drop it much sooner.
  contact->network.connection_timeout = std::chrono::milliseconds(0);
  auto say = [&](const std::string& line) {
    if (!options.quiet) fmt::print(stderr, "psgrad work: {}\n", cut_long_words(line));
  };
  ActorConfig actor_config(static_cast<std::size_t>(options.threads), contact->network);
  // One message per turn: a worker computing on the network thread then lets the multiplexer write
  // its push before it computes the next gradient (DataWorker::keep_computing).
  actor_config.set("scheduler.max-throughput", std::size_t{1});
  caf::actor_system system{actor_config};
  auto retry = contact->retry;
  if (options.retry) retry.attempts = 200;
  for (;;) {
    const auto end = serve_one_session(system, options, contact->address, retry, say);
    // With --retry a lost server is waited for (it may come back with --resume).
    if (!(end.server_lost && options.retry)) return end.code;
    say("reconnecting");
    // Give the middleman a moment to forget the dead server's connection before we dial again.
    std::this_thread::sleep_for(retry.first_delay * 5);
  }
}

}  // namespace psgrad
