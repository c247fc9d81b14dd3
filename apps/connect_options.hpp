// The options `work` and `shard` share to reach a server: address, token, TLS identity, threads.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "actors/actor_config.hpp"
#include "model/result.hpp"

namespace psgrad {

// The environment variable that may hold the join token instead of --token: a command line is
// visible to every user of the machine, an environment only to its owner.
inline constexpr const char* join_token_variable = "PSGRAD_JOIN_TOKEN";

struct ConnectOptions {
  std::string connect;  // the server's HOST:PORT
  std::string token;    // the join token the server expects
  // CAF scheduler threads; 0: one per core. One carries the process's single actor: measured over loopback
  // (async, pipelined, 2 workers), 111-117k samples/s against 103-110k with one per core.
  int threads = 1;
  std::string tls_certificate, tls_key, tls_ca;  // connect over TLS with this identity
  bool launched = false;  // started by `psgrad launch`: the token comes on standard input
};

void add_connect_options(CLI::App& command, ConnectOptions& options);

// The actor system's network settings: TLS when any of the TLS files is given.
NetworkSettings network_settings(const ConnectOptions& options);

// With --launched, reads the join token from standard input into options.token (see launched_role.hpp).
Status take_launched_token(ConnectOptions& options);

}  // namespace psgrad
