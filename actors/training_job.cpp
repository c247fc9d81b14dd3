#include "actors/training_job.hpp"

#include <fmt/format.h>

#include "model/registry.hpp"
#include "model/schedule.hpp"

namespace psgrad {

Result<Model> build_model(const TrainingJob& job, std::size_t input_width, std::size_t output_width) {
  return Model::build(job.model, input_width, output_width);
}

Result<Model> build_initialized_model(const TrainingJob& job, std::size_t input_width,
                                      std::size_t output_width) {
  auto model = build_model(job, input_width, output_width);
  if (model) model->initialize(derive_seed(job.training.seed, RandomStream::initial_weights));
  return model;
}

Result<std::unique_ptr<Optimizer>> build_optimizer(const TrainingJob& job, const ParameterLayout& layout) {
  const auto entry = find_optimizer(job.optimizer.name);
  if (!entry) return Error{fmt::format("unknown optimizer '{}'", job.optimizer.name)};
  Settings settings = job.optimizer.settings;
  // With a schedule, learn_rate only records the schedule's first value, which may be 0 (a warm-up
  // starts there); every step's rate is the schedule's, checked against the run when the config was read.
  if (job.optimizer.has_schedule()) settings["learn_rate"] = SettingValue{1.0};
  if (auto missing = fill_defaults(entry->settings, settings))
    return Error{fmt::format("optimizer '{}': missing setting '{}'", job.optimizer.name, *missing)};
  for (const auto& spec : entry->settings)
    if (auto expected = check_setting(spec, settings.at(spec.name)))
      return Error{fmt::format("optimizer '{}': {}: expected {}", job.optimizer.name, spec.name, *expected)};
  auto optimizer = entry->build(settings, layout);
  if (job.optimizer.has_schedule()) {
    auto schedule = learn_rate_schedule(job.optimizer);
    if (!schedule) return Error{fmt::format("optimizer.learn_rate: {}", schedule.error())};
    optimizer->set_learn_rate_schedule(std::move(schedule).value());
  }
  return Result<std::unique_ptr<Optimizer>>(std::move(optimizer));
}

std::uint64_t worker_data_seed(std::uint64_t seed, std::size_t worker) {
  return derive_seed(seed + worker, RandomStream::data_order);
}

std::uint64_t worker_dropout_seed(std::uint64_t seed, std::size_t worker) {
  return derive_seed(seed + worker, RandomStream::dropout);
}

}  // namespace psgrad
