// The typed interfaces of the ParameterServer and the DataWorker.
#pragma once

#include <vector>

#include "caf/replies_to.hpp"
#include "caf/typed_actor.hpp"
#include "payloads/messages.hpp"
#include "actors/sparse_interfaces.hpp"
#include "model/data_fingerprint.hpp"

namespace psgrad {

// Whoever wants to hear of every gradient a server applies from a worker's own push (the driver).
using StepListener = caf::typed_actor<caf::reacts_to<applied_atom, StepNote>>;

// A server shard as its peers see it: told the sums of squares of a sync step (ShardSquares).
using ShardPeer = caf::typed_actor<caf::reacts_to<squares_atom, ShardSquares>>;

// Holds the weights and the optimizer. Async/ssp: "apply" with a gradient makes one optimizer step and
// answers with the new weights, in the run's wire encoding. Sync: after "barrier", a pushed gradient waits for the step that sums it: the step is taken once
// `needed` of the listed members' gradients for the current version are in, summed in worker order,
// and every one of them is answered with the new weights; a gradient from older weights is dropped
// and answered at once with the current ones; "barrier" is answered with the workers whose gradients
// wait for the step (so the driver can tell a frozen worker from one waiting). After "listen", every gradient a worker pushed is also
// told to the listener (with this server's shard number). "plan" says which floats it holds, so
// pushers send a shard only its slice of each gradient (ServerGroup). "peers" (sync, several shards:
// its own index, every shard in order and their plans) is acknowledged once the shard knows whom to
// tell, and whom to wait for, the sums of squares of each step's summed gradients ("squares"), so
// that an array cut between shards is clipped by the norm of the whole sum.
using ParameterServerActor = caf::typed_actor<
    caf::replies_to<apply_atom, Gradients>::with<Weights>,
    caf::reacts_to<listen_atom, StepListener, std::uint32_t>,
    caf::replies_to<barrier_atom, std::vector<std::uint32_t>, std::uint32_t>::with<std::vector<std::uint32_t>>,
    caf::replies_to<weights_atom>::with<Weights>,
    // The fp32 master weights, whatever the wire encoding (weights_atom's answer is encoded for workers).
    caf::replies_to<master_atom>::with<Weights>,
    // The optimizer's weight averages (use_averages), laid out as the weights, at the current version.
    caf::replies_to<averages_atom>::with<Weights>,
    caf::replies_to<state_atom>::with<ServerState>,
    caf::replies_to<plan_atom>::with<ShardPlan>,
    caf::replies_to<peers_atom, std::uint32_t, std::vector<ShardPeer>, std::vector<ShardPlan>>::with<bool>,
    caf::reacts_to<squares_atom, ShardSquares>,
    // Sync with cluster.ordered_answers: worker k received the weights of this version.
    caf::reacts_to<received_atom, std::uint32_t, std::uint64_t>,
    caf::replies_to<stop_atom>::with<bool>>;

// Holds a model copy and its own data stream; answers with the gradient of its next batch. "stop"
// is acknowledged before the worker quits, so a remote process knows its job is done.
// "state" reports where its data stream and dropout generator stand, for checkpoints.
// "train" starts the worker's own loop: compute from the given weights, push the gradient to the
// servers, compute from the weights they answer with. Async/ssp: as long as it holds credits ("credit"
// adds more; out of credits it waits, and pulls fresh weights when more come). Sync: only from weights
// older than the version "until" names (0 at first), so it waits at the driver's stopping points
// (pipelined: no push feeds a step past it). It is
// answered when the worker is stopped, or with the error that ended its loop (e.g. a server refusing a
// gradient).
using DataWorkerActor = caf::typed_actor<caf::replies_to<compute_atom, Weights>::with<Gradients>,
                                         caf::replies_to<train_atom, Weights, std::vector<ParameterServerActor>,
                                                         std::uint64_t>::with<bool>,
                                         caf::reacts_to<credit_atom, std::uint64_t>,
                                         caf::reacts_to<until_atom, std::uint64_t>,
                                         // Sync: the version its last push feeds (pipelined: a step past
                                         // the driver's until, when that came after the push).
                                         caf::replies_to<fed_atom>::with<std::uint64_t>,
                                         // Its steady clock (ns), for a trace's clock offset at join.
                                         caf::replies_to<clock_atom>::with<std::int64_t>,
                                         caf::replies_to<stop_atom>::with<bool>,
                                         caf::replies_to<state_atom>::with<WorkerStreamState>>;

// Evaluates weight snapshots on the dev set; a request (rather than a send) gets the report back.
using EvaluatorActor = caf::typed_actor<
    caf::replies_to<evaluate_atom, Weights, TrainingProgress>::with<EvaluationReport>>;

// Runs a training job between the workers and the servers (actors/training_driver.hpp): "run" is
// answered with the summary when training ends; "add worker" hands it a worker that joined a running
// job; "rejoin" is its own timer while it waits for a worker after losing all of them; "applied" is a
// server's note of a gradient it applied (async/ssp); "tick" its own timer that finds frozen workers.
using TrainingDriverActor = caf::typed_actor<caf::replies_to<run_atom>::with<TrainingSummary>,
                                             caf::reacts_to<add_worker_atom, DataWorkerActor, std::string, std::uint32_t>,
                                             caf::reacts_to<rejoin_atom, std::uint64_t>,
                                             caf::reacts_to<applied_atom, StepNote>,
                                             caf::reacts_to<tick_atom>>;

// What a joining worker process tells the server about itself once it has built its model.
struct JoinRequest {
  std::uint32_t worker_index = 0;
  DataWorkerActor worker;
  std::uint64_t layout_hash = 0;
  std::uint64_t input_width = 0;
  std::uint64_t num_classes = 0;
  std::uint64_t train_count = 0;
  std::string host;  // for messages
  DataFingerprint data;  // the worker's training set, which must be the server's
};

// Where a shard process listens for workers: each worker dials every shard itself, so a shard's
// traffic does not pass through the server's process (and link) on its way.
struct ShardAddress {
  std::uint32_t shard = 0;
  std::string host;
  std::uint16_t port = 0;
  ParameterServerActor server;  // what the dialled port must publish
  std::string host_identity;    // where the shard's process runs (JoinOffer::host_identity)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ShardAddress& x) {
  return f(caf::meta::type_name("ShardAddress"), x.shard, x.host, x.port, x.server, x.host_identity);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DataFingerprint& x) {
  return f(caf::meta::type_name("DataFingerprint"), x.name, x.count, x.width, x.num_classes, x.images_hash,
           x.labels_hash);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, JoinRequest& x) {
  return f(caf::meta::type_name("JoinRequest"), x.worker_index, x.worker, x.layout_hash, x.input_width,
           x.num_classes, x.train_count, x.host, x.data);
}

// Accepts worker processes: "hello" (protocol version, join token, host) reserves a worker index and
// answers with the run's configuration; "join" registers the worker's DataWorker after checking that
// its model layout, data shape and training data match the server's; "wait" answers with the workers and their
// hosts once all have joined; "driver" names the actor that takes workers joining a running job.
using CoordinatorActor = caf::typed_actor<
    caf::replies_to<hello_atom, std::uint32_t, std::string, std::string>::with<JoinOffer>,
    caf::replies_to<join_atom, JoinRequest>::with<std::uint32_t>,
    caf::replies_to<wait_atom>::with<std::vector<DataWorkerActor>, std::vector<std::string>>,
    caf::reacts_to<driver_atom, TrainingDriverActor>,
    // Shard processes (`psgrad shard --index i`): hello (protocol, token, shard index) gets the
    // config; join hands over the shard's ParameterServer, where it listens for workers and its host
    // identity (for workers on its host to use shared memory), after checking the layout hash.
    caf::replies_to<shard_hello_atom, std::uint32_t, std::string, std::uint32_t>::with<JoinOffer>,
    caf::replies_to<join_shard_atom, std::uint32_t, ParameterServerActor, std::uint64_t, std::string,
                    std::uint16_t, std::string>::with<std::uint32_t>,
    caf::replies_to<shards_atom>::with<std::vector<ParameterServerActor>>,
    // For worker processes: how many shard processes the run has, and the addresses of those that
    // joined so far (a worker asks until it has them all, then dials each).
    caf::replies_to<shard_addresses_atom>::with<std::uint32_t, std::vector<ShardAddress>>,
    // A sparse run's table shard processes and workers: TableShardRegistryActor's messages, passed on
    // to the run's registry (refused when the run has no embedding tables).
    caf::replies_to<table_hello_atom, std::uint32_t, std::string, std::uint32_t>::with<JoinOffer>,
    caf::replies_to<table_join_atom, TableShardJoin>::with<std::uint32_t>,
    caf::replies_to<table_shards_atom, TableLayout, std::string>::with<std::vector<TableShardAddress>>,
    caf::replies_to<table_start_atom, std::uint32_t>::with<TableShardStart>,
    caf::replies_to<table_rows_atom, std::uint32_t, std::uint32_t>::with<ShardTablesState>,
    // A worker process asks every so often while it serves: a stopped or stalled server keeps its
    // connection open, and only a question it leaves unanswered tells (runtime/server_wait.hpp).
    caf::replies_to<ping_atom>::with<pong_atom>>;

}  // namespace psgrad
