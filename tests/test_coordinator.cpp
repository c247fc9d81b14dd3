// The join handshake: who the Coordinator admits, who it refuses, and when it releases the workers.
#include <doctest/doctest.h>

#include <memory>
#include <mutex>
#include <optional>
#include <variant>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/coordinator.hpp"
#include "runtime/error_text.hpp"

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
  explicit Handshake(CoordinatorSetup setup) { coordinator = spawn_coordinator(system, std::move(setup)); }
  static CoordinatorSetup elastic_setup(std::uint32_t workers) {
    CoordinatorSetup setup{"[training]\n", workers, "", 0xabc, 784, 10, nullptr};
    setup.elastic = true;
    return setup;
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
  // A worker process that says hello, joins when `joins`, and goes away: the offer's index, or the
  // refusal. Its actor's end reaches the coordinator before anything sent after this returns.
  std::variant<std::uint32_t, std::string> hello_and_go_away(bool joins) {
    caf::scoped_actor process{system};
    std::variant<std::uint32_t, std::string> outcome = std::string("no answer");
    process->request(coordinator, std::chrono::seconds(5), hello_atom::value, protocol_version, std::string(),
                     std::string("gone"))
        .receive([&](const JoinOffer& offer) { outcome = offer.worker_index; },
                 [&](caf::error& error) { outcome = error_text(system, error); });
    if (joins && std::holds_alternative<std::uint32_t>(outcome)) {
      auto joining = request(std::get<std::uint32_t>(outcome));
      joining.host = "gone";
      process->request(coordinator, std::chrono::seconds(5), join_atom::value, joining)
          .receive([](std::uint32_t) {}, [&](caf::error& error) { outcome = error_text(system, error); });
    }
    return outcome;
  }
  // Starts a run of `workers` that all joined from "test".
  void start(std::uint32_t workers) {
    for (std::uint32_t k = 0; k < workers; ++k) {
      REQUIRE(hello(protocol_version, "") == std::variant<std::uint32_t, std::string>(k));
      REQUIRE(join(request(k)) == "joined");
    }
    REQUIRE(wait_for_start(std::chrono::seconds(5)));
  }
};

// A training driver that only tells `observer` the index and host of each worker it is handed.
TrainingDriverActor observing_driver(caf::actor_system& system, const caf::actor& observer) {
  return caf::actor_cast<TrainingDriverActor>(system.spawn([observer] {
    return caf::behavior{[observer](add_worker_atom, const DataWorkerActor&, const std::string& host,
                                    std::uint32_t index) { caf::anon_send(observer, index, host); }};
  }));
}

// The next worker the driver was handed, or nothing within 5 s.
std::optional<std::pair<std::uint32_t, std::string>> next_handed(caf::scoped_actor& observer) {
  std::optional<std::pair<std::uint32_t, std::string>> handed;
  observer->receive([&](std::uint32_t index, const std::string& host) { handed.emplace(index, host); },
                    caf::after(std::chrono::seconds(5)) >> [] {});
  return handed;
}

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

TEST_CASE("coordinator frees the place of a process that said hello and went away after training started") {
  Handshake h(Handshake::elastic_setup(1));
  h.start(1);
  // The running job grows by one place for the newcomer, which goes away before it joins.
  REQUIRE(h.hello_and_go_away(false) == std::variant<std::uint32_t, std::string>(1u));
  // The next newcomer takes that place rather than a new one.
  CHECK(h.hello(protocol_version, "") == std::variant<std::uint32_t, std::string>(1u));
}

TEST_CASE("coordinator frees the place of a worker that joined the running job and went away before the driver "
          "was known") {
  Handshake h(Handshake::elastic_setup(1));
  h.start(1);
  REQUIRE(h.hello_and_go_away(true) == std::variant<std::uint32_t, std::string>(1u));
  caf::scoped_actor observer{h.system};
  const auto driver = observing_driver(h.system, observer);
  caf::anon_send(h.coordinator, driver_atom::value, driver);
  REQUIRE(h.hello(protocol_version, "") == std::variant<std::uint32_t, std::string>(1u));
  REQUIRE(h.join(h.request(1)) == "joined");
  // The driver hears only of the worker that stayed.
  CHECK(next_handed(observer) == std::make_pair(1u, std::string("test")));
  caf::anon_send_exit(driver, caf::exit_reason::user_shutdown);
}

TEST_CASE("coordinator hands the driver the workers that joined the running job before it was known") {
  Handshake h(Handshake::elastic_setup(1));
  h.start(1);
  REQUIRE(h.hello(protocol_version, "") == std::variant<std::uint32_t, std::string>(1u));
  REQUIRE(h.join(h.request(1)) == "joined");
  caf::scoped_actor observer{h.system};
  const auto driver = observing_driver(h.system, observer);
  caf::anon_send(h.coordinator, driver_atom::value, driver);
  REQUIRE(h.hello(protocol_version, "") == std::variant<std::uint32_t, std::string>(2u));
  REQUIRE(h.join(h.request(2)) == "joined");
  // Worker 0 came with the run's start; 1 waited for the driver; 2 is handed over as it joins.
  CHECK(next_handed(observer) == std::make_pair(1u, std::string("test")));
  CHECK(next_handed(observer) == std::make_pair(2u, std::string("test")));
  caf::anon_send_exit(driver, caf::exit_reason::user_shutdown);
}

TEST_CASE("coordinator counts a refused shard process as a refused shard, not a refused worker") {
  auto tally = std::make_shared<JoinTally>();
  struct Events {
    std::mutex mutex;
    std::vector<std::string> lines;
  };
  auto events = std::make_shared<Events>();
  CoordinatorSetup setup{"[training]\n", 1, "", 0xabc, 784, 10, [events](const std::string& line) {
                           const std::lock_guard<std::mutex> lock(events->mutex);
                           events->lines.push_back(line);
                         }};
  setup.remote_shards = 1;
  setup.tally = tally;
  Handshake h(setup);
  std::string refusal;
  h.self->request(h.coordinator, std::chrono::seconds(5), shard_hello_atom::value, protocol_version + 1,
                  std::string(), std::uint32_t{1})
      .receive([](const JoinOffer&) {}, [&](caf::error& error) { refusal = error_text(h.system, error); });
  REQUIRE(refusal.find("protocol version") != std::string::npos);
  CHECK(tally->shards_refused.load() == 1);
  CHECK(tally->refused.load() == 0);
  {
    const std::lock_guard<std::mutex> lock(events->mutex);
    REQUIRE(events->lines.size() == 1);
    CHECK(events->lines[0].find("refused shard process 1: protocol version") == 0);
  }
  // A worker's refusal is still a worker's.
  REQUIRE(contains(h.hello(protocol_version + 1, ""), "protocol version"));
  CHECK(tally->refused.load() == 1);
  CHECK(tally->shards_refused.load() == 1);
}
