// How weights and gradients travel between workers and servers: cluster.wire, from the config's text
// to the payloads.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/enum_names.hpp"

namespace psgrad {

// fp32: exact. bf16: weights and gradients rounded to bfloat16 (round to nearest even), 2 bytes a
// value; the server keeps fp32 master weights and sums in fp32. topk: weights exact, each gradient
// reduced to its largest entries per parameter array, the rest carried to the worker's next gradient
// (error feedback), sent as index-value pairs.
enum class WireEncoding { fp32, bf16, topk };

// The config's spellings (cluster.wire).
inline constexpr EnumName<WireEncoding> wire_encoding_names[] = {
    {WireEncoding::fp32, "fp32"}, {WireEncoding::bf16, "bf16"}, {WireEncoding::topk, "topk"}};

inline std::string wire_name(WireEncoding wire) { return name_in(wire_encoding_names, wire); }

// Nothing for anything but one of the spellings.
inline std::optional<WireEncoding> parse_wire_encoding(std::string_view text) {
  return value_in(wire_encoding_names, text);
}

// What the servers send back: bf16 weights under bf16; exact weights otherwise (top-k compresses
// gradients only).
inline WireEncoding weights_encoding(WireEncoding wire) {
  return wire == WireEncoding::bf16 ? WireEncoding::bf16 : WireEncoding::fp32;
}

}  // namespace psgrad
