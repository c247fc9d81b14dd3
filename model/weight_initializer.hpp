// Thinc's registered initializers, as a layer's init_W or init_b section chooses them
// (`[model.*.relu1.init_W] @initializers = "he_normal_init.v1"`), with Thinc 8.1.7's definitions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/layer_spec.hpp"
#include "model/random.hpp"
#include "model/result.hpp"
#include "model/settings.hpp"

namespace psgrad {

struct InitializerEntry {
  std::string name;  // "glorot_uniform_init.v1"
  std::string description;
  std::vector<SettingSpec> arguments;  // uniform_init's lo and hi, normal_init's mean
  bool uses_fans = false;              // its scale comes from the array's first two axes
};

const std::vector<InitializerEntry>& initializer_entries();
const InitializerEntry* find_initializer(const std::string& name);
std::vector<std::string> initializer_names();

// One initializer with its arguments, ready to fill an array of a given shape (Thinc's shape: W of a
// dense layer is (nO, nI), Maxout's (nO, nP, nI)).
class WeightInitializer {
 public:
  // The spec's initializer for an array of `rank` axes; an error names what does not fit (an unknown
  // name or argument, or fans of a one-axis array, on which Thinc fails too).
  static Result<WeightInitializer> make(const InitializerSpec& spec, std::size_t rank);
  void fill(float* values, const std::vector<std::size_t>& shape, Random& rng) const;

 private:
  std::string name_;
  double low_ = 0.0, high_ = 0.0, mean_ = 0.0;
};

// A dense layer's chosen initializers; unset: the layer's own default.
struct ArrayInitializers {
  std::optional<WeightInitializer> weights;  // init_W
  std::optional<WeightInitializer> bias;     // init_b
};

// A layer's init_W and init_b from its spec, for W of w_rank axes and b of b_rank.
Result<ArrayInitializers> array_initializers(const LayerSpec& spec, std::size_t w_rank, std::size_t b_rank);

}  // namespace psgrad
