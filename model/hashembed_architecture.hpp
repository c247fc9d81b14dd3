// hashembed_mlp.v1: one HashEmbed table per id field in front of the tutorial's MLP.
#pragma once

#include "model/registry.hpp"

namespace psgrad {

Architecture hashembed_mlp_architecture();

}  // namespace psgrad
