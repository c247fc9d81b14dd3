// The join handshake: who the Coordinator admits, who it refuses, and when it releases the workers.
#include <doctest/doctest.h>

#include <optional>
#include <variant>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/coordinator.hpp"
#include "actors/error_text.hpp"

using namespace psgrad;

namespace {

struct Handshake {
  ActorConfig config{2};
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  CoordinatorActor coordinator;
  explicit Handshake(std::uint32_t workers, std::string token = "") {
    coordinator = spawn_coordinator(system, CoordinatorSetup{"[training]\n", workers, std::move(token), 0xabc,
                                                             784, 10, nullptr});
  }
  ~Handshake() { caf::anon_send_exit(coordinator, caf::exit_reason::user_shutdown); }

  // The offer's worker index, or the refusal text.
  std::variant<std::uint32_t, std::string> hello(std::uint32_t protocol, const std::string& token) {
    std::variant<std::uint32_t, std::string> outcome = std::string("no answer");
    self->request(coordinator, std::chrono::seconds(5), hello_atom::value, protocol, token, std::string("test"))
        .receive([&](const JoinOffer& offer) { outcome = offer.worker_index; },
                 [&](caf::error& error) { outcome = error_text(system, error); });
    return outcome;
  }
  std::string join(JoinRequest request) {
    std::string outcome = "no answer";
    self->request(coordinator, std::chrono::seconds(5), join_atom::value, request)
        .receive([&](std::uint32_t) { outcome = "joined"; },
                 [&](caf::error& error) { outcome = error_text(system, error); });
    return outcome;
  }
  DataWorkerActor fake_worker() {
    return system.spawn([]() -> DataWorkerActor::behavior_type {
      return {[](compute_atom, const Weights&) { return Gradients{}; },
              [](train_atom, const Weights&, const std::vector<ParameterServerActor>&, std::uint64_t) { return true; },
              [](credit_atom, std::uint64_t) {}, [](until_atom, std::uint64_t) {},
              [](fed_atom) { return std::uint64_t{0}; }, [](clock_atom) { return std::int64_t{0}; },
              [](stop_atom) { return true; },
              [](state_atom) { return WorkerStreamState{}; }};
    });
  }
  // The hosts of the workers "wait" answers with (one per worker), or nothing when it gives up first.
  std::optional<std::vector<std::string>> wait_for_start(caf::timespan timeout) {
    std::optional<std::vector<std::string>> started;
    self->request(coordinator, timeout, wait_atom::value)
        .receive(
            [&](const std::vector<DataWorkerActor>& workers, const std::vector<std::string>& hosts) {
              if (workers.size() == hosts.size()) started = hosts;
            },
            [](caf::error&) {});
    return started;
  }
  JoinRequest request(std::uint32_t index) {
    return JoinRequest{index, fake_worker(), 0xabc, 784, 10, 100, "test"};
  }
};

bool contains(const std::variant<std::uint32_t, std::string>& outcome, const std::string& text) {
  return std::holds_alternative<std::string>(outcome) &&
         std::get<std::string>(outcome).find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("coordinator refuses a worker speaking another protocol version") {
  Handshake h(1);
  CHECK(contains(h.hello(protocol_version + 1, ""), "protocol version"));
}

TEST_CASE("coordinator refuses a worker without the join token") {
  Handshake h(1, "secret");
  CHECK(contains(h.hello(protocol_version, "guess"), "wrong join token"));
  CHECK(h.hello(protocol_version, "secret") == std::variant<std::uint32_t, std::string>(0u));
}

TEST_CASE("coordinator refuses a worker whose model layout or data shape differs") {
  Handshake h(2);
  REQUIRE(h.hello(protocol_version, "") == std::variant<std::uint32_t, std::string>(0u));
  auto wrong_layout = h.request(0);
  wrong_layout.layout_hash = 0xdef;
  CHECK(h.join(wrong_layout).find("model layout") != std::string::npos);
  // The refused worker's place is free again.
  REQUIRE(h.hello(protocol_version, "") == std::variant<std::uint32_t, std::string>(0u));
  auto wrong_shape = h.request(0);
  wrong_shape.input_width = 64;
  CHECK(h.join(wrong_shape).find("data set shape 64 inputs") != std::string::npos);
}

TEST_CASE("coordinator hands out distinct worker indices and refuses one too many") {
  Handshake h(2);
  CHECK(h.hello(protocol_version, "") == std::variant<std::uint32_t, std::string>(0u));
  CHECK(h.hello(protocol_version, "") == std::variant<std::uint32_t, std::string>(1u));
  CHECK(contains(h.hello(protocol_version, ""), "already has its 2 workers"));
}

TEST_CASE("coordinator releases the workers once all have joined, then refuses late joiners") {
  Handshake h(2);
  h.hello(protocol_version, "");
  h.hello(protocol_version, "");
  CHECK(h.join(h.request(1)) == "joined");
  CHECK(h.join(h.request(0)) == "joined");
  CHECK(h.wait_for_start(std::chrono::seconds(5)) == std::vector<std::string>{"test", "test"});
  CHECK(contains(h.hello(protocol_version, ""), "training has already started"));
}

TEST_CASE("coordinator answers a later ask with the workers a run started with when the earlier asker gave up") {
  Handshake h(2);
  // The server asks in short slices: this ask gives up before anyone joins, but the coordinator still
  // holds its promise, and the run starts on it.
  REQUIRE_FALSE(h.wait_for_start(std::chrono::milliseconds(1)));
  h.hello(protocol_version, "");
  h.hello(protocol_version, "");
  REQUIRE(h.join(h.request(0)) == "joined");
  REQUIRE(h.join(h.request(1)) == "joined");
  CHECK(h.wait_for_start(std::chrono::seconds(5)) == std::vector<std::string>{"test", "test"});
}

TEST_CASE("coordinator tells workers where each shard process listens, and refuses a shard without an address") {
  Handshake h(1);
  caf::anon_send_exit(h.coordinator, caf::exit_reason::user_shutdown);
  CoordinatorSetup setup{"[training]\n", 1, "", 0xabc, 784, 10, nullptr};
  setup.remote_shards = 2;
  h.coordinator = spawn_coordinator(h.system, setup);
  // The coordinator only keeps the shard's handle; any actor stands in for a ParameterServer.
  auto stand_in = [&] {
    return caf::actor_cast<ParameterServerActor>(h.system.spawn([] { return caf::behavior{[](int) {}}; }));
  };
  auto addresses = [&] {
    std::pair<std::uint32_t, std::vector<ShardAddress>> outcome{0, {}};
    h.self->request(h.coordinator, std::chrono::seconds(5), shard_addresses_atom::value)
        .receive([&](std::uint32_t expected, std::vector<ShardAddress>& joined) { outcome = {expected, joined}; },
                 [&](caf::error&) { outcome = {999, {}}; });
    return outcome;
  };
  auto join_shard = [&](std::uint32_t shard, const ParameterServerActor& server, const std::string& host,
                        std::uint16_t port) {
    std::string outcome = "no answer";
    h.self->request(h.coordinator, std::chrono::seconds(5), join_shard_atom::value, shard, server,
                    std::uint64_t{0xabc}, host, port, std::string("host identity"))
        .receive([&](std::uint32_t) { outcome = "joined"; },
                 [&](caf::error& error) { outcome = error_text(h.system, error); });
    return outcome;
  };
  CHECK(addresses().first == 2);
  CHECK(addresses().second.empty());
  const auto first = stand_in();
  CHECK(join_shard(1, first, "", 4100).find("gave no address") != std::string::npos);
  CHECK(join_shard(1, first, "10.0.0.2", 0).find("gave no address") != std::string::npos);
  REQUIRE(join_shard(1, first, "10.0.0.2", 4100) == "joined");
  auto told = addresses();
  REQUIRE(told.second.size() == 1);
  CHECK(told.second[0].shard == 1);
  CHECK(told.second[0].host == "10.0.0.2");
  CHECK(told.second[0].port == 4100);
  CHECK(told.second[0].server == first);
  CHECK(told.second[0].host_identity == "host identity");
  const auto second = stand_in();
  REQUIRE(join_shard(2, second, "10.0.0.3", 4200) == "joined");
  told = addresses();
  REQUIRE(told.second.size() == 2);
  CHECK(told.second[1].shard == 2);
  CHECK(told.second[1].host == "10.0.0.3");
  for (const auto& server : {first, second}) caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
}
