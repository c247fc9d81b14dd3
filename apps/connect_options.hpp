// The options `work` and `shard` share to reach a server: address, token, TLS identity, threads.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "actors/actor_config.hpp"
#include "apps/host_port.hpp"
#include "model/result.hpp"
#include "transport/remote_client.hpp"

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

// What `work` and `shard` settle before their actor system starts.
struct ServerContact {
  HostPort address;         // --connect
  NetworkSettings network;  // TLS when any of the TLS files is given
  RetryPolicy retry;        // dialling with backoff, over TLS when the network is
};

// With --launched, first reads the join token from standard input into options.token (see
// launched_role.hpp). An error is one line to follow "psgrad <role>: ".
Result<ServerContact> server_contact(ConnectOptions& options);

}  // namespace psgrad
