// The atoms and payloads that travel between psgrad's actors (and across the network).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "caf/atom.hpp"
#include "caf/meta/type_name.hpp"
#include "payloads/float_buffer.hpp"
#include "payloads/raw_vector.hpp"
#include "model/checkpoint.hpp"
#include "model/norm_chunks.hpp"
#include "model/optimizer.hpp"
#include "model/training_mode.hpp"

namespace psgrad {

using apply_atom = caf::atom_constant<caf::atom("apply")>;
using weights_atom = caf::atom_constant<caf::atom("weights")>;
using compute_atom = caf::atom_constant<caf::atom("compute")>;
using evaluate_atom = caf::atom_constant<caf::atom("evaluate")>;
using run_atom = caf::atom_constant<caf::atom("run")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using hello_atom = caf::atom_constant<caf::atom("hello")>;
using join_atom = caf::atom_constant<caf::atom("join")>;
using wait_atom = caf::atom_constant<caf::atom("wait")>;
using state_atom = caf::atom_constant<caf::atom("state")>;
using driver_atom = caf::atom_constant<caf::atom("driver")>;
using add_worker_atom = caf::atom_constant<caf::atom("addworker")>;
using rejoin_atom = caf::atom_constant<caf::atom("rejoin")>;
using shard_hello_atom = caf::atom_constant<caf::atom("shardhello")>;
using join_shard_atom = caf::atom_constant<caf::atom("joinshard")>;
using shards_atom = caf::atom_constant<caf::atom("shards")>;
using shard_addresses_atom = caf::atom_constant<caf::atom("shardaddrs")>;
using train_atom = caf::atom_constant<caf::atom("train")>;
using credit_atom = caf::atom_constant<caf::atom("credit")>;
using listen_atom = caf::atom_constant<caf::atom("listen")>;
using applied_atom = caf::atom_constant<caf::atom("applied")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using master_atom = caf::atom_constant<caf::atom("master")>;
using averages_atom = caf::atom_constant<caf::atom("averages")>;
using clock_atom = caf::atom_constant<caf::atom("clock")>;
using barrier_atom = caf::atom_constant<caf::atom("barrier")>;
using until_atom = caf::atom_constant<caf::atom("until")>;
using plan_atom = caf::atom_constant<caf::atom("plan")>;
using peers_atom = caf::atom_constant<caf::atom("peers")>;
using squares_atom = caf::atom_constant<caf::atom("squares")>;
using received_atom = caf::atom_constant<caf::atom("received")>;
using fed_atom = caf::atom_constant<caf::atom("fed")>;
using ping_atom = caf::atom_constant<caf::atom("ping")>;
using pong_atom = caf::atom_constant<caf::atom("pong")>;

// Bumped whenever a message or an actor's interface changes shape, so mismatched builds refuse each
// other at "hello" (what changed when is in git's history of this line).
constexpr std::uint32_t protocol_version = 18;

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Minibatcher::Position& x) {
  return f(caf::meta::type_name("DataPosition"), x.epoch, x.cursor, x.epoch_rng);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, WorkerStreamState& x) {
  return f(caf::meta::type_name("WorkerStreamState"), x.worker, x.data, x.dropout);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, OptimizerState& x) {
  return f(caf::meta::type_name("OptimizerState"), x.buffers, x.counts);
}



// Model weights after `version` optimizer steps.
struct Weights {
  std::uint64_t version = 0;
  std::uint64_t layout_hash = 0;
  FloatBuffer values;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Weights& x) {
  return f(caf::meta::type_name("Weights"), x.version, x.layout_hash, x.values);
}

// When a worker did what for one gradient, on its own steady clock (nanoseconds; 0: not known), for
// per-worker compute and wait times and trace spans. Measured where the work happens, so it means the
// same wherever the worker runs; the driver only adds them up.
struct WorkTiming {
  std::int64_t previous_answered = 0;  // its previous gradient was ready (0: this is its first)
  std::int64_t idle_since = 0;         // it had gathered its next batch and began to wait
  std::int64_t received = 0;           // this request arrived
  std::int64_t answered = 0;           // this gradient was ready (a simulated delay included)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, WorkTiming& x) {
  return f(caf::meta::type_name("WorkTiming"), x.previous_answered, x.idle_since, x.received, x.answered);
}

// One worker's gradient of one batch, computed from the weights of `version`: the whole of it for a
// single server; for a shard, only the floats of its range (ShardPlan) and, for the arrays cut between
// it and other shards, the sums of squares of the chunks it does not hold (its clip norms need them).
struct Gradients {
  std::uint64_t version = 0;
  std::uint64_t layout_hash = 0;
  std::uint32_t worker = 0;
  std::uint32_t samples = 0;
  float loss = 0.0f;
  FloatBuffer values;
  WorkTiming timing;
  // One per ShardPlan::foreign_chunks range, of this gradient (async/ssp). A sync push carries none:
  // its step clips the sum of several gradients, whose squares the shards exchange (ShardSquares).
  std::vector<double> foreign_squares;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Gradients& x) {
  return f(caf::meta::type_name("Gradients"), x.version, x.layout_hash, x.worker, x.samples,
           RawFloat{x.loss}, x.values, x.timing, RawDoubles{x.foreign_squares});
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, GradientRange& x) {
  return f(caf::meta::type_name("GradientRange"), x.begin, x.size);
}

// What a server holds of the whole layout, for whoever pushes gradients to it: the floats
// [begin, end), and the ranges held by other shards whose sums of squares it needs with each gradient
// (Optimizer::foreign_norm_ranges), in the order it takes them.
struct ShardPlan {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::vector<GradientRange> foreign_chunks;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ShardPlan& x) {
  return f(caf::meta::type_name("ShardPlan"), x.begin, x.end, x.foreign_chunks);
}

// What a shard tells every other of a sync step (the weights of `version` plus the summed gradients):
// which workers' gradients its sum holds, so that all shards step with the same ones, and the sums
// of squares of the summed gradients' chunks it holds that the other's clip norms need, in the order
// of the other's ShardPlan::foreign_chunks (those within the sender's range; none when they share no
// array). Raw bits, so a diverging step's NaN or infinity arrives as it was.
struct ShardSquares {
  std::uint64_t version = 0;
  std::uint32_t shard = 0;  // the sender
  std::vector<double> squares;
  std::vector<std::uint32_t> workers;  // ascending
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ShardSquares& x) {
  return f(caf::meta::type_name("ShardSquares"), x.version, x.shard, RawDoubles{x.squares}, RawWorkers{x.workers});
}

// What a server tells the driver of each gradient a worker pushed to it (async/ssp): the driver keeps
// the count and statistics and hands out credits, but is never on the gradient's path.
struct StepNote {
  std::uint32_t worker = 0;
  std::uint32_t samples = 0;
  std::uint64_t computed_from = 0;  // the weights' version the gradient was computed from
  std::uint64_t version = 0;        // the server's version after applying it
  float loss = 0.0f;
  WorkTiming timing;                // the worker's, passed on for metrics and the trace
  std::uint32_t shard = 0;          // which server tells (the schedule listens to shard 0 only)
  // Gradients the step summed (1 in async/ssp); 0: a sync gradient that came after its step had
  // enough (backup workers) and was dropped.
  std::uint32_t summed = 1;
  std::int64_t apply_started = 0;   // the step on the server's steady clock (ns), for the trace
  std::int64_t apply_ended = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, StepNote& x) {
  return f(caf::meta::type_name("StepNote"), x.worker, x.samples, x.computed_from, x.version, RawFloat{x.loss},
           x.timing, x.shard, x.summed, x.apply_started, x.apply_ended);
}

// The server's whole state, for checkpoints (stays inside the server's process).
struct ServerState {
  Weights weights;
  OptimizerState optimizer;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ServerState& x) {
  return f(caf::meta::type_name("ServerState"), x.weights, x.optimizer);
}

// The server's answer to a worker's "hello": everything the worker needs to build its part.
struct JoinOffer {
  std::uint32_t protocol = protocol_version;
  std::uint32_t worker_index = 0;
  std::uint32_t num_workers = 0;
  std::string config;  // the resolved configuration, as TOML
  bool resume = false;  // continue the data stream below instead of starting it from the seed
  WorkerStreamState stream;
  std::uint64_t input_width = 0;  // the server's data shape, for shard processes that load no data
  std::uint64_t num_classes = 0;
  // For a shard process when the run resumes a checkpoint: the whole server's state to take its
  // slice of (empty weights otherwise), so shard processes resume exactly as shards in one process.
  ServerState resume_server;
  // Where the server's process runs (shared_memory_host_identity); a worker on the same host passes
  // its payloads through shared memory. Empty: never (cluster.shared_memory off).
  std::string host_identity;
  // A model with tables: the number columns its dense part reads after the embeddings, in order, so that a
  // shard process of its dense part, which loads no data, builds that part as the server did.
  std::vector<std::string> number_names;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, JoinOffer& x) {
  return f(caf::meta::type_name("JoinOffer"), x.protocol, x.worker_index, x.num_workers, x.config, x.resume,
           x.stream, x.input_width, x.num_classes, x.resume_server, x.host_identity, x.number_names);
}

// Per worker (by index) so far: dropped gradients, mean compute and wait times; and how many applied
// gradients had each staleness.
struct WorkerStatistics {
  std::vector<std::uint64_t> dropped;  // sync with backup workers: arrived after their step had enough
  std::vector<double> compute_ms_mean;
  std::vector<double> wait_ms_mean;
  // [s]: gradients applied s steps after the weights they were computed from (the last bucket: s or more)
  std::vector<std::uint64_t> staleness_histogram;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, WorkerStatistics& x) {
  return f(caf::meta::type_name("WorkerStatistics"), x.dropped, x.compute_ms_mean, x.wait_ms_mean,
           x.staleness_histogram);
}

// Where training stood when a snapshot was taken; the driver fills it in, the evaluator passes it on.
struct TrainingProgress {
  // The index the tutorial prints: in sync the loop iteration (one step each, every worker's gradient
  // summed); in async/ssp the optimizer step (one gradient each), so iterations x workers in all.
  std::uint64_t iteration = 0;
  std::uint64_t total_iterations = 0;  // of that index
  std::uint64_t samples = 0;   // training examples consumed so far
  double wall_seconds = 0.0;   // since training started
  double train_loss = 0.0;     // mean batch loss since the previous snapshot
  double staleness_mean = 0.0; // so far (async)
  double staleness_max = 0.0;
  std::vector<std::uint64_t> gradients_per_worker;
  WorkerStatistics workers;
  bool final = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TrainingProgress& x) {
  return f(caf::meta::type_name("TrainingProgress"), x.iteration, x.total_iterations, x.samples,
           x.wall_seconds, x.train_loss, x.staleness_mean, x.staleness_max, x.gradients_per_worker, x.workers, x.final);
}

// What the evaluator reports for one snapshot.
struct EvaluationReport {
  std::uint64_t iteration = 0;  // = progress.iteration
  std::uint64_t version = 0;
  double accuracy = 0.0;
  double loss = 0.0;  // dev mean cross-entropy
  bool final = false;
  TrainingProgress progress;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, EvaluationReport& x) {
  return f(caf::meta::type_name("EvaluationReport"), x.iteration, x.version, x.accuracy, x.loss, x.final,
           x.progress);
}

// A worker the run went on without: which, and when.
struct WorkerLoss {
  std::uint32_t worker = 0;
  std::string name;            // as the events name it, e.g. "worker 1 on host (pid 42)"
  std::uint64_t step = 0;      // optimizer steps applied when it was lost
  double wall_seconds = 0.0;   // since training started
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, WorkerLoss& x) {
  return f(caf::meta::type_name("WorkerLoss"), x.worker, x.name, x.step, x.wall_seconds);
}

// The outcome of one training run.
struct TrainingSummary {
  TrainingMode mode = TrainingMode::sync;
  std::uint64_t steps = 0;  // optimizer steps
  std::uint64_t samples = 0;
  double final_accuracy = 0.0;
  double wall_seconds = 0.0;
  double training_seconds = 0.0;  // without the final evaluation
  double staleness_min = 0.0, staleness_mean = 0.0, staleness_max = 0.0;
  std::vector<std::uint64_t> gradients_per_worker;  // applied
  WorkerStatistics workers;
  std::uint64_t max_clock_lead = 0;  // ssp/async: most gradients a worker started ahead of the slowest
  std::int32_t interrupted_by = 0;   // the signal that stopped the run early; 0: it ran to the end
  bool stopped_early = false;        // training.patience ran out
  Weights final_weights;
  std::vector<WorkerLoss> lost;      // in the order they were lost
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TrainingSummary& x) {
  return f(caf::meta::type_name("TrainingSummary"), x.mode, x.steps, x.samples, x.final_accuracy,
           x.wall_seconds, x.training_seconds, x.staleness_min, x.staleness_mean, x.staleness_max,
           x.gradients_per_worker, x.workers, x.max_clock_lead, x.interrupted_by, x.stopped_early, x.final_weights,
           x.lost);
}

}  // namespace psgrad
