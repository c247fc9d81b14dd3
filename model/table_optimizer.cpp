#include "model/table_optimizer.hpp"

#include <fmt/format.h>

#include "model/registry.hpp"
#include "model/settings.hpp"

namespace psgrad {

TableOptimizerChoice table_optimizer_choice(const TablesSection& tables) {
  TableOptimizerChoice choice;
  if (tables.optimizer != "adagrad") return choice;
  choice.kind = TableOptimizerKind::adagrad;
  choice.adagrad.learn_rate = tables.learn_rate;
  choice.adagrad.initial_accumulator = tables.initial_accumulator;
  choice.adagrad.eps = tables.eps;
  choice.adagrad.grad_clip = tables.grad_clip;
  return choice;
}

Result<LazyAdamSettings> lazy_adam_settings(const OptimizerSection& optimizer) {
  if (optimizer.name != "Adam.v1")
    return Error{fmt::format("embedding tables step with lazy Adam, which takes Adam.v1's settings, not {}'s",
                             optimizer.name)};
  if (optimizer.has_schedule())
    return Error{fmt::format("embedding tables' lazy Adam has no learning-rate schedule, and optimizer.learn_rate "
                             "is {}",
                             optimizer.schedule.empty() ? std::string("a list") : optimizer.schedule)};
  const auto entry = find_optimizer(optimizer.name);
  if (!entry) return Error{"Adam.v1 is not registered"};
  Settings settings = optimizer.settings;
  if (auto missing = fill_defaults(entry->settings, settings))
    return Error{fmt::format("optimizer 'Adam.v1': missing setting '{}'", *missing)};
  for (const auto& spec : entry->settings)
    if (auto expected = check_setting(spec, settings.at(spec.name)))
      return Error{fmt::format("optimizer 'Adam.v1': {}: expected {}", spec.name, *expected)};
  // use_averages is the dense part's: rows step lazily and keep none (training.with_averages is refused).
  LazyAdamSettings adam;
  adam.learn_rate = get_number(settings, "learn_rate");
  adam.beta1 = get_number(settings, "beta1");
  adam.beta2 = get_number(settings, "beta2");
  adam.eps = get_number(settings, "eps");
  adam.grad_clip = get_number(settings, "grad_clip");
  adam.L2 = get_number(settings, "L2");
  if (adam.L2 != 0.0 && !get_boolean(settings, "L2_is_weight_decay"))
    return Error{"embedding tables' lazy Adam decays only the rows it steps: optimizer.L2_is_weight_decay must be "
                 "true when L2 is set"};
  return adam;
}

Result<double> table_grad_clip(const TableOptimizerChoice& choice, const OptimizerSection& optimizer) {
  if (choice.kind == TableOptimizerKind::adagrad) return choice.adagrad.grad_clip;
  auto adam = lazy_adam_settings(optimizer);
  if (!adam) return Error{adam.error()};
  return adam->grad_clip;
}

Result<std::unique_ptr<RowOptimizer>> build_row_optimizer(const TableOptimizerChoice& choice,
                                                          const OptimizerSection& optimizer, std::size_t width) {
  if (choice.kind == TableOptimizerKind::adagrad)
    return std::unique_ptr<RowOptimizer>(std::make_unique<SparseAdagrad>(choice.adagrad, width));
  auto adam = lazy_adam_settings(optimizer);
  if (!adam) return Error{adam.error()};
  return std::unique_ptr<RowOptimizer>(std::make_unique<LazyAdam>(*adam, width));
}

}  // namespace psgrad
