// Steps a config's optimizer over given gradients, for tests/thinc_optimizers_test.py to compare with
// real Thinc's optimizer on the same arrays. Reads FOLDER/weights.npy (the initial weights of ARRAYS
// equal arrays, flat) and gradients.npy (steps x weights); writes FOLDER/stepped.npy, and averages.npy
// when the optimizer keeps weight averages.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "actors/training_job.hpp"
#include "io/config.hpp"
#include "io/npy_array.hpp"

namespace {

std::vector<float> floats(const psgrad::NpyArray& array) {
  std::vector<float> values(array.element_count());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(array.value(i));
  return values;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return fail("usage: thinc_optimizer_dump CONFIG.cfg ARRAYS FOLDER");
  std::ifstream file(argv[1], std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
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
  std::ofstream out(folder + "/stepped.npy", std::ios::binary);
  out << psgrad::npy_bytes(psgrad::npy_array({weights.size()}, weights));
  if (const float* averages = (*optimizer)->averages()) {
    std::ofstream averaged(folder + "/averages.npy", std::ios::binary);
    averaged << psgrad::npy_bytes(psgrad::npy_array({weights.size()}, std::vector<float>(averages, averages + weights.size())));
  }
  return out ? 0 : fail("cannot write stepped.npy");
}
