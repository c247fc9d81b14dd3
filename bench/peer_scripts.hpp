// Running the Python peers of section 8 (bench/peers/*.py): each is a separate process, so that the
// bench neither links nor requires PyTorch, and prints its result as its last JSON line.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_context.hpp"

namespace psgrad::bench {

// What the rows say when the peers could not run; the same text goes into the JSON.
inline constexpr const char* kTorchSkipped = "skipped: python3-torch not installed";

struct PeerScriptRun {
  bool skipped = false;    // no interpreter, or torch not importable
  std::string reason;      // why, when skipped
  nlohmann::json result;   // the script's JSON line, when it ran
  double other_cores = 0;  // what other processes used meanwhile
};

// Runs bench/peers/<script> with the section's interpreter and these arguments; throws when the script
// fails (a skip is not a failure).
PeerScriptRun run_peer_script(const BenchContext& context, const std::string& script,
                              const std::vector<std::string>& arguments, std::chrono::seconds timeout);

// True when the script reported torch computing on the reference BLAS: its figures say more about
// that choice than about psgrad, so the section reports no ratio then.
bool on_reference_blas(const nlohmann::json& result);
// "torch 1.13.0, BLAS: OpenBLAS (SkylakeX)": the peer's torch, its BLAS and the kernel that BLAS chose for
// this CPU, for a row's note.
std::string torch_note(const nlohmann::json& result);

// The interpreter to use: $PSGRAD_PYTHON if set, else Debian's /usr/bin/python3 (the one
// python3-torch installs into; a pyenv or venv python3 earlier on PATH does not see it), else python3.
std::string default_python();

}  // namespace psgrad::bench
