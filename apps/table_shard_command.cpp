#include "apps/table_shard_command.hpp"

#include <cstdio>

#include <fmt/format.h>
#include <unistd.h>

#include "caf/actor_system.hpp"
#include "caf/scoped_actor.hpp"
#include "actors/actor_config.hpp"
#include "apps/error_exit.hpp"
#include "apps/sparse_data.hpp"
#include "io/config.hpp"
#include "io/machine_memory.hpp"
#include "io/user_text.hpp"
#include "model/table_optimizer.hpp"
#include "payloads/shared_memory.hpp"
#include "transport/remote_client.hpp"
#include "transport/table_shard_process.hpp"

namespace psgrad {

namespace {

std::string process_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return fmt::format("pid {}", getpid());
  return fmt::format("{} (pid {})", name, getpid());
}

}  // namespace

int run_table_shard_command(const ShardOptions& options, const ServerContact& contact, const std::string& listen_host,
                            std::uint16_t listen_port, const std::string& advertised) {
  const ErrorExit error{"psgrad shard"};
  // A server busy evaluating (its pulls of the dev set's rows are large) may send nothing for longer than
  // CAF's default connection timeout; a server that is gone closes its connection, which CAF sees at once.
  auto network = contact.network;
  network.connection_timeout = std::chrono::milliseconds(0);
  ActorConfig actor_config(static_cast<std::size_t>(options.threads), network);
  caf::actor_system system{actor_config};
  caf::scoped_actor self{system};
  const auto index = static_cast<std::uint32_t>(options.table_index);
  auto say = [](const std::string& line) { fmt::print(stderr, "psgrad shard: {}\n", cut_long_words(line)); };
  auto connection =
      connect_as_table_shard(self, contact.address.host, contact.address.port, options.token, index, contact.retry, say);
  if (!connection) return error.failed(connection.error());
  auto config = parse_config(connection->offer.config, fmt::format("config from server {}", options.connect));
  if (!config) return error.failed(config.error());
  if (!is_sparse_model(*config))
    return error.failed(fmt::format("--tables: the run at {} has no embedding tables; hold a shard of its weights "
                                    "with --index 1..K-1 instead",
                                    options.connect));
  TableShardProcessSetup setup;
  setup.index = index;
  setup.job = *config;
  setup.number_names = number_column_names(config->data.columns);
  setup.optimizer = table_optimizer_choice(config->tables);
  setup.listen = ShardListenSetup{listen_host, advertised, listen_port, options.token, contact.network.tls.enabled(), say};
  setup.name = process_name();
  // What this process can have: the machine's memory, or a lower ulimit -v or cgroup memory.max.
  if (const auto limit = memory_limit()) setup.machine_bytes = limit->bytes;
  setup.say = say;
  auto done = serve_table_shard(self, *connection, setup);
  if (!done) return error.failed(done.error());
  if (done->outcome == RunEnding::Outcome::failed_on_server)
    return error.failed("the run failed on the server: " + done->failure);
  say(with_shared_memory_note("training finished"));
  return 0;
}

}  // namespace psgrad
