#include "payloads/wire_encoder.hpp"

#include "model/bf16.hpp"

namespace psgrad {

GradientEncoder::GradientEncoder(WireEncoding wire, const ParameterLayout& layout, double topk_fraction)
    : wire_(wire) {
  if (wire_ == WireEncoding::topk) compressor_.emplace(layout, topk_fraction);
}

FloatBuffer GradientEncoder::encode(std::shared_ptr<AlignedFloats> gradient) {
  if (wire_ == WireEncoding::bf16) round_to_bf16(gradient->data(), gradient->data(), gradient->size());
  if (compressor_) compressor_->compress(gradient->data());
  return FloatBuffer(std::move(gradient), wire_);
}

WeightsEncoder::WeightsEncoder(WireEncoding wire, std::size_t size)
    : encoding_(weights_encoding(wire)), pool_(encoding_ == WireEncoding::fp32 ? 0 : size) {}

FloatBuffer WeightsEncoder::encode(const std::shared_ptr<const float>& master, std::size_t size) {
  if (encoding_ == WireEncoding::fp32) return FloatBuffer(master, size);
  auto rounded = pool_.acquire();
  round_to_bf16(master.get(), rounded->data(), size);
  return FloatBuffer(std::move(rounded), encoding_);
}

}  // namespace psgrad
