// Registers the connection options on a subcommand, and turns them into the server's address and how to reach it.
#include "apps/connect_options.hpp"

#include <fmt/format.h>

#include "apps/launched_role.hpp"
#include "io/config.hpp"

namespace psgrad {

void add_connect_options(CLI::App& command, ConnectOptions& options) {
  command.add_option("--connect", options.connect, "server address HOST:PORT")->required();
  command.add_option("--threads", options.threads, "CAF scheduler threads (default 1: the process runs one actor, and CAF's network layer has a "
                     "thread of its own; 0: one per core)")
      ->check(CLI::Range(std::int64_t{0}, max_scheduler_threads));
  command.add_option("--token", options.token, fmt::format("join token the server expects (default ${})",
                                                           join_token_variable))
      ->envname(join_token_variable);
  command.add_option("--tls-cert", options.tls_certificate, "PEM certificate of this process (TLS)");
  command.add_option("--tls-key", options.tls_key, "PEM private key of this process (TLS)");
  command.add_option("--tls-ca", options.tls_ca, "PEM CA certificate the server's certificate must be signed by");
  command.add_flag("--launched", options.launched,
                   "started by `psgrad launch`: read the join token from the first line of standard input, "
                   "and stop when standard input closes");
}

Result<ServerContact> server_contact(ConnectOptions& options) {
  if (options.launched) {
    auto token = take_launch_token(LaunchedAs::follower);
    if (!token) return Error{token.error()};
    options.token = *token;
  }
  auto address = parse_host_port(options.connect);
  if (!address) return Error{"--connect: " + address.error()};
  ServerContact contact;
  contact.address = *address;
  contact.network.tls = TlsSettings{options.tls_certificate, options.tls_key, options.tls_ca};
  contact.retry.tls = contact.network.tls.enabled();
  return contact;
}

}  // namespace psgrad
