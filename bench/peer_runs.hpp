// Section 8: the same MLP trained by PyTorch (bench/peers/torch_mlp.py), run as a separate python3
// process, and psgrad's local async 2-worker rate divided by PyTorch's best rate.
#pragma once

#include <string>

#include "bench/bench_context.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

// What the rows say when the peer could not run; the same text goes into the JSON.
inline constexpr const char* kTorchSkipped = "skipped: python3-torch not installed";

// Needs context.baselines.local_async_2_workers for the ratio (section 3); without torch it records
// kTorchSkipped and returns normally.
void measure_peer_runs(BenchContext& context, Report& report);

// The interpreter to use: $PSGRAD_PYTHON if set, else Debian's /usr/bin/python3 (the one
// python3-torch installs into; a pyenv or venv python3 earlier on PATH does not see it), else python3.
std::string default_python();

}  // namespace psgrad::bench
