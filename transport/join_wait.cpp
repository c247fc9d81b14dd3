#include "transport/join_wait.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "caf/sec.hpp"
#include "runtime/error_text.hpp"

namespace psgrad {

Status wait_for_joins(caf::actor_system& system, const JoinWait& wait, const Awaited& awaited,
                      const std::function<caf::error(std::chrono::milliseconds)>& ask) {
  using Clock = std::chrono::steady_clock;
  const bool forever = wait.timeout.count() == 0;
  const auto deadline = Clock::now() + wait.timeout;
  for (;;) {
    auto slice = std::chrono::milliseconds(200);
    if (!forever)
      slice = std::min(slice, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    const caf::error error = ask(std::max(slice, std::chrono::milliseconds(1)));
    // A signal that came while the last of them joined still came before training: nothing is run.
    if (wait.interrupt && wait.interrupt->load() != 0)
      return Error{fmt::format("stopped by a signal while waiting for {}; nothing to save yet", awaited.what())};
    if (!error) return success();
    if (error != caf::sec::request_timeout)
      return Error{fmt::format("waiting for {}: {}", awaited.what(), error_text(system, error))};
    if (wait.lost)
      if (const auto lost = wait.lost(); !lost.empty()) return Error{lost};
    if (wait.joiners_gone)
      if (auto gone = wait.joiners_gone(); !gone.empty()) return Error{gone};
    if (!forever && Clock::now() >= deadline) return Error{awaited.gave_up()};
  }
}

}  // namespace psgrad
