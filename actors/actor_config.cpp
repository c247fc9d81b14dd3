#include "actors/actor_config.hpp"

#include <stdexcept>
#include <thread>

#include "caf/io/middleman.hpp"
#include "caf/openssl/manager.hpp"
#include "actors/interfaces.hpp"
#include "actors/sparse_interfaces.hpp"
#include "payloads/messages.hpp"
#include "payloads/table_state_messages.hpp"
#include "runtime/polling_scheduler.hpp"
#include "runtime/tls_error_queue.hpp"

namespace psgrad {

ActorConfig::ActorConfig(std::size_t threads, NetworkSettings network) {
  // Each registers std::vector<T> too, as "std::vector<name>" (CAF's add_message_type does).
  add_message_type<Weights>("psgrad::Weights");
  add_message_type<Gradients>("psgrad::Gradients");
  add_message_type<ShardPlan>("psgrad::ShardPlan");
  add_message_type<ShardSquares>("psgrad::ShardSquares");
  add_message_type<ShardPeer>("psgrad::ShardPeer");
  add_message_type<TrainingProgress>("psgrad::TrainingProgress");
  add_message_type<EvaluationReport>("psgrad::EvaluationReport");
  add_message_type<TrainingSummary>("psgrad::TrainingSummary");
  add_message_type<DataWorkerActor>("psgrad::DataWorkerActor");
  add_message_type<ParameterServerActor>("psgrad::ParameterServerActor");
  add_message_type<JoinOffer>("psgrad::JoinOffer");
  add_message_type<WorkerStreamState>("psgrad::WorkerStreamState");
  add_message_type<ServerState>("psgrad::ServerState");
  add_message_type<JoinRequest>("psgrad::JoinRequest");
  add_message_type<CoordinatorActor>("psgrad::CoordinatorActor");
  add_message_type<TrainingDriverActor>("psgrad::TrainingDriverActor");
  add_message_type<StepNote>("psgrad::StepNote");
  add_message_type<StepListener>("psgrad::StepListener");
  add_message_type<std::vector<std::uint32_t>>("std::vector<std::uint32_t>");
  add_message_type<ShardAddress>("psgrad::ShardAddress");
  add_message_type<RowPull>("psgrad::RowPull");
  add_message_type<PulledRows>("psgrad::PulledRows");
  add_message_type<RowPush>("psgrad::RowPush");
  add_message_type<TableSquares>("psgrad::TableSquares");
  add_message_type<ShardTablesState>("psgrad::ShardTablesState");
  add_message_type<EmbeddingShardActor>("psgrad::EmbeddingShardActor");
  add_message_type<TableShardPeer>("psgrad::TableShardPeer");
  add_message_type<TableShape>("psgrad::TableShape");
  add_message_type<TableLayout>("psgrad::TableLayout");
  add_message_type<TableShardAddress>("psgrad::TableShardAddress");
  add_message_type<TableShardJoin>("psgrad::TableShardJoin");
  add_message_type<TableShardStart>("psgrad::TableShardStart");
  add_message_type<TableShardRegistryActor>("psgrad::TableShardRegistryActor");
  load<caf::io::middleman>();
  if (network.tls.enabled()) {
    // Without it, one TLS connection's error closes the next one CAF reads (see tls_error_queue.cpp).
    if (!tls_error_queue_isolated()) throw std::logic_error("psgrad was linked without runtime/tls_error_queue.cpp");
    load<caf::openssl::manager>();
    openssl_certificate = network.tls.certificate;
    openssl_key = network.tls.key;
    openssl_cafile = network.tls.ca;
  }
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads_ = threads;
  set("scheduler.max-threads", threads);
  // Work sharing (psgrad's, whose queue allocates nothing per scheduled actor): idle scheduler threads
  // sleep on one condition variable until a message arrives. CAF's default work stealing polls for
  // about 25 ms after each message (100 spins, then 500 sleeps of 50 µs), and with workers computing
  // on every core those wake-ups took their time: measured with 1500 iterations, sync with 1 worker
  // ran in 2.5 s instead of 3.2-3.4 s, 2 workers in 2.6-3.7 s instead of 4.1-4.9 s (the workers are
  // detached, so they never wait on the scheduler's queue).
  use_polling_scheduler(*this, poll_settings_);
  // Messages from other processes are deserialized on the network thread that read them, not handed
  // to a BASP worker thread first: a payload from a process on this host is a reference to shared
  // memory and one copy, and the hand-over was one more wake-up per message on a machine whose
  // cores are computing. Measured over loopback (2 worker processes, 1000 iterations, medians of 4):
  // sync 102k samples/s against 92k with one BASP worker, async 93k against 88k.
  set("middleman.workers", std::size_t{0});
  set("middleman.heartbeat-interval", caf::timespan{network.heartbeat_interval});
  set("middleman.connection-timeout", caf::timespan{network.connection_timeout});
  // CAF prints to the console only what psgrad reports itself.
  set("logger.console-verbosity", caf::atom("quiet"));
}

void ActorConfig::poll_when_idle(std::chrono::microseconds poll) {
  if (poll.count() <= 0) return;
  if (poll_settings_->poll.count() > 0) throw std::logic_error("ActorConfig::poll_when_idle called twice");
  poll_settings_->poll = poll;
  split_server_steps();  // the polling threads take on the halves
}

void ActorConfig::split_server_steps() {
  if (!poll_settings_->help) poll_settings_->help = std::make_shared<IdleHelp>();
}

// Woken as a step starts, the helper has about a pass to wake (60-95 µs on this project's VM) and
// watches 300 µs from then. Measured with `psgrad train --processes --mode sync`, 2 workers,
// alternated: 74.1-79.3k samples/s without it, 77.3-86.8k with it, faster in 7 of 7 pairs (the
// server's apply 297 -> 158 µs, medians of a traced run); 4 workers 76.1 / 77.9k against 80.2 /
// 77.9k. Ending its watch when the step ends kept only part of that (74.3-84.1k): the core it keeps
// awake also takes the answers' wake-ups sooner. The price is where another process holds a core:
// beside one busy loop, 42.7-46.9k with it against 45.7-48.0k. Woken when a step's first gradient
// came, it spun while the other workers still computed (4 workers: 69-73k); with the pipeline the
// workers compute through the step, and it took their cores (84.0-87.1k against 83.7-89.7k), so
// pipelined steps do not wake it.
void ActorConfig::help_server_steps_from_a_thread() {
  // A process held to one scheduler thread (cluster.threads = 1) or on one core gets no second
  // busy thread.
  if (step_helper_ || threads_ < 2 || std::thread::hardware_concurrency() < 2) return;
  split_server_steps();
  step_helper_ = std::make_shared<StepHelper>(poll_settings_->help, kStepHelpWait, kNextPassWait);
}

std::shared_ptr<StepHelper> step_helper_of(const caf::actor_system& system) {
  const auto* config = dynamic_cast<const ActorConfig*>(&system.config());
  return config != nullptr ? config->step_helper() : nullptr;
}

std::shared_ptr<IdleHelp> idle_help_of(const caf::actor_system& system) {
  const auto* config = dynamic_cast<const ActorConfig*>(&system.config());
  return config != nullptr ? config->idle_help() : nullptr;
}

}  // namespace psgrad
