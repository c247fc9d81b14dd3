// What an architecture with embedding tables puts before its dense chain: one HashEmbed per field,
// pooled, concatenated, then the numeric columns.
#pragma once

#include <vector>

#include "model/hashembed.hpp"
#include "model/number_scaling.hpp"
#include "model/pooling.hpp"

namespace psgrad {

struct EmbeddingFront {
  std::vector<HashEmbedSpec> fields;  // fields[i].column == i
  Pooling pooling = Pooling::mean;
  NumberScaling numbers = NumberScaling::as_is;  // how the numeric columns enter, after the embeddings
};

}  // namespace psgrad
