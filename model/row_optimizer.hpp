// The interface of a lazy, row-wise optimizer of one embedding table: it steps only the rows a gradient
// names, and keeps each row's state (moments, accumulators, step count) by the row's slot in the table.
#pragma once

#include <cstddef>
#include <cstdint>
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
  // A hint that slot is updated soon: its state may be fetched into the cache meanwhile, as rows of a
  // large table are far apart and each update would otherwise wait for memory.
  virtual void prefetch_row(std::size_t /*slot*/) const {}

  // A row's state, for checkpoints: state_width() floats and a step count per slot. A slot never stepped
  // reads as the state its first update would start from, so restoring it changes nothing.
  virtual std::size_t state_width() const = 0;
  // Writes slot's state_width() floats to out and returns its step count.
  virtual std::uint64_t read_row_state(std::size_t slot, float* out) const = 0;
  // Gives slot the state read_row_state read out (of the same optimizer kind and width).
  virtual void restore_row_state(std::size_t slot, const float* state, std::uint64_t steps) = 0;
};

}  // namespace psgrad
