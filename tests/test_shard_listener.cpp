// Where a shard process listens, and what a worker says when it cannot dial a shard.
#include <doctest/doctest.h>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/coordinator.hpp"
#include "transport/shard_listener.hpp"

using namespace psgrad;

TEST_CASE("a shard listens on the address this machine uses toward the server") {
  const auto loopback = local_address_toward("127.0.0.1", 4242);
  REQUIRE(loopback.ok());
  CHECK(*loopback == "127.0.0.1");
  const auto unknown = local_address_toward("no-such-host.invalid", 4242);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().find("no-such-host.invalid") != std::string::npos);
}

TEST_CASE("a worker that cannot dial a shard tries again, then names the shard, its address and --listen") {
  ActorConfig config{2};
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  CoordinatorSetup setup{"[training]\n", 1, "", 0xabc, 784, 10, nullptr};
  setup.remote_shards = 1;
  auto coordinator = spawn_coordinator(system, setup);
  auto stand_in = caf::actor_cast<ParameterServerActor>(system.spawn([] { return caf::behavior{[](int) {}}; }));
  // Port 1 on loopback: nothing listens there, so the dial is refused at once.
  bool joined = false;
  self->request(coordinator, std::chrono::seconds(5), join_shard_atom::value, std::uint32_t{1}, stand_in,
                std::uint64_t{0xabc}, std::string("127.0.0.1"), std::uint16_t{1},
                std::string())
      .receive([&](std::uint32_t) { joined = true; }, [](caf::error&) {});
  REQUIRE(joined);
  std::vector<std::string> retries;
  const auto dialled = dial_shards(system, coordinator, "", false,
                                   [&](const std::string& line) { retries.push_back(line); });
  REQUIRE_FALSE(dialled.ok());
  CHECK(dialled.error().find("(after 5 attempts)") != std::string::npos);
  REQUIRE(retries.size() == 4);
  CHECK(retries[0].find("cannot reach shard 1 at 127.0.0.1:1 yet") != std::string::npos);
  CHECK(dialled.error().find("cannot reach shard 1 at 127.0.0.1:1") != std::string::npos);
  CHECK(dialled.error().find("--listen") != std::string::npos);
  caf::anon_send_exit(stand_in, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(coordinator, caf::exit_reason::user_shutdown);
}
