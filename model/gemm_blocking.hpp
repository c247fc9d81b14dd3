// One GEMM blocking on every host, so that every host computes the same bits.
#pragma once

#include <cstddef>

namespace psgrad {

// The L1 size Eigen plans products with, whatever the CPU reports (Eigen's own default for x86).
inline constexpr std::ptrdiff_t gemm_l1_bytes = 32 * 1024;

// Eigen cuts a product's inner dimension into blocks sized to the L1 cache the CPU reports (the first
// layer's 784 inputs: blocks of 264 with 32 KB, of 400 with 48 KB), and each cut sums in another
// order. So hosts with different L1 caches computed different gradients from the same weights, and a
// sync run's weights differed between them. This makes Eigen plan with gemm_l1_bytes for the whole
// process. L2 and L3 stay as reported: they size blocks of rows and columns only, which leaves the
// order of every sum alone. Runs once (thread-safe); every dense layer calls it when it is made, so
// before its first product.
void pin_gemm_blocking();

}  // namespace psgrad
