// How a run's embedding tables step: lazy Adam following the run's Adam.v1 settings, or Adagrad with
// its own; one row optimizer per table (and per shard of it).
#pragma once

#include <cstddef>
#include <memory>

#include "model/job.hpp"
#include "model/lazy_adam.hpp"
#include "model/result.hpp"
#include "model/row_optimizer.hpp"
#include "model/sparse_adagrad.hpp"

namespace psgrad {

enum class TableOptimizerKind { lazy_adam, adagrad };

struct TableOptimizerChoice {
  TableOptimizerKind kind = TableOptimizerKind::lazy_adam;
  AdagradSettings adagrad;  // when kind is adagrad
};

// The choice [tables] makes (an optimizer it does not name is lazy Adam: the config has checked it).
TableOptimizerChoice table_optimizer_choice(const TablesSection& tables);

// Lazy Adam's settings from the run's optimizer section: Adam.v1's learn_rate, beta1, beta2, eps, grad_clip
// and decoupled L2. An error names what lazy Adam cannot follow: another optimizer, coupled L2 or a
// learning-rate schedule. Rows keep no weight averages; use_averages keeps the dense part's.
Result<LazyAdamSettings> lazy_adam_settings(const OptimizerSection& optimizer);

// The grad_clip the tables' optimizer clips to (0: none), or why it cannot be built.
Result<double> table_grad_clip(const TableOptimizerChoice& choice, const OptimizerSection& optimizer);

// A row optimizer for a table of `width`.
Result<std::unique_ptr<RowOptimizer>> build_row_optimizer(const TableOptimizerChoice& choice,
                                                          const OptimizerSection& optimizer, std::size_t width);

}  // namespace psgrad
