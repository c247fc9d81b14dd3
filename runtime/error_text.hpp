// Turns a caf::error into the one-line text psgrad shows: the context string when there is one, else
// plain words for the error code; never CAF's own rendering (system_error(...)).
#pragma once

#include <string>

#include "caf/actor_system.hpp"
#include "caf/error.hpp"
#include "caf/exit_reason.hpp"
#include "caf/sec.hpp"

namespace psgrad {

inline std::string plain_words(caf::sec code) {
  switch (code) {
    case caf::sec::request_timeout: return "no answer in time";
    case caf::sec::request_receiver_down: return "the other side is gone";
    case caf::sec::cannot_connect_to_node: return "cannot connect";
    case caf::sec::cannot_open_port: return "cannot open the port";
    case caf::sec::disconnect_during_handshake: return "the other side hung up during the handshake";
    case caf::sec::connection_timeout: return "the connection timed out";
    case caf::sec::unexpected_message: return "the other side did not understand a message (another psgrad version?)";
    case caf::sec::incompatible_versions:
    case caf::sec::incompatible_application_ids: return "the other side runs an incompatible version";
    case caf::sec::malformed_basp_message: return "a malformed message arrived";
    case caf::sec::no_actor_published_at_port: return "nothing psgrad serves at that port";
    default: return "failed in the actor system (" + caf::to_string(code) + ")";
  }
}

inline std::string error_text(caf::actor_system& /*system*/, const caf::error& error) {
  const auto& context = error.context();
  if (context.match_elements<std::string>()) return context.get_as<std::string>(0);
  if (error.category() == caf::atom("system")) return plain_words(static_cast<caf::sec>(error.code()));
  if (error.category() == caf::atom("exit"))
    return "it stopped (" + caf::to_string(static_cast<caf::exit_reason>(error.code())) + ")";
  return "failed (error " + std::to_string(error.code()) + " of " + caf::to_string(error.category()) + ")";
}

}  // namespace psgrad
