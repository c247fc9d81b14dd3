// The error that says a payload arrived refused (FloatBuffer::refused): a server answers a push with
// it, a worker ends its loop with it when the weights it was sent were, and the driver drops that
// worker with it, as one whose process was lost, rather than ending the run.
#pragma once

#include <string>

#include "caf/atom.hpp"
#include "caf/error.hpp"
#include "caf/make_message.hpp"

namespace psgrad {

// `why` is what the driver's line says after the worker's name: "its shared-memory gradient failed
// its checksum (...)".
inline caf::error refused_payload_error(std::string why) {
  return caf::error{1, caf::atom("payload"), caf::make_message(std::move(why))};
}

inline bool is_refused_payload(const caf::error& error) { return error && error.category() == caf::atom("payload"); }

}  // namespace psgrad
