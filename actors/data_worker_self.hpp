// The DataWorker actor as it sees itself: its interface and the messages it sends to itself, so that the
// pieces of its steps (actors/worker_rows.hpp) may send requests on its behalf.
#pragma once

#include "caf/atom.hpp"
#include "caf/typed_actor.hpp"
#include "actors/interfaces.hpp"

namespace psgrad {

// To itself: time to check that no server or table shard owes an answer for too long.
using worker_watch_atom = caf::atom_constant<caf::atom("watch")>;
// To itself, on the network thread: carry on after a push.
using worker_continue_atom = caf::atom_constant<caf::atom("continue")>;
using DataWorkerSelf =
    DataWorkerActor::extend<caf::reacts_to<worker_watch_atom>, caf::reacts_to<worker_continue_atom>>;
using DataWorkerBase = DataWorkerSelf::base;

}  // namespace psgrad
