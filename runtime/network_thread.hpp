// Which actors CAF's network thread runs itself, and whether an actor runs there now.
#pragma once

#include "caf/actor_system.hpp"
#include "caf/io/middleman.hpp"
#include "caf/local_actor.hpp"
#include "caf/resumable.hpp"

namespace psgrad {

// With middleman.workers = 0, a message from another process is deserialized on CAF's network thread
// (the multiplexer). That thread runs a receiver whose subtype() is "function object" itself; any
// other it hands to a scheduler thread, waking it, and the answer then wakes the network thread again
// to send it. On cores that are computing, each wake-up pre-empts a worker. A scheduler thread ignores
// the hint, so messages between actors of one process, and local runs, stay where they were. An actor
// that asks for the network thread keeps its handlers short there: that thread also serves the
// process's sockets and heartbeats.
inline caf::resumable::subtype_t network_thread_subtype(bool on_network_thread) {
  return on_network_thread ? caf::resumable::function_object : caf::resumable::scheduled_actor;
}

// Whether `self` runs on its process's network thread at this moment.
inline bool running_on_network_thread(caf::local_actor& self) {
  auto& system = self.home_system();
  return system.has_middleman() && self.context() == &system.middleman().backend();
}

}  // namespace psgrad
