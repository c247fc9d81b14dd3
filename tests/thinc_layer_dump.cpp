// Runs one forward and backprop of a model config's layer graph on given weights, input and d(output),
// for tests/thinc_layers_test.py to compare with real Thinc on the same arrays. Reads FOLDER/X.npy,
// dY.npy and params.npy (every parameter array, flat, in Thinc's model.walk() order) and writes Y.npy,
// dX.npy and grads.npy (the parameter gradients, the same order); prints the layout, one array a line.
#include <string>
#include <vector>

#include "io/config.hpp"
#include "io/npy_array.hpp"
#include "tests/npy_dump.hpp"
#include "model/aligned_floats.hpp"
#include "model/combinators.hpp"
#include "model/layer_registry.hpp"

using psgrad::testing::fail;
using psgrad::testing::floats;
using psgrad::testing::write_npy;

int main(int argc, char** argv) {
  if (argc != 4) return fail("usage: thinc_layer_dump CONFIG.cfg CLASSES FOLDER");
  const std::string text = psgrad::testing::file_text(argv[1]);
  auto config = psgrad::parse_config(text, argv[1]);
  if (!config) return fail(config.error());
  if (config->model.graph.empty()) return fail("the config's [model] is not a layer graph");
  const std::string folder = argv[3];
  auto x_file = psgrad::read_npy_file(folder + "/X.npy");
  auto dy_file = psgrad::read_npy_file(folder + "/dY.npy");
  auto params_file = psgrad::read_npy_file(folder + "/params.npy");
  if (!x_file || !dy_file || !params_file) return fail("cannot read X.npy, dY.npy or params.npy");
  const auto rows = static_cast<std::size_t>(x_file->shape.at(0));
  const auto width = static_cast<std::size_t>(x_file->shape.at(1));
  auto built = psgrad::build_layers(config->model.graph, width, std::stoul(argv[2]));
  if (!built) return fail(built.error());
  psgrad::Chain model(std::move(*built));
  psgrad::ParameterLayout layout;
  model.declare_parameters("model", layout);
  const auto params = floats(*params_file);
  if (params.size() != layout.total_size())
    return fail("Thinc's parameters hold " + std::to_string(params.size()) + " floats, psgrad's layout " +
                std::to_string(layout.total_size()) + ":\n" + layout.describe());
  psgrad::AlignedFloats weights(params.begin(), params.end());
  psgrad::AlignedFloats gradients(layout.total_size(), 0.0f);
  model.bind(weights.data(), gradients.data(), layout);
  model.reserve(rows);
  const auto x = floats(*x_file);
  const auto dy = floats(*dy_file);
  psgrad::Random rng(0);
  const auto y = model.forward(psgrad::ConstMatrixMap(x.data(), rows, width), false, rng);
  if (dy.size() != static_cast<std::size_t>(y.size())) return fail("dY does not have Y's shape");
  const auto dx = model.backward(psgrad::ConstMatrixMap(dy.data(), rows, y.cols()), true);
  if (!write_npy(folder + "/Y.npy", {rows, static_cast<std::uint64_t>(y.cols())}, y.data(), y.size()) ||
      !write_npy(folder + "/dX.npy", {rows, width}, dx.data(), dx.size()) ||
      !write_npy(folder + "/grads.npy", {gradients.size()}, gradients.data(), gradients.size()))
    return fail("cannot write the results into " + folder);
  std::printf("%s", layout.describe().c_str());
  return 0;
}
