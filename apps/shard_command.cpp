// Connects to the main server, builds its shard of the initial weights and serves it until stopped.
#include "apps/shard_command.hpp"

#include <cstdio>
#include <limits>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "caf/actor_system.hpp"
#include "caf/scoped_actor.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "actors/parameter_server.hpp"
#include "actors/table_parts.hpp"
#include "model/table_graph.hpp"
#include "transport/remote_client.hpp"
#include "payloads/float_buffer.hpp"
#include "transport/shard_listener.hpp"
#include "payloads/shared_memory.hpp"
#include "apps/cli_checks.hpp"
#include "apps/error_exit.hpp"
#include "apps/host_port.hpp"
#include "apps/resource_check.hpp"
#include "apps/table_shard_command.hpp"
#include "io/config.hpp"
#include "io/user_text.hpp"

namespace psgrad {

Command add_shard_command(CLI::App& app) {
  auto options = std::make_shared<ShardOptions>();
  auto* command = app.add_subcommand("shard", "Hold one parameter-server shard for a `psgrad serve --remote-shards` run");
  auto* index = command->add_option("--index", options->index, "which shard to hold, 1..K-1 (the server holds shard 0)")
                    ->check(at_least_one());
  // Table shards count from 0: the server of a sparse run holds none of them.
  command->add_option("--tables", options->table_index,
                      "hold table shard INDEX, 0..K-1, of a sparse run's embedding tables (instead of --index)")
      ->check(CLI::Range(0, std::numeric_limits<int>::max()))
      ->excludes(index);
  command->add_option("--listen", options->listen,
                      "HOST[:PORT] where workers reach this shard (default: this machine's address toward the "
                      "server, a free port)");
  add_connect_options(*command, *options);
  return {command, [options] { return run_shard_command(*options); }};
}

namespace {

struct ListenAddress {
  HostPort bind;           // where the shard listens
  std::string advertised;  // what workers dial
};

// --listen HOST[:PORT], or this machine's address toward the server with a port the system picks. A
// wildcard (0.0.0.0, ::) listens on every interface and tells workers the address toward the server.
Result<ListenAddress> listen_address(const ShardOptions& options, const HostPort& server) {
  HostPort bind;
  if (!options.listen.empty()) {
    if (options.listen.find(':') == std::string::npos) {
      bind = HostPort{options.listen, 0};
    } else {
      auto given = parse_host_port(options.listen);
      if (!given) return Error{"--listen: " + given.error()};
      bind = *given;
    }
    if (bind.host != "0.0.0.0" && bind.host != "::") return ListenAddress{bind, bind.host};
  }
  auto toward_server = local_address_toward(server.host, server.port);
  if (!toward_server) return Error{toward_server.error()};
  if (bind.host.empty()) bind.host = *toward_server;
  return ListenAddress{bind, *toward_server};
}

// The whole server state this process takes its slice of, and into how many shards it is cut: a dense
// model's from its data shape; a model with tables' dense part from its config, classes and number
// columns (this process loads no data), cut as the server cuts it.
struct WholeServer {
  std::shared_ptr<ParameterServerState> state;
  std::size_t shards = 1;
};

Result<WholeServer> whole_server_state(const TrainingJob& job, const JoinOffer& offer, const TrainingCheckpoint* resume) {
  if (!model_has_tables(job.model)) {
    auto state = initial_server_state(job, offer.input_width, offer.num_classes, resume);
    if (!state) return Error{state.error()};
    return WholeServer{std::move(state).value(), job.cluster.servers};
  }
  auto model = SparseModel::build(job.model, offer.num_classes, offer.number_names);
  if (!model) return Error{model.error()};
  auto state = dense_part_state(job, *model, resume);
  if (!state) return Error{state.error()};
  return WholeServer{std::move(state).value(), dense_part_shards(job, model->dense().layout())};
}

}  // namespace

int run_shard_command(const ShardOptions& given) {
  const ErrorExit error{"psgrad shard"};
  ShardOptions options = given;
  auto contact = server_contact(options);
  if (!contact) return error.refused(contact.error());
  if (options.keep_trying) contact->retry.attempts = 200;  // as `work --retry`
  if (options.table_index < 0 && options.index == 0)
    return error.refused("--index is required (or --tables INDEX for a shard of a sparse run's tables)");
  const auto listen = listen_address(options, contact->address);
  if (!listen) return error.refused(listen.error());
  if (options.table_index >= 0)
    return run_table_shard_command(options, *contact, listen->bind.host, listen->bind.port, listen->advertised);
  ActorConfig actor_config(static_cast<std::size_t>(options.threads), contact->network);
  actor_config.help_server_steps_from_a_thread();
  caf::actor_system system{actor_config};
  caf::scoped_actor self{system};
  const auto shard = static_cast<std::uint32_t>(options.index);
  auto say = [](const std::string& line) { fmt::print(stderr, "psgrad shard: {}\n", cut_long_words(line)); };
  auto connection = connect_as_shard(self, contact->address.host, contact->address.port, options.token, shard,
                                     contact->retry, say);
  if (!connection) return error.failed(connection.error());
  const auto& offer = connection->offer;
  auto config = parse_config(offer.config, fmt::format("config from server {}", options.connect));
  if (!config) return error.failed(config.error());
  const DataShape shape{offer.input_width, offer.num_classes, 0, 0};
  // A model with tables: this process holds a slice of its dense part only, which is small beside the tables
  // (their shards' processes check theirs); the estimate is of a dense model's whole run.
  if (!model_has_tables(config->model))
    if (auto fits = check_fits_machine(*config, shape, ProcessRole::shard); !fits) return error.failed(fits.error());
  const TrainingJob& job = *config;
  // Every process draws the same initial weights from the seed, so this shard's slice matches; a
  // resumed run sends the checkpoint's state, sliced here exactly as the server slices its own.
  std::optional<TrainingCheckpoint> resume;
  if (offer.resume) {
    const auto& state = offer.resume_server;
    resume = TrainingCheckpoint{};
    resume->version = state.weights.version;
    resume->layout_hash = state.weights.layout_hash;
    resume->weights.assign(state.weights.values.data(), state.weights.values.data() + state.weights.values.size());
    resume->optimizer = state.optimizer;
  }
  auto whole = whole_server_state(job, offer, resume ? &*resume : nullptr);
  if (!whole) return error.failed(whole.error());
  limit_payload_floats(whole->state->layout.total_size());
  auto shards = shard_server_state(job, *whole->state, whole->shards);
  if (!shards || shard >= shards->size())
    return error.failed(shards ? fmt::format("the run has only {} shards", whole->shards) : shards.error());
  const auto layout_hash = whole->state->layout.hash();
  auto server = spawn_parameter_server(system, shards.value()[shard]);
  auto listener = ShardListener::open(system, server,
                                      ShardListenSetup{listen->bind.host, listen->advertised, listen->bind.port,
                                                       options.token, contact->network.tls.enabled(), say});
  if (!listener) {
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    return error.failed("--listen: " + listener.error());
  }
  // Workers on this host pass their payloads through shared memory, and get their answers that way.
  const auto host_identity = job.cluster.shared_memory ? shared_memory_host_identity() : std::string();
  accept_shared_memory(!host_identity.empty());
  if (auto joined = join_as_shard(self, connection->coordinator, shard, server, layout_hash, listener->host(),
                                  listener->port(), host_identity);
      !joined) {
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    return error.failed(joined.error());
  }
  say(fmt::format("serving shard {} of {} for {}{}; workers reach it at {}:{}", shard, whole->shards, options.connect,
                  resume ? fmt::format(", resumed at step {}", resume->version) : std::string(), listener->host(),
                  listener->port()));
  auto done = serve_until_stopped(self, connection->coordinator, server.address(), std::chrono::seconds(2));
  if (!done) return error.failed(done.error());
  if (done->outcome == RunEnding::Outcome::failed_on_server)
    return error.failed("the run failed on the server: " + done->failure);
  if (listener->counts_known())
    say(with_shared_memory_note(
        fmt::format("training finished; {} worker(s) reached this shard directly", listener->admitted())));
  else
    say(with_shared_memory_note("training finished"));
  return 0;
}

}  // namespace psgrad
