// The options `work` and `shard` share to reach a server: address, token, TLS identity, threads.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "actors/actor_config.hpp"
#include "model/result.hpp"

namespace psgrad {

struct ConnectOptions {
  std::string connect;  // the server's HOST:PORT
  std::string token;    // the join token the server expects
  int threads = 0;      // CAF scheduler threads; 0: one per core
  std::string tls_certificate, tls_key, tls_ca;  // connect over TLS with this identity
  bool launched = false;  // started by `psgrad launch`: the token comes on standard input
};

void add_connect_options(CLI::App& command, ConnectOptions& options);

// The actor system's network settings: TLS when any of the TLS files is given.
NetworkSettings network_settings(const ConnectOptions& options);

// With --launched, reads the join token from standard input into options.token (see launched_role.hpp).
Status take_launched_token(ConnectOptions& options);

}  // namespace psgrad
