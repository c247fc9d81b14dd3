// The server group's answer handlers keep what they touch themselves: shards' answers that come after
// the group moved serve the group where it lives now.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/server_group.hpp"

using namespace psgrad;

namespace {

// A stand-in shard holding floats [begin, end) of the layout, whose values are their positions.
ParameterServerActor stand_in_shard(caf::actor_system& system, std::uint64_t begin, std::uint64_t end) {
  return caf::actor_cast<ParameterServerActor>(system.spawn([begin, end] {
    return caf::behavior{
        [begin, end](plan_atom) { return ShardPlan{begin, end, {}}; },
        [begin, end](weights_atom) {
          std::vector<float> slice;
          for (auto i = begin; i < end; ++i) slice.push_back(static_cast<float>(i));
          return Weights{1, 0xabc, FloatBuffer::copy_of(slice.data(), slice.size())};
        },
    };
  }));
}

struct TwoShards {
  ActorConfig config{2};
  caf::actor_system system{config};
  caf::scoped_actor observer{system};
  std::vector<ParameterServerActor> shards{stand_in_shard(system, 0, 2), stand_in_shard(system, 2, 4)};
  ~TwoShards() {
    for (const auto& shard : shards) caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
  }
};

// Where a group lives before and after it moves; the moved-from one stays, so that a handler still
// reaching through its old address would find it, not freed memory.
struct MovingGroup {
  std::optional<ServerGroup> before;
  std::optional<ServerGroup> after;
  const float* first_joined = nullptr;
};

ServerGroup::FailureHandler tell_failure(caf::event_based_actor* actor, const caf::actor& observer) {
  return [actor, observer](const std::string& who, const caf::error&) {
    actor->send(observer, who);
    actor->quit();
  };
}

}  // namespace

TEST_CASE("shard plans that arrive after their server group moved prepare the group it moved to") {
  TwoShards two;
  two.system.spawn([shards = two.shards, observer = caf::actor(two.observer)](caf::event_based_actor* actor) {
    auto group = std::make_shared<MovingGroup>();
    group->before.emplace(shards);
    group->before->prepare(
        actor, std::chrono::seconds(5),
        [actor, observer, group] {
          actor->send(observer, group->after->plans().size());
          actor->quit();
        },
        tell_failure(actor, observer));
    group->after.emplace(std::move(*group->before));  // the plans are on the way
    return caf::behavior{[](int) {}};
  });
  two.observer->receive([](std::size_t planned) { CHECK(planned == 2); },
                        [](const std::string& who) { FAIL("preparing failed at " << who); },
                        caf::after(std::chrono::seconds(10)) >> [] { FAIL("no answer"); });
}

TEST_CASE("shard slices that arrive after their server group moved are joined in that group's recycled buffer") {
  TwoShards two;
  two.system.spawn([shards = two.shards, observer = caf::actor(two.observer)](caf::event_based_actor* actor) {
    auto group = std::make_shared<MovingGroup>();
    group->before.emplace(shards);
    group->before->request(
        actor, std::chrono::seconds(5),
        [actor, observer, group](Weights first) {
          // Let go once this returns, the first joined buffer is free for the next join.
          group->first_joined = first.values.data();
          group->before->request(
              actor, std::chrono::seconds(5),
              [actor, observer, group](Weights second) {
                actor->send(observer, second.values.data() == group->first_joined,
                            std::vector<float>(second.values.data(), second.values.data() + second.values.size()));
                actor->quit();
              },
              tell_failure(actor, observer), weights_atom::value);
          group->after.emplace(std::move(*group->before));  // the second slices are on the way
        },
        tell_failure(actor, observer), weights_atom::value);
    return caf::behavior{[](int) {}};
  });
  two.observer->receive(
      [](bool same_buffer, const std::vector<float>& joined) {
        CHECK(same_buffer);
        CHECK(joined == std::vector<float>{0, 1, 2, 3});
      },
      [](const std::string& who) { FAIL("the request failed at " << who); },
      caf::after(std::chrono::seconds(10)) >> [] { FAIL("no answer"); });
}
