// Standard output and error through a relay thread each, so that a reader who went away (a killed
// launch, a dropped ssh connection) never ends this process by SIGPIPE in the middle of saving a run.
#pragma once

namespace psgrad {

// From here on the process writes into pipes of its own; each relay copies what arrives to the real
// stream and drops it once nobody reads that. At exit the relays pass on what is left before the
// process ends. Call once, before other threads start writing.
void relay_output();

}  // namespace psgrad
