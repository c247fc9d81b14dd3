// Connects to a server, builds this worker from the config it sends, and serves until stopped.
#include "apps/work_command.hpp"

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "caf/actor_system.hpp"
#include "caf/scoped_actor.hpp"
#include "caf/send.hpp"
#include "actors/actor_config.hpp"
#include "actors/data_worker.hpp"
#include "payloads/float_buffer.hpp"
#include "transport/remote_client.hpp"
#include "transport/shard_listener.hpp"
#include "payloads/shared_memory.hpp"
#include "apps/error_exit.hpp"
#include "apps/host_port.hpp"
#include "apps/resource_check.hpp"
#include "apps/sparse_data.hpp"
#include "apps/sparse_work.hpp"
#include "io/config.hpp"
#include "io/data_source.hpp"
#include "model/checkpoint_fit.hpp"
#include "model/run_features.hpp"
#include "io/user_text.hpp"

namespace psgrad {

namespace {

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return fmt::format("{} (pid {})", name, getpid());
}

Result<DataSplit> load_worker_data(const Config& config, const std::string& data_option) {
  auto source = data_source(config.data);
  if (data_option.empty()) return load_data_shared(source, default_data_dir());
  // Your own files, or a folder of IDX files, stand in for the server's data path; otherwise it holds named sets.
  if (!config.data.path.empty() || load_data_folder(data_option).ok()) {
    source.path = data_option;
    return load_data_shared(source, "");
  }
  return load_data_shared(source, data_option);
}

// The server processes this worker reaches through shared memory: those on this host (the same boot,
// user and namespaces) when the run allows it (cluster.shared_memory).
std::vector<caf::node_id> shared_memory_peers(const TrainingJob& job, const JoinOffer& offer,
                                              const CoordinatorActor& coordinator,
                                              const std::vector<ShardAddress>& shards) {
  std::vector<caf::node_id> peers;
  const auto here = job.cluster.shared_memory ? shared_memory_host_identity() : std::string();
  if (here.empty()) return peers;
  if (offer.host_identity == here) peers.push_back(coordinator.node());
  for (const auto& shard : shards)
    if (shard.host_identity == here) peers.push_back(shard.server.node());
  return peers;
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
  if (is_sparse_model(*config)) {
    if (options.retry)
      if (auto offered = check_run_feature("work --retry", true); !offered) say("note: " + offered.error());
    auto done = serve_sparse_work(self, *connection, *config, options.data, options.token, retry.tls, host_name(), say);
    if (!done) return {error.failed(done.error()), false};
    if (done->outcome == RunEnding::Outcome::failed_on_server)
      return {error.failed("the run failed on the server: " + done->failure), false};
    if (done->outcome != RunEnding::Outcome::finished) return {error.failed(done->failure), false};
    say(with_shared_memory_note("training finished"));
    return {0, false};
  }
  auto data = load_worker_data(*config, options.data);
  if (!data) return {error.failed(data.error()), false};
  const DataShape shape{data->train->width, data->train->num_classes, data->train->count, data->dev->count};
  if (auto fits = check_fits_machine(*config, shape, ProcessRole::worker); !fits)
    return {error.failed(fits.error()), false};
  const TrainingJob& job = *config;
  std::optional<WorkerStreamState> resume;
  if (offer.resume) resume = offer.stream;
  // The server checked its checkpoint against the same data; a position that still does not fit
  // this worker's data is refused here rather than abort the worker.
  if (resume)
    if (auto problem = stream_misfit(*resume, data->train->count))
      return {error.failed(fmt::format("the server's resume position does not fit this worker's data: {}", *problem)),
              false};
  // Shard processes, dialled before joining: the run starts only once every worker has, so no gradient
  // of theirs detours through the server's process.
  auto shard_routes = dial_shards(system, connection->coordinator, options.token, retry.tls, say);
  if (!shard_routes) return {error.failed(shard_routes.error()), false};
  for (const auto& line : shard_routes->lines) say(line);
  DataWorkerSetup setup{job, offer.worker_index, data->train, worker_delay(job, offer.worker_index), resume,
                        /*detached=*/false};
  setup.shared_memory_nodes = shared_memory_peers(job, offer, connection->coordinator, shard_routes->shards);
  const auto server_silence = std::make_shared<ServerSilence>();
  setup.server_silence = server_silence;
  accept_shared_memory(!setup.shared_memory_nodes.empty());
  if (!setup.shared_memory_nodes.empty())
    say(fmt::format("gradients and weights go through shared memory to the {} server process(es) on this host",
                    setup.shared_memory_nodes.size()));
  auto worker = spawn_data_worker(system, std::move(setup));
  if (!worker) return {error.failed(worker.error()), false};
  limit_payload_floats(worker->parameters);
  JoinRequest request{offer.worker_index, worker->actor,          worker->layout_hash,
                      data->train->width, data->train->num_classes, data->train->count,
                      host_name(),        data->train_fingerprint};
  auto joined = join_server(self, connection->coordinator, request);
  if (!joined) {
    caf::anon_send_exit(worker->actor, caf::exit_reason::user_shutdown);
    return {error.failed(joined.error()), false};
  }
  say(fmt::format("joined {} as worker {} of {} (data {}{})", options.connect, offer.worker_index,
                  offer.num_workers, data->description, offer.resume ? ", resuming its data stream" : ""));
  // The worker's answer to its stop may still be on its way when the worker is gone: the process
  // waits for the server to go away first (it does once it has every answer), as a shard does.
  auto done = serve_until_stopped(self, connection->coordinator, worker->actor.address(), std::chrono::seconds(2),
                                  ServerWaitSetup{job.cluster.server_wait, options.connect, server_silence});
  if (!done) return {error.failed(done.error()), true};
  // The limit was this worker's to give: --retry does not wait longer.
  if (done->outcome == RunEnding::Outcome::server_silent) return {error.failed(done->failure), false};
  // The server is going away as well: --retry would only wait for a run that ended.
  if (done->outcome == RunEnding::Outcome::failed_on_server)
    return {error.failed("the run failed on the server: " + done->failure), false};
  if (done->outcome == RunEnding::Outcome::dropped)
    return {error.failed(fmt::format("the server dropped worker {}: {}", offer.worker_index, done->failure)), false};
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
