// Turns a run's recorded spans into a Chrome trace file (--trace FILE.json on train and serve).
#pragma once

#include <string>

#include "actors/trace_recorder.hpp"
#include "model/result.hpp"

namespace psgrad {

// Times start at the earliest span; every process and row is named.
Status write_trace_file(const std::string& path, const TraceRecorder& trace);

}  // namespace psgrad
