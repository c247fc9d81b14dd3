#include "actors/actor_config.hpp"

#include <thread>

#include "caf/io/middleman.hpp"
#include "caf/openssl/manager.hpp"
#include "actors/interfaces.hpp"
#include "actors/messages.hpp"

namespace psgrad {

ActorConfig::ActorConfig(std::size_t threads, NetworkSettings network) {
  add_message_type<Weights>("psgrad::Weights");
  add_message_type<Gradients>("psgrad::Gradients");
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
  load<caf::io::middleman>();
  if (network.tls.enabled()) {
    load<caf::openssl::manager>();
    openssl_certificate = network.tls.certificate;
    openssl_key = network.tls.key;
    openssl_cafile = network.tls.ca;
  }
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  set("scheduler.max-threads", threads);
  set("middleman.heartbeat-interval", caf::timespan{network.heartbeat_interval});
  set("middleman.connection-timeout", caf::timespan{network.connection_timeout});
  // CAF prints to the console only what psgrad reports itself.
  set("logger.console-verbosity", caf::atom("quiet"));
}

}  // namespace psgrad
