#include "io/config_keys.hpp"

#include "model/registry.hpp"
#include "model/schedule.hpp"

namespace psgrad::config_table {

const SectionTable<TrainingSection>& training_table() {
  using S = TrainingSection;
  static const SectionTable<S> table{"training", {
      key("iterations", &S::iterations,
          "Number of training steps; each one gathers gradients from the workers and updates the weights.", at_least(1)),
      key("batch_size", &S::batch_size, "Number of training examples in each minibatch a worker computes gradients on.",
          at_least(1)),
      key("seed", &S::seed, "Random seed for weight initialisation, shuffling and dropout, so runs can be repeated.",
          at_least(0)),
      key("checkpoint_every", &S::checkpoint_every,
          "Save a checkpoint every this many iterations; 0 saves only at the end.", at_least(0)),
      key("checkpoint_path", &S::checkpoint_path, "File the weights are checkpointed to; empty disables checkpoints."),
      key("patience", &S::patience,
          "Stop early after this many evaluations in a row without a better dev accuracy; 0 never stops early.",
          within(0, 1e12)),
      key("save_best", &S::save_best,
          "Keep the weights of the best dev evaluation (for --save, --save-weights and the summary) instead of the "
          "last ones."),
      key("with_averages", &S::with_averages,
          "Evaluate, keep and save the optimizer's weight averages (optimizer.use_averages) instead of the "
          "weights, as spaCy does with Thinc's model.use_params(optimizer.averages); training steps the weights."),
  }};
  return table;
}

const SectionTable<EvaluationSection>& evaluation_table() {
  using S = EvaluationSection;
  static const SectionTable<S> table{"evaluation", {
      key("batch_size", &S::batch_size, "Number of dev-set examples scored per forward pass during evaluation.",
          at_least(1)),
      key("frequency", &S::frequency, "Evaluate accuracy on the dev set every this many iterations.", at_least(1)),
  }};
  return table;
}

const SectionTable<TablesSection>& tables_table() {
  using S = TablesSection;
  static const SectionTable<S> table{"tables", {
      key("optimizer", &S::optimizer,
          "How embedding tables' rows step: lazy_adam (each row's own Adam.v1 moments, with [optimizer]'s "
          "settings) or adagrad (with the keys below). Models with embedding tables only.",
          one_of({"lazy_adam", "adagrad"})),
      key("learn_rate", &S::learn_rate, "adagrad: the tables' learning rate.", above(0)),
      key("initial_accumulator", &S::initial_accumulator,
          "adagrad: each row's sum of squared gradients starts here.", at_least(0)),
      key("eps", &S::eps, "adagrad: added to the square root of the sum before dividing.", above(0)),
      key("grad_clip", &S::grad_clip, "adagrad: clip each table's gradient to this norm; 0 does not clip.",
          at_least(0)),
  }};
  return table;
}

const SectionTable<DataSection>& data_table() {
  using S = DataSection;
  static const SectionTable<S> table{"data", {
      key("name", &S::name, "Named data set to train on, used when path is empty.", one_of({"mnist", "fashion-mnist"})),
      key("path", &S::path,
          "Your own data instead of the named data set: a folder of IDX files, a folder of x_train.npy, "
          "y_train.npy (and x_test.npy, y_test.npy), an .npz with x_train, y_train (and x_test, y_test), or a "
          "CSV file of a label column and feature columns (header optional); empty uses name."),
      key("label_column", &S::label_column,
          "CSV: the column holding the label, counted from 0; -1 is the last column. Labels are whole numbers "
          "from 0 to 255; the classes are 0 to the largest label of train and dev."),
      key("dev_path", &S::dev_path,
          "Dev examples in any of path's formats (a CSV file's rows, the test part of the others); replaces "
          "any test part of path. Empty: path's own test part, or dev_fraction."),
      key("dev_fraction", &S::dev_fraction,
          "Share of path's examples held out as the dev set (the last of each class, in file order) when "
          "path has no test part and dev_path is empty; 0 holds out none.",
          from_below(0, 1)),
      key("scale", &S::scale,
          "CSV and NumPy features are multiplied by this (0.00392156862745098 is 1/255, for pixel bytes); "
          "IDX pixels are always divided by 255.",
          above(0)),
      key("label", &S::label,
          "Named columns ([data.columns]): the column holding each example's label, a string or a whole number "
          "(string labels become classes in sorted order)."),
      key("max_tokens", &S::max_tokens,
          "Named columns: the most tokens one example's text column may split into, or ids one example's ids "
          "column may list; a longer one is refused with its line.",
          within(1, 1 << 20)),
  }};
  return table;
}

const SectionTable<ClusterSection>& cluster_table() {
  using S = ClusterSection;
  static const SectionTable<S> table{"cluster", {
      key("num_workers", &S::num_workers, "Number of workers that compute gradients in parallel.",
          within(1, max_workers)),
      key("threads", &S::threads, "Scheduler threads for the actor system; 0 uses one per machine core. In one process with as many workers as threads or more (and no more threads than cores), idle threads poll 200 µs before they sleep. A server or shard process with 2 or more threads on 2 or more cores keeps one more thread, which takes half of each plain sync step.",
          within(0, max_scheduler_threads)),
      key("mode", &S::mode, "sync waits for every worker's gradients each step; async applies each as it arrives."),
      key("servers", &S::servers,
          "Parameter-server shards: the weights are split on array boundaries, each shard with its own optimizer.",
          within(1, 64)),
      key("wire", &S::wire,
          "How weights and gradients travel: fp32 exactly; bf16 rounded to bfloat16 (the server keeps fp32 "
          "weights and sums); topk sends each gradient's largest entries per array, the rest added to that "
          "worker's next gradient (weights exact)."),
      key("topk_fraction", &S::topk_fraction,
          "wire topk: the share of each parameter array's entries a gradient sends (at least one per array).",
          share()),
      key("staleness", &S::staleness,
          "ssp mode: how many gradients a worker may get ahead of the slowest one (0 is lock-step).", at_least(0)),
      key("backup_workers", &S::backup_workers,
          "sync mode: each step uses the first num_workers - backup_workers gradients to arrive and drops the "
          "rest, so stragglers do not set the pace; a run with backups is not bit-reproducible. Less than "
          "num_workers; needs cluster.servers = 1.",
          within(0, max_workers - 1)),
      key("host", &S::host, "Address the parameter server listens on and workers connect to."),
      key("port", &S::port, "TCP port of the parameter server; 0 picks a free port.", within(0, 65535)),
      key("heartbeat_ms", &S::heartbeat,
          "Milliseconds between heartbeats that tell the server a worker is alive; 0 disables them.",
          milliseconds_from(0)),
      key("connection_timeout_ms", &S::connection_timeout,
          "Milliseconds without any traffic (heartbeats included) after which the server counts a worker or "
          "shard process as dead; 0 never. A worker waits for its server cluster.server_wait_ms instead.",
          milliseconds_from(0)),
      key("server_wait_ms", &S::server_wait,
          "Milliseconds a worker waits for a server that answers nothing (stopped or stalled, its connection "
          "still open) before it gives up; 0 waits forever. A closed connection is noticed at once. `psgrad "
          "work --server-wait-ms` sets it for one worker.",
          milliseconds_from(0)),
      key("request_timeout_ms", &S::request_timeout,
          "Milliseconds to wait for a reply to a request; a worker that takes longer is dropped, and a worker "
          "whose server owes it an answer for longer (three times longer in sync) stops naming that server.",
          milliseconds_from(1)),
      key("pipeline", &S::pipeline,
          "A worker computes its next gradient while the last one is on its way, from the newest weights it "
          "has: one more step of staleness. Async/ssp: two pushes out per worker. Sync: each step sums every "
          "worker's gradient from the weights one step older than its own (from its own after each "
          "evaluation or checkpoint, where the pipeline drains), so the server's link need not idle while "
          "the last gradient of a step comes in; still the same weights run after run, on one server or "
          "several. Sync needs no backup workers."),
      key("ordered_answers", &S::ordered_answers,
          "Sync: a server answers the pushes of a step one after another (each of K shards K at a time), "
          "the next once the one before has left the server's sockets for the wire, or the worker says it "
          "has its weights (or after a second without either), instead of all at once over one shared "
          "link; the first workers then compute and push while later answers are on the wire. For workers "
          "on other hosts; local and same-host workers are answered at once."),
      key("shared_memory", &S::shared_memory,
          "Processes on one host (same boot, user and network namespace) pass gradients and weights through "
          "shared memory instead of their TCP connection, which carries only a reference; off: always the "
          "connection."),
      key("elastic", &S::elastic,
          "Let workers join a running job (from the next iteration); num_workers is then the minimum to start."),
      key("rejoin_timeout_ms", &S::rejoin_timeout,
          "When every worker is lost: how long an elastic job waits for a new one before giving up.",
          milliseconds_from(0)),
      key("join_timeout_ms", &S::join_timeout,
          "How long `psgrad serve` waits for its workers (and shard processes) to join before giving up, "
          "saying how many joined and how many were refused; 0 waits forever.",
          milliseconds_from(0)),
      key("join_token", &S::join_token,
          "Secret a worker must present to join; empty admits any worker that can connect."),
      key("worker_delay_ms", &S::worker_delay,
          "Extra milliseconds every worker spends per gradient (to simulate slower machines).",
          milliseconds_from(0)),
      key("straggler_delay_ms", &S::straggler_delay,
          "Extra milliseconds the last worker spends per gradient (to simulate one straggler).",
          milliseconds_from(0)),
      key("tls_certificate", &S::tls_certificate,
          "Server's PEM certificate; setting the TLS keys switches connections to TLS."),
      key("tls_key", &S::tls_key, "Server's PEM private key."),
      key("tls_ca", &S::tls_ca,
          "PEM CA certificate that workers' certificates must be signed by; workers without one are refused."),
  }};
  return table;
}

}  // namespace psgrad::config_table
