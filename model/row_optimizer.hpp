// The interface of a lazy, row-wise optimizer of one embedding table: it steps only the rows a gradient
// names, and keeps each row's state (moments, accumulators, step count) by the row's slot in the table.
#pragma once

#include <cstddef>
#include <string>

namespace psgrad {

class RowOptimizer {
 public:
  virtual ~RowOptimizer() = default;
  virtual std::string name() const = 0;
  virtual std::size_t width() const = 0;

  // The norm a table's gradient is clipped to; 0: no clipping. Thinc clips each parameter array by its
  // own norm, and a table is one array whose untouched rows add nothing to that norm.
  virtual double grad_clip() const = 0;

  // Steps one row in place from gradient * gradient_scale. slot is the row's place in its table, stable
  // for the table's life; the state of a slot is created on its first update and read only by its own.
  virtual void update_row(std::size_t slot, float* row, const float* gradient, float gradient_scale) = 0;
};

}  // namespace psgrad
