#include "transport/basp_adapter.hpp"

#include "caf/io/all.hpp"

namespace psgrad {

namespace {

caf::actor basp_broker(caf::actor_system& system) {
  return system.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
}

}  // namespace

void hand_accepted_socket_to_caf(caf::actor_system& system, int fd, std::uint16_t port,
                                 const caf::strong_actor_ptr& published, const std::set<std::string>& interface) {
  auto scribe = system.middleman().backend().new_scribe(fd);
  caf::anon_send(basp_broker(system), caf::publish_atom_v, std::move(scribe), port, published, interface);
}

void close_published_port(caf::actor_system& system, std::uint16_t port) {
  caf::anon_send(basp_broker(system), caf::close_atom_v, port);
}

caf::expected<PublishedActor> connect_socket_through_caf(caf::actor_system& system, int fd, std::uint16_t port,
                                                         std::chrono::milliseconds timeout) {
  auto scribe = system.middleman().backend().new_scribe(fd);
  caf::scoped_actor self{system};
  caf::expected<PublishedActor> result{caf::sec::request_timeout};
  self->request(basp_broker(system), timeout, caf::connect_atom_v, std::move(scribe), port)
      .receive(
          [&](caf::node_id&, caf::strong_actor_ptr& published, std::set<std::string>& interface) {
            result = PublishedActor{std::move(published), std::move(interface)};
          },
          [&](caf::error& error) { result = std::move(error); });
  return result;
}

}  // namespace psgrad
