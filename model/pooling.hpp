// Thinc's reduce_sum.v1, reduce_mean.v1, reduce_max.v1, reduce_first.v1 and reduce_last.v1: one row
// per example from the rows of its bag (an empty bag gives a row of zeros), and their backward.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace psgrad {

enum class Pooling { sum, mean, max, first, last };

// "sum", "mean", "max", "first" or "last", as settings spell them; nothing for any other text.
std::optional<Pooling> pooling_named(const std::string& name);
const char* pooling_name(Pooling pooling);

// rows holds offsets.back() rows of width floats; example e's bag is rows [offsets[e], offsets[e + 1]).
// Writes example e's pooled row at output + e * output_stride (a column block of a wider matrix).
// Mean adds each row times 1/length, in Thinc's order.
void pool(Pooling pooling, const float* rows, const std::vector<std::size_t>& offsets, std::size_t width,
          float* output, std::size_t output_stride);

// Each bag row's gradient from its example's pooled-row gradient (d_output, row e at e * d_stride):
// a copy for sum, times 1/length for mean; for max the row that held each column's maximum (the first
// of equal ones, as NumPy's argmax) gets it, for first and last that row; the others get 0. rows are
// the forward's (max reads them). Writes offsets.back() rows into d_rows.
void pool_backward(Pooling pooling, const float* d_output, std::size_t d_stride,
                   const std::vector<std::size_t>& offsets, std::size_t width, float* d_rows,
                   const float* rows = nullptr);

}  // namespace psgrad
