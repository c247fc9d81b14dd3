// The gate a serving run listens behind, set from its config and serve's flags: the same for every model.
#pragma once

#include <cstdint>
#include <string>

#include "apps/join_token.hpp"
#include "io/config.hpp"
#include "model/result.hpp"

namespace psgrad {

// Address, TLS, join token and join timeout of a ServeSetup. Worker processes of
// our own (own_workers) get a token nobody else knows, so nothing else on this machine can pass the
// gate of a `train --processes` run.
template <class Setup>
Status set_serve_gate(Setup& setup, const Config& config, const std::string& token_flag, bool own_workers) {
  setup.host = config.cluster.host;
  setup.port = static_cast<std::uint16_t>(config.cluster.port);
  setup.tls = config.cluster.tls_ca.size() + config.cluster.tls_certificate.size() > 0;
  setup.token = token_flag.empty() ? config.cluster.join_token : token_flag;
  if (own_workers && setup.token.empty()) {
    auto token = new_join_token();
    if (!token) return Error{token.error()};
    setup.token = *token;
  }
  setup.join_timeout = config.cluster.join_timeout;
  return success();
}

}  // namespace psgrad
