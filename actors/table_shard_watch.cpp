#include "actors/table_shard_watch.hpp"

#include <fmt/format.h>

#include "caf/all.hpp"
#include "runtime/error_text.hpp"

namespace psgrad {

std::string table_shard_loss_line(caf::actor_system& system, std::size_t index, const caf::error& reason) {
  const auto why = reason == caf::exit_reason::remote_link_unreachable
                       ? std::string("its connection dropped (the process died, froze or lost the network)")
                       : reason ? error_text(system, reason) : std::string("it stopped");
  return fmt::format("table shard {} lost: {}", index, why);
}

caf::actor spawn_table_shard_watch(caf::actor_system& system, std::vector<EmbeddingShardActor> shards,
                                   std::vector<ParameterServerActor> dense_servers, EvaluatorActor evaluator,
                                   std::vector<DataWorkerActor> workers, std::shared_ptr<TableShardLoss> loss) {
  return system.spawn([shards, dense_servers, evaluator, workers, loss](caf::event_based_actor* self) -> caf::behavior {
    for (const auto& shard : shards) self->monitor(shard);
    self->set_down_handler([=](caf::scheduled_actor* watch, caf::down_msg& down) {
      for (std::size_t i = 0; i < shards.size(); ++i) {
        if (shards[i].address() != down.source) continue;
        const auto line = table_shard_loss_line(watch->system(), i, down.reason);
        loss->note(line);
        const auto reason = caf::make_error(caf::sec::runtime_error, line);
        for (const auto& server : dense_servers) watch->send_exit(server, reason);
        watch->send_exit(evaluator, reason);
        for (const auto& worker : workers) watch->send_exit(worker, reason);
        watch->quit();
        return;
      }
    });
    return {[](int) {}};  // it only watches
  });
}

}  // namespace psgrad
