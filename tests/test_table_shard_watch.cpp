// The watch over a sparse run's table shards: a lost shard ends the evaluator with the loss as the reason.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/table_shard_watch.hpp"
#include "tests/sparse_fixtures.hpp"
#include "tests/sparse_shard_fixtures.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

// Answers nothing useful: only its end is watched.
class EvaluatorStandIn : public EvaluatorActor::base {
 public:
  explicit EvaluatorStandIn(caf::actor_config& config) : EvaluatorActor::base(config) {}

  behavior_type make_behavior() override {
    return {[](evaluate_atom, Weights&, TrainingProgress&) -> caf::result<EvaluationReport> {
      return caf::make_error(caf::sec::invalid_argument, "a stand-in");
    }};
  }
};

}  // namespace

TEST_CASE("a table shard that goes away ends the evaluator with the loss as the reason") {
  ActorConfig config(2);
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  const auto job = sparse_job(TrainingMode::sync, 1, 1, 4);
  const auto train = colour_task(32, 1);
  const auto shard = spawn_table_shards(system, job, model_for(job, *train), 1).front();
  auto evaluator = system.spawn<EvaluatorStandIn>();
  auto loss = std::make_shared<TableShardLoss>();
  auto watch = spawn_table_shard_watch(system, {shard}, {}, evaluator, {}, loss);
  self->monitor(evaluator);
  self->send_exit(shard, caf::exit_reason::user_shutdown);
  std::string reason;
  self->receive([&](const caf::down_msg& down) { reason = system.render(down.reason); },
                caf::after(std::chrono::seconds(10)) >> [] {});
  CHECK(reason.find("table shard 0 lost") != std::string::npos);
  CHECK(loss->line().rfind("table shard 0 lost", 0) == 0);
}
