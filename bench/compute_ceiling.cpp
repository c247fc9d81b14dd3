// The products are written exactly as model/relu.cpp writes them (row-major maps over 64-byte aligned
// buffers), so the ceiling is what the model's own expressions can reach, not a tuned BLAS figure.
#include "bench/compute_ceiling.hpp"

#include <fmt/format.h>

#include "model/aligned_floats.hpp"
#include "model/gemm_blocking.hpp"
#include "model/matrix.hpp"
#include "model/random.hpp"

namespace psgrad::bench {

namespace {

// The operands of one dense layer at one batch size, filled with small random values.
struct LayerOperands {
  Eigen::Index batch, inputs, outputs;
  AlignedFloats x, w, y, d_y, d_w, d_x;

  LayerOperands(std::size_t batch_size, const DenseShape& shape, Random& rng)
      : batch(static_cast<Eigen::Index>(batch_size)),
        inputs(static_cast<Eigen::Index>(shape.inputs)),
        outputs(static_cast<Eigen::Index>(shape.outputs)) {
    auto fill = [&](AlignedFloats& buffer, Eigen::Index size) {
      buffer.resize(static_cast<std::size_t>(size));
      for (auto& value : buffer) value = static_cast<float>(rng.uniform() - 0.5);
    };
    fill(x, batch * inputs);
    fill(w, outputs * inputs);
    fill(y, batch * outputs);
    fill(d_y, batch * outputs);
    fill(d_w, outputs * inputs);
    fill(d_x, batch * inputs);
  }

  void forward() {
    MatrixMap(y.data(), batch, outputs).noalias() =
        ConstMatrixMap(x.data(), batch, inputs) * ConstMatrixMap(w.data(), outputs, inputs).transpose();
  }
  void weight_gradient() {
    MatrixMap(d_w.data(), outputs, inputs).noalias() =
        ConstMatrixMap(d_y.data(), batch, outputs).transpose() * ConstMatrixMap(x.data(), batch, inputs);
  }
  void input_gradient() {
    MatrixMap(d_x.data(), batch, inputs).noalias() =
        ConstMatrixMap(d_y.data(), batch, outputs) * ConstMatrixMap(w.data(), outputs, inputs);
  }
  double product_flops() const { return 2.0 * static_cast<double>(batch * inputs * outputs); }
};

Stats gflops(double flops_per_call, const Stats& seconds_per_call) {
  return scaled(reciprocal(seconds_per_call), flops_per_call * 1e-9);
}

}  // namespace

void measure_compute_ceiling(BenchContext& context, Report& report) {
  pin_gemm_blocking();  // the model's own blocking, as its layers plan it
  const std::size_t batch = context.job.training.batch_size;
  const std::size_t repeats = context.options.quick ? 1 : std::max<std::size_t>(context.effort.repeats, 5);
  const double seconds = context.effort.seconds_per_sample / 5.0;
  Random rng(1);
  std::vector<LayerOperands> layers;
  for (const auto& shape : context.shapes) layers.emplace_back(batch, shape, rng);
  auto& first = layers.front();

  auto measure = [&](const std::function<void()>& call) {
    return time_per_call(repeats, calls_for(seconds, call, 3), call);
  };
  const auto dims = fmt::format("{}x{}", batch, first.inputs);
  const auto forward = gflops(first.product_flops(), measure([&] { first.forward(); }));
  report.add({"ceiling.gemm_forward", "1 ceiling",
              fmt::format("GEMM Y = X·Wᵀ  {}·{}x{}", dims, first.inputs, first.outputs), forward, "GFLOP/s",
              "1 thread"});
  const auto weight_gradient = gflops(first.product_flops(), measure([&] { first.weight_gradient(); }));
  report.add({"ceiling.gemm_weight_gradient", "1 ceiling",
              fmt::format("GEMM dW = dYᵀ·X  {}x{}·{}", first.outputs, batch, dims), weight_gradient,
              "GFLOP/s", "1 thread"});
  const auto input_gradient = gflops(first.product_flops(), measure([&] { first.input_gradient(); }));
  report.add({"ceiling.gemm_input_gradient", "1 ceiling",
              fmt::format("GEMM dX = dY·W  {}x{}·{}x{}", batch, first.outputs, first.outputs, first.inputs),
              input_gradient, "GFLOP/s", "1 thread"});

  // The ceiling: every product of one training step (small layers included, dX skipped for the
  // first layer as the model does), so it is the best rate the model's own FLOP mix can run at.
  auto whole_step = [&] {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      layers[i].forward();
      layers[i].weight_gradient();
      if (i > 0) layers[i].input_gradient();
    }
  };
  const double step_flops = context.flops_per_sample * static_cast<double>(batch);
  context.baselines.ceiling_gflops = gflops(step_flops, measure(whole_step));
  report.add({"ceiling.gemm_step", "1 ceiling", "all GEMMs of one step = CEILING",
              context.baselines.ceiling_gflops, "GFLOP/s", "1 thread, FLOP-weighted"});
  report.add({"ceiling.flops_per_sample", "1 ceiling", "model FLOPs per training sample",
              exact(context.flops_per_sample * 1e-6), "MFLOP", "fwd + dW + dX(layers 2..)"});
}

}  // namespace psgrad::bench
