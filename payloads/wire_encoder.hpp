// Puts weights and gradients into the run's wire encoding (cluster.wire): the worker encodes each
// gradient it sends, the server each weights snapshot it hands out; the receiver gets plain floats.
#pragma once

#include <memory>
#include <optional>

#include "payloads/float_buffer.hpp"
#include "model/gradient_compressor.hpp"
#include "model/parameter_layout.hpp"
#include "model/wire_encoding.hpp"

namespace psgrad {

class GradientEncoder {
 public:
  GradientEncoder(WireEncoding wire, const ParameterLayout& layout, double topk_fraction);

  // Takes a freshly computed gradient that nobody else holds yet: fp32 as it is, bf16 rounded in
  // place, topk compressed in place (what it leaves out is added to the next gradient).
  FloatBuffer encode(std::shared_ptr<AlignedFloats> gradient);

 private:
  WireEncoding wire_;
  std::optional<TopKCompressor> compressor_;  // topk only: holds this worker's residual
};

class WeightsEncoder {
 public:
  WeightsEncoder(WireEncoding wire, std::size_t size);

  // The weights as workers receive them: the master buffer itself (fp32), or a bf16-rounded copy, so
  // the master keeps every bit and can still be stepped in place.
  FloatBuffer encode(const std::shared_ptr<const float>& master, std::size_t size);
  WireEncoding encoding() const { return encoding_; }

 private:
  WireEncoding encoding_;
  BufferPool pool_;  // bf16 copies
};

}  // namespace psgrad
