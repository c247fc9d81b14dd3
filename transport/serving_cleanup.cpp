#include "transport/serving_cleanup.hpp"

#include <chrono>

#include "caf/all.hpp"

namespace psgrad {

namespace {

// Ends `actor` with `reason` and waits (at most 5 s) until it is down, so its process exits first.
void end_and_wait(caf::scoped_actor& self, const caf::actor& actor, caf::error reason) {
  self->monitor(actor);
  self->send_exit(actor, std::move(reason));
  self->receive([](const caf::down_msg&) {}, caf::after(std::chrono::seconds(5)) >> [] {});
}

}  // namespace

ServingCleanup::~ServingCleanup() {
  caf::scoped_actor self{system_};
  const auto reason = [this] {
    return failure_ ? caf::make_error(caf::sec::runtime_error, *failure_) : caf::error{caf::exit_reason::user_shutdown};
  };
  if (watch_) end_and_wait(self, watch_, caf::exit_reason::user_shutdown);
  for (const auto& shard : parameter_shards_) {
    // A failed run's shard processes say why and exit non-zero.
    if (failure_) end_and_wait(self, caf::actor_cast<caf::actor>(shard), reason());
    else self->request(shard, std::chrono::seconds(5), stop_atom::value).receive([](bool) {}, [](caf::error&) {});
  }
  for (const auto& shard : table_shards_) end_and_wait(self, caf::actor_cast<caf::actor>(shard), reason());
  // A plain port is the gate's, closed with it. CAF 0.17.6's openssl::unpublish does not compile (it uses a
  // 0.18 atom); a TLS port closes when the actor system shuts down instead.
  gate_.reset();
  for (const auto& actor : actors_) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
}

}  // namespace psgrad
