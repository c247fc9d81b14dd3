// Steps a config's optimizer over given gradients, for tests/thinc_optimizers_test.py to compare with
// real Thinc's optimizer on the same arrays. Reads FOLDER/weights.npy (the initial weights of ARRAYS
// equal arrays, flat) and gradients.npy (steps x weights); writes FOLDER/stepped.npy, and averages.npy
// when the optimizer keeps weight averages.
#include <string>
#include <vector>

#include "actors/training_job.hpp"
#include "io/config.hpp"
#include "io/npy_array.hpp"
#include "tests/npy_dump.hpp"

using psgrad::testing::fail;
using psgrad::testing::floats;
using psgrad::testing::write_npy;

int main(int argc, char** argv) {
  if (argc != 4) return fail("usage: thinc_optimizer_dump CONFIG.cfg ARRAYS FOLDER");
  const std::string text = psgrad::testing::file_text(argv[1]);
  auto config = psgrad::parse_config(text, argv[1]);
  if (!config) return fail(config.error());
  const std::string folder = argv[3];
  auto weights_file = psgrad::read_npy_file(folder + "/weights.npy");
  auto gradients_file = psgrad::read_npy_file(folder + "/gradients.npy");
  if (!weights_file || !gradients_file) return fail("cannot read weights.npy or gradients.npy");
  auto weights = floats(*weights_file);
  const auto gradients = floats(*gradients_file);
  const auto arrays = std::stoul(argv[2]);
  psgrad::ParameterLayout layout;
  for (std::size_t a = 0; a < arrays; ++a) layout.add("layer" + std::to_string(a), "W", 1, weights.size() / arrays);
  auto optimizer = psgrad::build_optimizer(*config, layout);
  if (!optimizer) return fail(optimizer.error());
  for (std::size_t at = 0; at + weights.size() <= gradients.size(); at += weights.size())
    (*optimizer)->apply_gradients(weights.data(), gradients.data() + at);
  if (!write_npy(folder + "/stepped.npy", {weights.size()}, weights.data(), weights.size()))
    return fail("cannot write stepped.npy");
  if (const float* averages = (*optimizer)->averages())
    if (!write_npy(folder + "/averages.npy", {weights.size()}, averages, weights.size()))
      return fail("cannot write averages.npy");
  return 0;
}
