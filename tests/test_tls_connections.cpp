// TLS connections through CAF's OpenSSL module stay independent: what goes wrong on one connection
// (a peer gone without a TLS goodbye, bytes that are not TLS) does not close another.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "caf/all.hpp"
#include "caf/io/all.hpp"
#include "caf/openssl/all.hpp"
#include "actors/actor_config.hpp"
#include "runtime/tls_error_queue.hpp"
#include "transport/unique_socket.hpp"
#include "temp_folder.hpp"

using namespace psgrad;

namespace {

// A CA and two certificates it signs, made with the openssl command as an operator would.
struct TlsFiles {
  testing::TempFolder folder{"tls"};
  bool made = false;

  TlsFiles() {
    const auto dir = folder.path.string();
    auto run = [](const std::string& command) { return std::system((command + " 2>/dev/null").c_str()) == 0; };
    made = run(fmt::format("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=ca -keyout {0}/ca.key "
                           "-out {0}/ca.pem",
                           dir));
    for (const char* name : {"server", "client"}) {
      made = made &&
             run(fmt::format("openssl req -newkey rsa:2048 -nodes -subj /CN={1} -keyout {0}/{1}.key -out {0}/{1}.csr",
                             dir, name)) &&
             run(fmt::format("openssl x509 -req -in {0}/{1}.csr -CA {0}/ca.pem -CAkey {0}/ca.key -CAcreateserial "
                             "-days 2 -out {0}/{1}.pem",
                             dir, name));
    }
  }

  NetworkSettings network(const std::string& name) const {
    NetworkSettings settings;
    const auto dir = folder.path.string();
    settings.tls = TlsSettings{dir + "/" + name + ".pem", dir + "/" + name + ".key", dir + "/ca.pem"};
    return settings;
  }
};

caf::behavior add_one() {
  return {[](int x) { return x + 1; }};
}

std::optional<int> ask(caf::actor_system& system, const caf::actor& actor, int x) {
  std::optional<int> answer;
  caf::scoped_actor self{system};
  self->request(actor, std::chrono::seconds(5), x).receive([&](int y) { answer = y; }, [](caf::error&) {});
  return answer;
}

// Sends bytes that are not TLS to the port and waits until the server has given up on them.
void send_garbage(std::uint16_t port) {
  UniqueSocket socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(socket);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(socket.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  const std::string garbage = "GET / HTTP/1.0\r\n\r\n";
  REQUIRE(::send(socket.get(), garbage.data(), garbage.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(garbage.size()));
  timeval wait{5, 0};
  ::setsockopt(socket.get(), SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  char buffer[256];
  while (::recv(socket.get(), buffer, sizeof buffer, 0) > 0) {
  }
}

}  // namespace

TEST_CASE("psgrad gives each TLS call of CAF an empty OpenSSL error queue") {
  CHECK(tls_error_queue_isolated());
}

TEST_CASE("a TLS peer gone without a goodbye, or bytes that are not TLS, leave other TLS connections open") {
  const TlsFiles files;
  REQUIRE_MESSAGE(files.made, "the openssl command could not make test certificates");
  ActorConfig server_config(1, files.network("server"));
  caf::actor_system server_system{server_config};
  auto actor = server_system.spawn(add_one);
  auto port = caf::openssl::publish(actor, 0, "127.0.0.1", true);
  REQUIRE(port);

  ActorConfig client_config(1, files.network("client"));
  caf::actor_system client_system{client_config};
  auto remote = caf::openssl::remote_actor(client_system, "127.0.0.1", *port);
  REQUIRE(remote);
  CHECK(ask(client_system, *remote, 1) == 2);

  SUBCASE("a peer process that goes away without closing TLS") {
    {
      ActorConfig passing_config(1, files.network("client"));
      caf::actor_system passing_system{passing_config};
      auto passing = caf::openssl::remote_actor(passing_system, "127.0.0.1", *port);
      REQUIRE(passing);
      CHECK(ask(passing_system, *passing, 10) == 11);
    }  // its sockets close without a close_notify: OpenSSL 3 reports "unexpected eof" on the server
  }
  SUBCASE("a client that sends bytes that are not TLS") { send_garbage(*port); }

  // The server's next reads on the first connection must not fail on the other connection's error.
  for (int x = 100; x < 105; ++x) {
    const auto answer = ask(client_system, *remote, x);
    CHECK(answer == x + 1);
    if (!answer) break;
  }
  caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
}
