// The GEMM blocking is pinned, so the first layer's products are the same bits on every host.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <cstring>
#include <vector>

#include "model/gemm_blocking.hpp"
#include "model/random.hpp"
#include "model/relu.hpp"
#include "tests/gradient_check.hpp"

using namespace psgrad;
using psgrad::testing::random_values;

namespace {

// The L1 size Eigen plans with, put back when the test ends, also when it fails.
struct PlannedL1 {
  std::ptrdiff_t saved = Eigen::l1CacheSize();
  void set(std::ptrdiff_t l1) const { Eigen::setCpuCacheSizes(l1, Eigen::l2CacheSize(), Eigen::l3CacheSize()); }
  ~PlannedL1() { set(saved); }
};

// The tutorial's first layer on a batch of 128: 784 inputs, the one inner dimension Eigen cuts.
std::vector<float> first_layer_output(Relu& relu, const std::vector<float>& input) {
  Random rng(0);
  const ConstMatrixMap x(input.data(), 128, 784);
  const auto y = relu.forward(x, false, rng);
  return std::vector<float>(y.data(), y.data() + y.size());
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("a dense layer makes Eigen plan its products with the pinned L1 size, whatever the CPU reports") {
  Relu relu(128, 784);
  CHECK(Eigen::l1CacheSize() == gemm_l1_bytes);
}

TEST_CASE("the first layer's bits depend on the L1 size Eigen plans with, so pinning it makes hosts agree") {
  Relu relu(128, 784);
  ParameterLayout layout;
  relu.declare_parameters("relu1", layout);
  std::vector<float> weights = random_values(layout.total_size(), 1);
  std::vector<float> gradients(layout.total_size());
  relu.bind(weights.data(), gradients.data(), layout);
  relu.reserve(128);
  const std::vector<float> input = random_values(128 * 784, 2);

  const PlannedL1 planned;
  const auto pinned = first_layer_output(relu, input);
  planned.set(48 * 1024);  // what a CPU with a 48 KB L1 reports: the inner products cut at 400, not 264
  const auto other_host = first_layer_output(relu, input);
  planned.set(gemm_l1_bytes);
  const auto pinned_again = first_layer_output(relu, input);

  CHECK_FALSE(same_bits(pinned, other_host));
  CHECK(same_bits(pinned, pinned_again));
}
